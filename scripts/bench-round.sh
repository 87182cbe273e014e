#!/usr/bin/env bash
# bench-round.sh OUT [BUILD]: one round of the measurements behind the
# README's performance section, each as htp-bench's --json output in a file of
# OUT (made if missing). A round takes about 24 minutes on 2 cores; the README
# gives each figure as the range over three rounds at different times.
#
#   membw-{0,1}.json            read bandwidth, before and after the models
#   model-T-vV.json             the 1B shape, weights T, vocabulary V in
#                               {128256, 512}: -p 512 -n 128 --reps 3
#   model-T-v128256.json        (T = iq2_s, iq1_s, iq1_m: -p 32 -n 32)
#   model-q4_K-v128256-d4096.json  decode 4096 tokens deep: -p 0 -n 32 --depth 4096
#   matmul.json                 the 1B model's matmul shapes at n = 1, hot and cold
#   opcost.json                 the fixed cost of an op
#   stories.json, tiny.json     the tiny models: -p 16 -n 256 --reps 5
#
# The generated models go to $HTP_BENCH_MODELS (default BUILD/bench-models);
# they are written once and reused. Nothing else may run on the machine
# during a round: both backends share its cores.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 OUT [BUILD]" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
out=$1
build=${2:-$top/build}
bench=$build/bin/htp-bench
gen=$build/bin/htp-model
models=${HTP_BENCH_MODELS:-$build/bench-models}
stories=$top/../shared/models/stories260K.gguf
[ -x "$bench" ] && [ -x "$gen" ] || { echo "$0: no $bench or $gen (make build)" >&2; exit 1; }
mkdir -p "$out" "$models"

model_file() { # TYPE VOCAB: the path of the 1B-shaped model, written if missing
    local f=$models/1b-$1-v$2.gguf
    [ -f "$f" ] || "$gen" --preset 1b --type "$1" --n-vocab "$2" -o "$f" >&2
    echo "$f"
}

run() { # NAME CMD...: CMD's stdout into OUT/NAME.json, with the time it took
    local name=$1 t0
    shift
    t0=$(date +%s)
    "$@" > "$out/$name.json"
    echo "$(date -u +%H:%M:%S) $name $(($(date +%s) - t0)) s" >&2
}

date -u +%FT%TZ > "$out/started"
run membw-0 "$bench" membw --json
for t in f16 q8_0 q4_0 q4_K q5_K q6_K mxfp4; do
    for v in 128256 512; do
        run "model-$t-v$v" "$bench" model -m "$(model_file "$t" "$v")" -p 512 -n 128 --reps 3 --json
    done
done
for t in iq2_s iq1_s iq1_m; do
    run "model-$t-v128256" "$bench" model -m "$(model_file "$t" 128256)" -p 32 -n 32 --reps 3 --json
done
run model-q4_K-v128256-d4096 "$bench" model -m "$(model_file q4_K 128256)" -p 0 -n 32 --depth 4096 --reps 3 --json
run membw-1 "$bench" membw --json
run matmul "$bench" matmul --model 1b --types f16,q8_0,q4_0,q4_K,q5_K,q6_K,mxfp4 -n 1 --cache both --reps 5 --json
run opcost "$bench" opcost --json
if [ -f "$stories" ]; then
    run stories "$bench" model -m "$stories" -p 16 -n 256 --reps 5 --json
else
    echo "$0: no $stories: stories260K not measured" >&2
fi
run tiny "$bench" model --preset tiny --type q4_0 -p 16 -n 256 --reps 5 --json
date -u +%FT%TZ > "$out/ended"

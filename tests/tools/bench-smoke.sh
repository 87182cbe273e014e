#!/bin/sh
# bench-smoke.sh BIN_DIR WORK_DIR: every htp-bench mode runs to the end on a
# tiny problem and prints its JSON with the fields the README's tables are
# made from. No timing is judged: speed is what the benchmarks measure, on a
# quiet machine, not what a test asserts.
set -eu
bin=$1
work=$2
mkdir -p "$work"

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# has OUTPUT KEY...: each "KEY": is in OUTPUT and not followed by null.
has() {
    out=$1
    shift
    for key in "$@"; do
        printf '%s' "$out" | grep -q "\"$key\": [^n]" || fail "no value for \"$key\" in: $out"
    done
}

model="$work/bench-tiny-q4_0.gguf"
"$bin/htp-model" --preset tiny --type q4_0 -q -o "$model" || fail "htp-model"

out=$("$bin/htp-bench" model -m "$model" -p 8 -n 4 --reps 2 --json) || fail "htp-bench model"
has "$out" pp_tps tg_tps pp tg membw_gbps tg_membw_fraction_htp tg_membw_fraction_best_htp backend_fraction \
    ops_per_token read_ceiling_gbps tg_ceiling_fraction_htp tg_ceiling_fraction_cpu

# Decode deep in a filled KV cache: both sides, the depth in the JSON.
out=$("$bin/htp-bench" model -m "$model" -p 0 -n 4 --depth 40 --reps 2 --json) || fail "htp-bench model --depth"
has "$out" tg_tps tg
printf '%s' "$out" | grep -q '"depth": 40,' || fail "model --depth: no depth in: $out"

out=$("$bin/htp-bench" matmul -m 64 -k 256 -n 1,8 --types f16,q8_0,q4_0,q4_K --reps 2 --json) ||
    fail "htp-bench matmul"
for t in f16 q8_0 q4_0 q4_K; do
    printf '%s' "$out" | grep -q "\"type\": \"$t\", [^}]*\"n\": 8, \"cache\": \"hot\", \"htp_us\": [0-9][^}]*\"ratio\": [0-9][^}]*\"pair_ratio\": [0-9]" ||
        fail "matmul $t n=8 missing: $out"
done
# A model's shapes, weights hot and cold (copies rotated through 96 MiB).
out=$("$bin/htp-bench" matmul --model tiny --types q4_0 --cache both --reps 1 --json) || fail "htp-bench matmul --model"
for shape in '"m": 256, "k": 256' '"m": 768, "k": 256' '"m": 256, "k": 768' '"m": 512, "k": 256'; do
    for cache in hot cold; do
        printf '%s' "$out" | grep -q "$shape, [^}]*\"cache\": \"$cache\", \"htp_us\": [0-9]" ||
            fail "matmul --model tiny: $shape $cache missing: $out"
    done
done

out=$("$bin/htp-bench" opcost -N 16 --reps 2 --json) || fail "htp-bench opcost"
has "$out" htp_us_per_op cpu_us_per_op htp_graph1_us npu_first_op_us npu_other_op_us
printf '%s' "$out" | grep -q '"op": "mul_mat 64x64 q4_0"' || fail "opcost: no mul_mat row: $out"
# The timings run without the profiler; the NPU's per-op times come from the profiled pass.
printf '%s' "$out" | grep -q '"profiler_in_timings": 0' || fail "opcost: timings with the profiler: $out"
printf '%s' "$out" | grep -q '"npu_first_op_us": [0-9]' || fail "opcost: no NPU times from the profiled pass: $out"
# An x86 NPU's ops carry time-stamp-counter cycles: their times have sub-microsecond resolution.
want_from='"npu_op_times_from": "(cycles|usec)"'
[ "$(uname -m)" = x86_64 ] && [ -z "${GGML_HEXAGON_NPU_EXEC:-}" ] && want_from='"npu_op_times_from": "cycles"'
printf '%s' "$out" | grep -Eq "$want_from" || fail "opcost: NPU op times not from $want_from: $out"

out=$("$bin/htp-bench" fa --kv 128 --layers 2 --types f16,q8_0 --reps 2 --json) || fail "htp-bench fa"
for t in f16 q8_0; do
    printf '%s' "$out" | grep -q "\"type\": \"$t\", \"kv\": 128, \"htp_us\": [0-9][^}]*\"ratio\": [0-9]" ||
        fail "fa $t missing: $out"
done

out=$("$bin/htp-bench" membw --mib 16 --reps 1 --json) || fail "htp-bench membw"
has "$out" read_gbps

out=$("$bin/htp-bench" rtt --iters 20 --json) || fail "htp-bench rtt"
has "$out" median_us p99_us

# Bad input: a clear error and a non-zero exit, not a crash.
if "$bin/htp-bench" model -m "$work/missing.gguf" -n 1 >/dev/null 2>&1; then
    fail "htp-bench model accepted a missing model file"
fi
if "$bin/htp-bench" model -m "$model" --depth -1 >/dev/null 2>&1; then
    fail "htp-bench model accepted --depth -1"
fi
if "$bin/htp-bench" matmul -n 0 >/dev/null 2>&1; then
    fail "htp-bench matmul accepted -n 0"
fi
if "$bin/htp-bench" matmul --model nosuch >/dev/null 2>&1; then
    fail "htp-bench matmul accepted an unknown --model"
fi
if "$bin/htp-bench" fa --heads 3 --kv-heads 2 >/dev/null 2>&1; then
    fail "htp-bench fa accepted 3 heads over 2 KV heads"
fi
if "$bin/htp-bench" opcost -N 1 >/dev/null 2>&1; then
    fail "htp-bench opcost accepted -N 1"
fi
echo "bench smoke: all modes ran"

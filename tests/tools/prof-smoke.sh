#!/bin/sh
# prof-smoke.sh BIN_DIR WORK_DIR MODE: the profiler end to end on htp-run's
# default model, 4 tokens.
#   trace  GGML_HEXAGON_PROFILE=3 with GGML_HTP_TRACE: the file parses (htp-prof's
#          reader), holds op spans of at least two NPU threads and host spans
#          (htp-prof --check), htp-prof prints the per-family summary and writes
#          an SVG timeline
#   pmu    GGML_HEXAGON_PROFILE=2: per-op counters on every profile-op line, or,
#          where this machine has none, the one-line fallback and mode 1's lines
set -eu
bin=$1
work=$2
mode=$3
mkdir -p "$work"

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

case "$mode" in
trace)
    json="$work/trace.json"
    svg="$work/trace.svg"
    rm -f "$json" "$svg"
    GGML_HEXAGON_PROFILE=3 GGML_HTP_TRACE="$json" "$bin/htp-run" -n 4 >"$work/run.log" 2>&1 ||
        fail "htp-run: $(tail -5 "$work/run.log")"
    [ -s "$json" ] || fail "no trace written"
    out=$("$bin/htp-prof" --check -o "$svg" "$json") || fail "htp-prof --check: $out"
    echo "$out"
    for want in "NPU ops" "MUL_MAT" "GFLOPS" "host spans" "graph_compute" "translate" "push" "flush_wait"; do
        printf '%s' "$out" | grep -q "$want" || fail "summary lacks \"$want\""
    done
    head -c 5 "$svg" | grep -q '<svg' || fail "$svg is not an SVG"
    tail -c 8 "$svg" | grep -q '</svg>' || fail "$svg is not closed"
    grep -q 'NPU worker 1' "$svg" || fail "no lane for NPU worker 1 in $svg"
    # A file cut short is refused, not half read.
    head -c 2000 "$json" >"$work/cut.json"
    if "$bin/htp-prof" "$work/cut.json" >/dev/null 2>&1; then
        fail "htp-prof accepted a truncated file"
    fi
    ;;
pmu)
    GGML_HEXAGON_PROFILE=2 "$bin/htp-run" -n 4 -v >"$work/pmu.log" 2>&1 || fail "htp-run: $(tail -5 "$work/pmu.log")"
    ops=$(grep -c 'profile-op #' "$work/pmu.log" || true)
    [ "$ops" -gt 0 ] || fail "no profile-op lines"
    counted=$(grep 'profile-op #' "$work/pmu.log" | grep -c ' pmu [a-z-]*=[0-9]' || true)
    fallback=$(grep -c 'PMU counters not available' "$work/pmu.log" || true)
    grep 'PMU counters' "$work/pmu.log" || true
    grep -m 3 'profile-op #' "$work/pmu.log"
    if grep -q 'mode 2 runs as 1' "$work/pmu.log"; then
        [ "$counted" -eq 0 ] || fail "mode 1 fallback, yet counters printed"
    else
        [ "$counted" -eq "$ops" ] || fail "$counted of $ops profile-op lines carry counters"
        [ "$fallback" -le 1 ] || fail "the fallback was said $fallback times, not once"
        # A hardware PMU: instructions and cycles count; none: task-clock does.
        if [ "$fallback" -eq 1 ]; then
            grep 'profile-op #' "$work/pmu.log" | grep -q 'task-clock-ns=[1-9]' || fail "task-clock never counted"
        else
            grep 'profile-op #' "$work/pmu.log" | grep -q 'instructions=[1-9]' || fail "instructions never counted"
        fi
    fi
    ;;
*)
    fail "mode $mode"
    ;;
esac
echo "prof-smoke $mode: ok"

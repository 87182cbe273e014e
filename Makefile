# ggml-htp: the two commands are `make run` and `make test`; everything they
# need (the pinned ggml/llama sources, the build) is made on the way.

BUILD      ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
HEX_BUILD  ?= build-hexagon
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=
# With ccache on the machine (.ci/run installs it), the three x86 trees share
# the dependency's objects: ggml and llama compile with the same flags in
# each (the sanitizers are for our code), so only the first tree builds them.
CCACHE     := $(shell command -v ccache 2>/dev/null)
LAUNCHER   := $(if $(CCACHE),-DCMAKE_C_COMPILER_LAUNCHER=$(CCACHE) -DCMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE))

.PHONY: all deps build run test asan tsan hexagon hexagon-if-possible clean distclean

all: build

deps:
	@scripts/fetch-deps.sh

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(LAUNCHER) $(CMAKE_ARGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/bin/htp-run
	@echo "A real model: $(BUILD)/bin/htp-run -m FILE.gguf (e.g. ../shared/models/stories260K.gguf; README, 'Running a real model')"

test: build hexagon-if-possible
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The NPU built for Hexagon (v67, HVX 128B) with clang and our freestanding
# runtime: $(HEX_BUILD)/bin/htp-npu, run under qemu-hexagon by the tests
# labelled "hexagon" (ctest -L hexagon).
$(HEX_BUILD)/CMakeCache.txt:
	cmake -S . -B $(HEX_BUILD) -DCMAKE_TOOLCHAIN_FILE=cmake/hexagon-toolchain.cmake -DHTP_NPU_ONLY=ON \
	      -DCMAKE_BUILD_TYPE=Release

hexagon: $(HEX_BUILD)/CMakeCache.txt
	cmake --build $(HEX_BUILD) -j $(JOBS)

# make test builds it when the tools are there; the hexagon tests say why
# they skip when they are not.
hexagon-if-possible:
	@if scripts/hexagon-tools.sh; then $(MAKE) --no-print-directory hexagon; fi

# Our code with AddressSanitizer + UBSan in a second tree; the tests of this
# machine's programs (the Hexagon NPU's own run in make test).
$(ASAN_BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Release -DHTP_SANITIZE=ON $(LAUNCHER) $(CMAKE_ARGS)

asan: deps $(ASAN_BUILD)/CMakeCache.txt
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j $(JOBS) -LE hexagon

# Our code with ThreadSanitizer in a third tree: the tests of this machine's
# programs (the Hexagon NPU's run under qemu, which TSan cannot see into).
# tests/tsan.supp names the races TSan reports but that are not ours.
$(TSAN_BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=Release -DHTP_TSAN=ON $(LAUNCHER) $(CMAKE_ARGS)

tsan: deps $(TSAN_BUILD)/CMakeCache.txt
	cmake --build $(TSAN_BUILD) -j $(JOBS)
	cd $(TSAN_BUILD) && TSAN_OPTIONS="halt_on_error=1 exitcode=66 history_size=7 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/tsan.supp" \
	    ctest --output-on-failure -j $(JOBS) -LE hexagon

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(HEX_BUILD)

distclean: clean
	rm -rf deps models

# ---------------------------------------------------------------------------
# make fuzz: the libFuzzer targets of tests/fuzz in their own tree
# ($(FUZZ_BUILD), clang, ASan + UBSan), each run for FUZZ_SECONDS from a
# scratch copy of its committed corpus (tests/fuzz/corpus/<target>, which so
# never grows). A crash, leak, timeout or out-of-memory fails the target; its
# input is kept as $(FUZZ_BUILD)/<target>-crash-* (or -leak-, -timeout-, ...)
# and the run's output in $(FUZZ_BUILD)/<target>.log.
# ---------------------------------------------------------------------------

FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60
# libFuzzer's seed: 0 draws one per run; .ci/run fixes it, so that CI
# replays the same mutations and a red run can be rerun.
FUZZ_SEED    ?= 0
FUZZ_TARGETS := fuzz-npu-batch fuzz-host-rsp fuzz-config fuzz-ctl

.PHONY: fuzz

$(FUZZ_BUILD)/CMakeCache.txt: | deps
	CC=clang cmake -S . -B $(FUZZ_BUILD) -DHTP_FUZZ=ON -DCMAKE_BUILD_TYPE=Release

fuzz: deps $(FUZZ_BUILD)/CMakeCache.txt
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target $(FUZZ_TARGETS)
	@failed=""; for t in $(FUZZ_TARGETS); do \
	    scratch=$(FUZZ_BUILD)/corpus/$$t; rm -rf $$scratch; mkdir -p $$scratch; \
	    cp tests/fuzz/corpus/$$t/* $$scratch/; \
	    echo "$$t: fuzzing for $(FUZZ_SECONDS) s (log: $(FUZZ_BUILD)/$$t.log)"; \
	    if $(FUZZ_BUILD)/bin/$$t $$scratch -max_total_time=$(FUZZ_SECONDS) -seed=$(FUZZ_SEED) -timeout=10 -rss_limit_mb=2048 \
	           -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/$$t- >$(FUZZ_BUILD)/$$t.log 2>&1; then \
	        grep -E '^#[0-9]+.*DONE|^stat::(number_of_executed_units|average_exec_per_sec)' $(FUZZ_BUILD)/$$t.log; \
	    else \
	        tail -n 40 $(FUZZ_BUILD)/$$t.log; failed="$$failed $$t"; \
	    fi; \
	done; \
	if [ -n "$$failed" ]; then echo "make fuzz: failed:$$failed"; exit 1; fi; echo "make fuzz: no crash, leak or timeout"

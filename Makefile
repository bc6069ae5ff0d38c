# tpuc: every target installs what it needs first (idempotently), then builds and runs.
#
#   make demo    compile a bundled exported model, run it on the CPU PJRT plugin and
#                print its distance from PyTorch's outputs
#   make test    every test: unit, integration (end-to-end on the CPU plugin), snapshot,
#                the op suite at the host's ISA and capped at AVX2, lit + FileCheck,
#                then fmt and clippy
#   make lint    cargo fmt --check and clippy -D warnings (also of the runtime-only build)
#   make setup   only the installs (LLVM/MLIR 22 from Debian, the CPU PJRT plugin, libtpu
#                for TPU compiles without a TPU)
#   make runtime-only   the runtime-only tpuc (run, generate, devices, bench, report, diverge; no MLIR/LLVM),
#                built in release into target/runtime-only/release/tpuc
#   make fuzz    coverage-guided fuzzing (libFuzzer, stable Rust) of the .pt2 reader, the
#                ExportedProgram JSON reader and the artifact reader, FUZZ_SECONDS each
#                (default 420); crashes land in target/fuzz/crashes. Not part of make test.
#   make bench   every corpus model: tpuc -O2 / -O0 against torchax's program for the same
#                .pt2 (run time, ops, XLA kernels, compile time); compile scaling to 100k
#                nodes and 1 GiB of weights; the runtime's per-call cost vs raw PJRT and
#                JAX; per-token decode latency vs PyTorch eager and torchax (testdata/decode). jax 0.12, torch, torchax in .deps/bench-venv (created on first use);
#                writes BENCH.md (about 15 minutes), then make bench-serve. Not part of make test.
#   make bench-serve   tpuc serve's tokens/s at 1-16 streams on the CPU plugin against
#                transformers' generate, and Llama-3.1-8B's serving program set compiled for
#                v5e:2x4 without a TPU (memory per program, estimated tokens/s); writes
#                BENCH-serve.md (about 20 minutes).
#   make coverage-serve   every causal-LM architecture through tpuc.llm's serving programs,
#                in PyTorch and compiled; writes COVERAGE-serve.md (about 40 minutes).
#   make check-identical BASE=<rev>   everything tpuc emits for testdata/ (about 9,000
#                compiles: every target, level, sharding strategy and option the tests use)
#                fingerprinted with BASE's tpuc (default HEAD~1, built in a worktree under
#                target/identical) and with this checkout's, and the listings diffed
#   make check-polymorphic   the shape-polymorphic StableHLO of testdata/dynamic refined
#                and run by jaxlib against PyTorch (bench venv; also run by make coverage)
#   make zoo     production-size decoders (testdata/zoo: Llama 3.1 8B/70B, Qwen3 8B,
#                30B-A3B, 235B-A22B, Mixtral 8x7B, Gemma 3 27B, DeepSeek-V2-Lite, GPT-OSS
#                20B) exported without weights on the meta device into target/zoo, each
#                prefill and decode program planned with `tpuc plan` for its TPU slice and
#                compiled by libtpu; writes BENCH-zoo.md (hours on 2 cores). Not part of
#                make test.
#   make zoo-traffic [BEFORE=<older tpuc>]   each zoo program compiled for its slice with
#                the plan BENCH-zoo.md names, and `tpuc report`'s HBM traffic, FLOPs and
#                roofline per device against its argument bytes and the model's own FLOPs
#                (scripts/zoo_traffic.py; with BEFORE, that tpuc's too); writes its section
#                of BENCH-zoo.md (about an hour on 2 cores). Not part of make test.

SHELL := /bin/bash
REPO := $(abspath .)
export TPUC_PJRT_PLUGIN ?= $(REPO)/.deps/pjrt/pjrt_c_api_cpu_plugin.so
CARGO ?= cargo
TPUC := $(REPO)/target/debug/tpuc
LIT := /usr/lib/llvm-22/bin/lit
DEMO_MODEL ?= gpt2
RUNTIME_ONLY_DIR := target/runtime-only
BENCH_VENV := $(REPO)/.deps/bench-venv
TESTDATA_VENV := $(REPO)/.deps/testdata-venv

.PHONY: python python-venv python-test zoo zoo-traffic coverage-causal-lm coverage-serve bench-serve testdata-venv check-identical check-polymorphic fuzz setup demo test unit-test op-suite-avx2 lit lint lint-runtime-only build clean-demo runtime-only bench bench-venv coverage

setup:
	@bash scripts/setup_system.sh
	@bash scripts/setup_pjrt_cpu.sh
	@bash scripts/setup_libtpu.sh

build: setup
	$(CARGO) build -p tpuc-cli

demo: build
	@echo "== tpuc demo: testdata/models/$(DEMO_MODEL) (exported with torch.export, weights from the archive)"
	@mkdir -p target/demo
	$(TPUC) compile testdata/models/$(DEMO_MODEL)/exported.pt2 -o target/demo/$(DEMO_MODEL).tpuc
	$(TPUC) run target/demo/$(DEMO_MODEL).tpuc \
		$(foreach f,$(sort $(wildcard testdata/models/$(DEMO_MODEL)/inputs/*.npy)),--input $(f)) \
		$(foreach f,$(sort $(wildcard testdata/models/$(DEMO_MODEL)/expected/*.npy)),--expect $(f))

unit-test: setup
	$(CARGO) test --workspace

# The CPU plugin's XLA generates code for the host's instruction set (f16 arithmetic
# differs on hosts with AVX512-FP16), and it reads XLA_FLAGS when it loads. The
# unit-test run above covers the host's full ISA; this runs the op suite again capped
# at AVX2 (the flag comes last, so it wins over a user's own --xla_cpu_max_isa).
op-suite-avx2: setup
	XLA_FLAGS="$$XLA_FLAGS --xla_cpu_max_isa=AVX2" $(CARGO) test -p tpuc-cli --test cli op_suite_matches_pytorch

lit: build
	$(LIT) -sv lit_tests --param tpuc_bin_dir=$(REPO)/target/debug

test: unit-test op-suite-avx2 lit lint python-test
	@test -f .deps/libtpu/libtpu.so || test -n "$$TPUC_LIBTPU" || \
		echo "NOTE: no libtpu in .deps/libtpu (scripts/setup_libtpu.sh): the TPU compile tests printed SKIPPED"

# The Python package (python/): `make python` builds its wheel (release, stripped) into
# target/wheels and installs it into .deps/python-venv (created with maturin, pytest,
# torch, transformers and torchvision: python/setup_venv.sh); `make python-test` builds a
# dev-profile wheel (faster to build) and runs python/tests with pytest.
PYTHON_VENV := $(REPO)/.deps/python-venv

python-venv:
	@bash python/setup_venv.sh

python: setup python-venv
	rm -rf target/wheels/tpuc-*.whl
	$(PYTHON_VENV)/bin/maturin build --release -m python/Cargo.toml -o target/wheels --interpreter $(PYTHON_VENV)/bin/python
	$(PYTHON_VENV)/bin/python -m pip install --quiet --force-reinstall --no-deps target/wheels/tpuc-*.whl
	@ls -la target/wheels/tpuc-*.whl

python-test: setup python-venv
	rm -rf target/wheels-dev/tpuc-*.whl
	$(PYTHON_VENV)/bin/maturin build --profile dev -m python/Cargo.toml -o target/wheels-dev --interpreter $(PYTHON_VENV)/bin/python
	$(PYTHON_VENV)/bin/python -m pip install --quiet --force-reinstall --no-deps target/wheels-dev/tpuc-*.whl
	$(CARGO) build -p tpuc-cli --bin tpuc
	cd python/tests && TPUC_BIN=$(REPO)/target/debug/tpuc $(PYTHON_VENV)/bin/python -m pytest -q .

lint: setup lint-runtime-only
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

# The runtime-only tpuc compiles different code (no compiler commands): lint it too.
lint-runtime-only:
	$(CARGO) clippy -p tpuc-cli --no-default-features --all-targets --target-dir $(RUNTIME_ONLY_DIR) -- -D warnings

# Needs no LLVM/MLIR: this is what a TPU VM or a GPU box builds.
runtime-only:
	$(CARGO) build --release -p tpuc-cli --no-default-features --target-dir $(RUNTIME_ONLY_DIR)
	@bin=$(RUNTIME_ONLY_DIR)/release/tpuc; \
	if nm -C "$$bin" 2>/dev/null | grep -q -e ' mlir[A-Z]' -e ' llvm::' -e ' mlir::'; then \
		echo "error: $$bin contains MLIR/LLVM symbols" >&2; exit 1; fi; \
	echo "runtime-only tpuc: $$bin, $$(du -h "$$bin" | cut -f1) ($$(stat -c %s "$$bin") bytes), no MLIR/LLVM; links:"; \
	ldd "$$bin" | sed 's/^/  /'

bench-venv:
	@bash bench/setup_venv.sh

bench: build bench-venv python
	@mkdir -p target/bench
	$(TPUC) compile testdata/models/mlp/exported.pt2 -o target/bench/mlp.tpuc
	$(CARGO) build --release -p tpuc-bench -p tpuc-cli
	target/release/tpuc-bench --artifact mlp=target/bench/mlp.tpuc --tpuc target/release/tpuc \
		--python $(BENCH_VENV)/bin/python --python-package $(PYTHON_VENV)/bin/python \
		--out BENCH.md --command "make bench"
	$(MAKE) bench-serve

# Coverage: every causal-LM architecture of transformers (coverage-causal-lm, below),
# every Core ATen and as-exported op case (testdata/ops, testdata/ops/exported) and every
# model corpus (testdata/models, testdata/coverage/models), compiled, run on the CPU
# plugin and compared with PyTorch; writes COVERAGE-causal-lm.md, COVERAGE.md (which
# repeats the causal-LM summary), and COVERAGE-trn2.md for the Neuron target (what runs
# is each artifact's XLA HLO), to which jaxlib's reading of every corpus model's trn2 HLO
# is appended (scripts/check_neuron_hlo.py, bench venv). The op suites and the corpus on
# trn2 also run in `make test`.
coverage: setup bench-venv
	$(MAKE) coverage-causal-lm
	$(MAKE) coverage-serve
	$(CARGO) build --release -p tpuc-cli --bin tpuc --bin tpuc-coverage
	TPUC_CACHE_DIR=$(REPO)/target/coverage-cache target/release/tpuc-coverage --out COVERAGE.md --command "make coverage"
	TPUC_CACHE_DIR=$(REPO)/target/coverage-cache target/release/tpuc-coverage --target trn2 --out COVERAGE-trn2.md --command "make coverage"
	$(BENCH_VENV)/bin/python scripts/check_neuron_hlo.py --tpuc target/release/tpuc --report COVERAGE-trn2.md
	$(MAKE) check-polymorphic

# Every causal-LM architecture of transformers (testdata/causal_lm): exported again into
# target/causal_lm by generate.py (torch + transformers in .deps/testdata-venv; ~40 min
# on 2 cores, checked against the sha256 digests in family.json), then compiled, run and
# decoded by tpuc; writes COVERAGE-causal-lm.md.
coverage-causal-lm: setup testdata-venv
	$(CARGO) build --release -p tpuc-cli --bin tpuc
	$(TESTDATA_VENV)/bin/python testdata/causal_lm/generate.py --out target/causal_lm --resume --check
	TPUC_CACHE_DIR=$(REPO)/target/coverage-cache python3 scripts/causal_lm_coverage.py \
		--tpuc target/release/tpuc --programs target/causal_lm --out COVERAGE-causal-lm.md --command "make coverage"

# Every causal-LM architecture through tpuc.llm's serving programs (testdata/serve/
# coverage.py: in PyTorch against generate(), exported into target/serve_coverage; ~30 min),
# then compiled and run by `tpuc generate` (the server's engine); writes COVERAGE-serve.md.
coverage-serve: setup testdata-venv
	$(CARGO) build --release -p tpuc-cli --bin tpuc
	$(TESTDATA_VENV)/bin/python testdata/serve/coverage.py --export --out target/serve_coverage
	TPUC_CACHE_DIR=$(REPO)/target/coverage-cache python3 scripts/serve_coverage.py \
		--tpuc target/release/tpuc --programs target/serve_coverage --out COVERAGE-serve.md --command "make coverage-serve"

# The server (bench/serve_streams.py: tokens/s at 1-16 streams on the CPU plugin against
# transformers' generate) and Llama-3.1-8B's program set for v5e:2x4 compiled deviceless
# (bench/serve_program_set.py: memory per program, estimated tokens/s); writes BENCH-serve.md.
bench-serve: setup testdata-venv
	$(CARGO) build --release -p tpuc-cli --bin tpuc
	@mkdir -p target/bench
	$(TESTDATA_VENV)/bin/python bench/serve_program_set.py --tpuc target/release/tpuc --out target/bench/serve-8b > target/bench/serve-8b.json
	$(TESTDATA_VENV)/bin/python bench/serve_streams.py --tpuc target/release/tpuc --program-set target/bench/serve-8b.json --out BENCH-serve.md

zoo: setup testdata-venv
	$(CARGO) build --release -p tpuc-cli --bin tpuc
	$(TESTDATA_VENV)/bin/python testdata/zoo/generate.py --out target/zoo
	TPUC_CACHE_DIR=$(REPO)/target/zoo-cache python3 scripts/zoo_table.py --tpuc target/release/tpuc \
		--zoo target/zoo --out BENCH-zoo.md --rows target/zoo/rows --command "make zoo"

zoo-traffic: setup testdata-venv
	$(CARGO) build --release -p tpuc-cli --bin tpuc
	@for m in $$($(TESTDATA_VENV)/bin/python testdata/zoo/generate.py --list | cut -d' ' -f1); do \
		test -f target/zoo/$$m/meta.json || $(TESTDATA_VENV)/bin/python testdata/zoo/generate.py --out target/zoo $$m || exit 1; \
	done
	python3 scripts/zoo_traffic.py --tpuc target/release/tpuc --zoo target/zoo --bench BENCH-zoo.md \
		--rows target/zoo/traffic-rows $(if $(BEFORE),--before $(BEFORE)) --command "make zoo-traffic$(if $(BEFORE), BEFORE=...)"

testdata-venv:
	@test -x $(TESTDATA_VENV)/bin/python || python3 -m venv $(TESTDATA_VENV)
	@$(TESTDATA_VENV)/bin/python -c 'import torch, transformers' 2>/dev/null || \
		$(TESTDATA_VENV)/bin/python -m pip install --quiet --no-cache-dir -r testdata/requirements.txt

# The shape-polymorphic StableHLO of every testdata/dynamic program, refined for each
# call's sizes by jaxlib (bench venv), run by its CPU client and compared with PyTorch.
check-polymorphic: setup bench-venv
	$(CARGO) build --release -p tpuc-cli --bin tpuc
	$(BENCH_VENV)/bin/python scripts/check_polymorphic.py --tpuc target/release/tpuc --work target/polymorphic

# Fuzzing: libFuzzer through libfuzzer-sys, with the sanitizer-coverage instrumentation
# cargo-fuzz would add (stable rustc flags; no nightly, no sanitizer runtime). The
# crate lives in fuzz/ (its own workspace); inputs that once crashed a target are kept
# in fuzz/regressions/<target>/ and replayed by make test.
FUZZ_SECONDS ?= 420
FUZZ_TARGETS := pt2_archive exported_program_json artifact
FUZZ_HOST := $(shell rustc -vV | sed -n 's/^host: //p')
FUZZ_DIR := $(REPO)/target/fuzz
FUZZ_BIN := $(FUZZ_DIR)/$(FUZZ_HOST)/release
FUZZ_RUSTFLAGS := -Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
	-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
	-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks

fuzz: build
	cd fuzz && RUSTFLAGS="$(FUZZ_RUSTFLAGS)" $(CARGO) build --release --target $(FUZZ_HOST) --target-dir $(FUZZ_DIR)
	python3 fuzz/make_seeds.py $(FUZZ_DIR)/corpus $(TPUC)
	@mkdir -p $(FUZZ_DIR)/crashes
	@found=0; for t in $(FUZZ_TARGETS); do \
		echo "== fuzz $$t for $(FUZZ_SECONDS) s"; \
		dict=""; if [ $$t = exported_program_json ]; then dict="-dict=fuzz/exported_program.dict"; fi; \
		rm -f $(FUZZ_DIR)/crashes/$$t-*; mkdir -p fuzz/regressions/$$t; \
		$(FUZZ_BIN)/$$t $(FUZZ_DIR)/corpus/$$t fuzz/regressions/$$t $$dict \
			-max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=4096 \
			-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
			-artifact_prefix=$(FUZZ_DIR)/crashes/$$t- > $(FUZZ_DIR)/$$t.log 2>&1; \
		tail -n 1 $(FUZZ_DIR)/$$t.log; \
		grep -E '^#[0-9]+: cov' $(FUZZ_DIR)/$$t.log | tail -n 1; \
		if ls $(FUZZ_DIR)/crashes/$$t-* >/dev/null 2>&1; then \
			found=1; echo "fuzz $$t: failures (log: $(FUZZ_DIR)/$$t.log):"; ls $(FUZZ_DIR)/crashes/$$t-*; \
			grep -h -E 'panicked at|deadly signal|Timeout|out-of-memory' $(FUZZ_DIR)/$$t.log | sort | uniq -c; \
		fi; \
	done; \
	if [ $$found -ne 0 ]; then echo "make fuzz: failures found; add each input to fuzz/regressions/<target>/ once fixed"; exit 1; fi

# Byte-identity against another commit: a restructuring must not change what tpuc emits.
check-identical: build
	@base=$${BASE:-HEAD~1}; rev=$$(git rev-parse --short "$$base") || exit 1; \
	wt=target/identical/$$rev; \
	test -d "$$wt" || git worktree add --detach "$$wt" "$$rev" >/dev/null || exit 1; \
	(cd "$$wt" && CARGO_TARGET_DIR=$(REPO)/target/identical/build $(CARGO) build -p tpuc-cli --bin tpuc) || exit 1; \
	python3 scripts/check_identical.py --tpuc target/identical/build/debug/tpuc --out target/identical/$$rev.txt || exit 1; \
	python3 scripts/check_identical.py --tpuc $(TPUC) --out target/identical/current.txt || exit 1; \
	if diff target/identical/$$rev.txt target/identical/current.txt; then \
		echo "check-identical: every emitted program is byte-identical to $$rev's"; \
	else echo "check-identical: differences from $$rev above (< before, > now)"; exit 1; fi

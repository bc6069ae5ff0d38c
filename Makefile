# tpuc: every target installs what it needs first (idempotently), then builds and runs.
#
#   make demo    compile a bundled exported model, run it on the CPU PJRT plugin and
#                print its distance from PyTorch's outputs
#   make test    every test: unit, integration (end-to-end on the CPU plugin), snapshot,
#                lit + FileCheck, then fmt and clippy
#   make lint    cargo fmt --check and clippy -D warnings
#   make setup   only the installs (LLVM/MLIR 22 from Debian, the CPU PJRT plugin)

SHELL := /bin/bash
REPO := $(abspath .)
export TPUC_PJRT_PLUGIN ?= $(REPO)/.deps/pjrt/pjrt_c_api_cpu_plugin.so
CARGO ?= cargo
TPUC := $(REPO)/target/debug/tpuc
LIT := /usr/lib/llvm-22/bin/lit
DEMO_MODEL ?= gpt2

.PHONY: setup demo test unit-test lit lint build clean-demo

setup:
	@bash scripts/setup_system.sh
	@bash scripts/setup_pjrt_cpu.sh

build: setup
	$(CARGO) build -p tpuc-cli

demo: build
	@echo "== tpuc demo: testdata/models/$(DEMO_MODEL) (exported with torch.export, weights from the archive)"
	@mkdir -p target/demo
	$(TPUC) compile testdata/models/$(DEMO_MODEL)/exported.pt2 -o target/demo/$(DEMO_MODEL).tpuc
	$(TPUC) run target/demo/$(DEMO_MODEL).tpuc \
		$(foreach f,$(sort $(wildcard testdata/models/$(DEMO_MODEL)/inputs/*.npy)),--input $(f)) \
		$(foreach f,$(sort $(wildcard testdata/models/$(DEMO_MODEL)/expected/*.npy)),--expect $(f)) \
		2> >(grep -v -e cpu_device_count -e '^WARNING: All log' >&2)

unit-test: setup
	$(CARGO) test --workspace

lit: build
	$(LIT) -sv lit_tests --param tpuc_bin_dir=$(REPO)/target/debug

test: unit-test lit lint

lint: setup
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

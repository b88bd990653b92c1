# hwtest: `make run` tests every model on every target this machine has and writes
# the matrix under reports/; `make test` runs the project's own tests. Both set up
# what they need first (`make setup`), from the registries only, pinned and checked.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

STATE   := .hwtest
BIN     := $(STATE)/bin
HWTEST  := bin/hwtest
GINKGO  := $(BIN)/ginkgo

# ONNX Runtime native library, from the npm package that ships it (no install
# script: its postinstall downloads from elsewhere and fails offline).
ORT_NPM     := onnxruntime-node@1.30.0
ORT_MEMBER  := package/bin/napi-v6/linux/x64/libonnxruntime.so.1
ORT_SHA256  := ffb75a925ba05e47b235bb66e3e3911714a80b328a9c9425539feb204aa32a23
ORT_LIB     := $(STATE)/lib/libonnxruntime.so.1

GINKGO_VERSION := $(shell go list -m -f '{{.Version}}' github.com/onsi/ginkgo/v2)
GO_SOURCES     := $(shell find . -name '*.go' -not -path './$(STATE)/*' -not -path './generated/*') go.mod go.sum
UNIT_PKGS      = $(shell go list ./... | grep -v -e /generated/ -e /generated-)

# Benchmarks and test timing knobs (see runtime.DefaultBudget).
MEASURE_TIME ?= 1s
TEST_MEASURE_TIME ?= 100ms

.PHONY: help setup browsers onnx-testdata build generate verify test unit suites run conformance bench clean

help: ## list targets
	@grep -E '^[a-z]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-9s %s\n", $$1, $$2}'

setup: $(ORT_LIB) $(GINKGO) $(HWTEST) browsers onnx-testdata ## install ONNX Runtime, the ginkgo CLI, browsers, ONNX's test cases and the models (idempotent)
	@$(HWTEST) fetch >/dev/null

# Debian's libonnx-testdata 1.12.0 (the ONNX project's own node test cases, which the
# conformance suites under generated/conformance/ run): apt-get download + dpkg -x into
# $(STATE)/onnx-testdata/, sha256-checked; needs no root once the package lists have it.
onnx-testdata:
	@bash scripts/setup-onnx-testdata.sh $(STATE)

# Debian's chromium (wasm, WebGPU on SwiftShader), the Chromium in npm
# @sparticuz/chromium (WebNN), onnxruntime-web; pinned and integrity-checked.
browsers:
	@bash scripts/setup-browsers.sh $(STATE)

$(ORT_LIB):
	@echo "setup: $(ORT_NPM) → $@"
	@mkdir -p $(STATE)/cache/npm $(@D)
	@cd $(STATE)/cache/npm && [ -f onnxruntime-node-1.30.0.tgz ] || npm pack --silent $(ORT_NPM) >/dev/null
	@tar -xzf $(STATE)/cache/npm/onnxruntime-node-1.30.0.tgz -O $(ORT_MEMBER) > $@.tmp
	@echo "$(ORT_SHA256)  $@.tmp" | sha256sum --check --quiet - \
		|| { rm -f $@.tmp; echo "setup: $(ORT_MEMBER) from $(ORT_NPM) does not match sha256 $(ORT_SHA256)" >&2; exit 1; }
	@mv $@.tmp $@

# The ginkgo CLI at the version go.mod pins, so CLI and library never disagree.
$(GINKGO): go.mod
	@echo "setup: ginkgo $(GINKGO_VERSION) → $@"
	@go build -o $@ github.com/onsi/ginkgo/v2/ginkgo
	@touch $@

build: $(HWTEST) ## build bin/hwtest

$(HWTEST): $(GO_SOURCES)
	@go build -o $@ ./cmd/hwtest

generate: $(HWTEST) ## regenerate generated/ from the catalogs
	@$(HWTEST) generate

verify: $(HWTEST) ## check generated/ is up to date and every family × target has a template
	@$(HWTEST) verify

test: setup ## run every test: unit tests, hwtest verify, the generated suites (CPU, and browsers for one model per family)
	@unformatted=$$(gofmt -l $$(find . -name '*.go' -not -path './.hwtest/*' -not -path '*/testdata/*')); \
		[ -z "$$unformatted" ] || { echo "gofmt needed: $$unformatted" >&2; exit 1; }
	@go vet ./...
	@$(HWTEST) verify --quiet
	HWTEST_REQUIRE=1 go test -count=1 $(UNIT_PKGS)
	@$(MAKE) --no-print-directory suites

# Every model on the CPU; one model per family (tag smoke) on each browser target.
GENERATED_SUITE := generated/suite
SUITE_FILTER := hw:cpu || (tag:smoke && (hw:wasm || hw:webgpu || hw:webgpu-native || hw:webnn))

suites: setup ## run the generated model suites: every model on CPU, one per family on the browser targets (the conformance suites run in the unit tests and in make conformance)
	HWTEST_MEASURE_TIME=$(TEST_MEASURE_TIME) $(GINKGO) --no-color --keep-going --label-filter='$(SUITE_FILTER)' ./$(GENERATED_SUITE)

# make run is how one sees the matrix: its error and mismatch cells are findings the
# matrix reports (here onnxruntime-web's WebGPU targets get some models wrong), not a
# broken build, so it exits 0 for them and goes on to the conformance cases. CI that
# gates on failed cells runs `hwtest run` itself: exit 5 when a cell is error or
# mismatch. A run that could not run at all (exit 1) or was interrupted still stops make.
run: setup ## run every model on every target here; write reports/<run id>/matrix.{md,json}; then ONNX's own test cases on every target (make conformance)
	@HWTEST_MEASURE_TIME=$(MEASURE_TIME) $(HWTEST) run --allow-failures
	@$(HWTEST) conformance --no-generate

conformance: setup ## run ONNX's node test cases on every target here; store the operator × target scoreboard (hwtest report --ops)
	@$(HWTEST) conformance

bench: setup ## Go benchmarks, one package at a time so they do not share the cores: hwtest's latency against a bare ONNX Runtime loop, generator, runtime, history (a 300-cell store, the current matrix over 1,000 runs), hwtest report --html on 300 models × 14 targets × 50 runs, the fleet's queue (jobs/s of trivial jobs, 1 to 1,000 workers; heartbeats)
	go test -p 1 -run '^$$' -bench . -benchmem -timeout 60m $(UNIT_PKGS)

clean: ## remove build output and reports (keeps the downloaded $(STATE)/)
	rm -rf bin reports

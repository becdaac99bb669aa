# caskg — every entry point a person types. `make` lists them.
GO      ?= go
BIN     := bin
CASKG   := $(BIN)/caskg
SAMPLE  := $(BIN)/sample.skg
SHARED  ?= ../shared/data
GOFLAGS_BUILD := -trimpath

.DEFAULT_GOAL := help
.PHONY: help build demo test bench check fuzz eval-toollinkos clean

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  make %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## build bin/caskg
	@mkdir -p $(BIN)
	$(GO) build $(GOFLAGS_BUILD) -o $(CASKG) ./native/cmd/caskg

demo: build ## build the sample graph from graphs/sample and answer sample tasks
	$(CASKG) build graphs/sample -o $(SAMPLE)
	@echo
	$(CASKG) query $(SAMPLE) "heat some egg and put it in the garbage can" -k 6
	@echo
	$(CASKG) query $(SAMPLE) "Your task is to determine if a metal fork is electrically conductive" -k 6
	@echo
	$(CASKG) eval $(SAMPLE) --tasks graphs/sample-tasks.jsonl
	@echo
	$(CASKG) eval $(SAMPLE) --tasks graphs/sample-tasks.jsonl --no-graph

test: onnxruntime ## run every check CI runs: vet, formatting, unit, end-to-end and short fuzz tests
	@test -z "$$(gofmt -l graphs native wasm)" || { echo "gofmt needed:"; gofmt -l graphs native wasm; exit 1; }
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...
	$(MAKE) --no-print-directory fuzz FUZZTIME=20000x

# make test fuzzes by execution count, not by time: Go 1.26's fuzz coordinator can fail a healthy
# run with "context deadline exceeded" when a -fuzztime duration ends mid-execution (golang/go#75804,
# fixed in Go 1.27), which a loaded CI machine makes likely. A count has no deadline to race.
FUZZTIME ?= 30s
fuzz: ## run every fuzz target for FUZZTIME (default 30s; a count such as 20000x also works) each
	$(GO) test ./graphs -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s
	$(GO) test ./native/ingest -run '^$$' -fuzz '^FuzzParseSkillMD$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s
	$(GO) test ./native/ingest -run '^$$' -fuzz '^FuzzParseTools$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s
	$(GO) test ./wasm/engine -run '^$$' -fuzz '^FuzzQuery$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s
	$(GO) test ./wasm/engine -run '^$$' -fuzz '^FuzzQueryVector$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s
	$(GO) test ./native/embed -run '^$$' -fuzz '^FuzzTokenize$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s
	$(GO) test ./native/embed -run '^$$' -fuzz '^FuzzParseTokenizerJSON$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s
	$(GO) test ./native/embed -run '^$$' -fuzz '^FuzzParseVocab$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s
	$(GO) test ./wasm/internal/tinyjson -run '^$$' -fuzz '^FuzzDecoder$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s
	$(GO) test ./wasm/host -run '^$$' -fuzz '^FuzzWASM$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s

bench: ## print the benchmark tables (query latency, build time, decode)
	$(GO) test -run '^$$' -bench . -benchmem ./graphs ./wasm/engine ./native/build ./native/embed

check: test ## alias of test plus a build of every command
	$(GO) build ./...

eval-toollinkos: build ## the walking skeleton's bar on ToolLinkOS (needs ../shared/data)
	$(CASKG) build $(SHARED)/eval/toollinkos/tools.json -o $(BIN)/toollinkos.skg
	$(CASKG) eval $(BIN)/toollinkos.skg --tasks $(SHARED)/eval/toollinkos/tasks_test.jsonl --gold-edges $(SHARED)/eval/toollinkos/gold_edges.jsonl
	$(CASKG) eval $(BIN)/toollinkos.skg --tasks $(SHARED)/eval/toollinkos/tasks_test.jsonl --no-graph

clean: ## remove build outputs
	rm -rf $(BIN)

# ONNX Runtime for the onnx embedder and its tests: the shared library shipped inside the npm
# package onnxruntime-node (no install scripts run, nothing else downloaded).
ORT_VERSION := 1.24.1
ORT_DIR     := .cache/onnxruntime
ORT_LIB     := $(ORT_DIR)/libonnxruntime.so.1
ORT_ARCH    := $(if $(filter aarch64 arm64,$(shell uname -m)),arm64,x64)

.PHONY: onnxruntime
onnxruntime: $(ORT_LIB) ## install libonnxruntime.so.1 from npm onnxruntime-node 1.24.1 into .cache/onnxruntime

$(ORT_LIB):
	@rm -rf $(ORT_DIR)/npm && mkdir -p $(ORT_DIR)/npm
	cd $(ORT_DIR)/npm && npm pack --ignore-scripts --silent onnxruntime-node@$(ORT_VERSION) >/dev/null
	tar -xzf $(ORT_DIR)/npm/onnxruntime-node-$(ORT_VERSION).tgz -C $(ORT_DIR)/npm package/bin/napi-v6/linux/$(ORT_ARCH)/libonnxruntime.so.1
	mv $(ORT_DIR)/npm/package/bin/napi-v6/linux/$(ORT_ARCH)/libonnxruntime.so.1 $@.tmp && mv $@.tmp $@ && touch $@
	rm -rf $(ORT_DIR)/npm

# WebAssembly: one module, the WASI reactor of wasm/reactor, for browsers, workers, Node
# (wasm/js) and Go programs over wazero (wasm/host). The Go tests build their own copy.
WASM := $(BIN)/caskg.wasm

.PHONY: wasm bench-wasm
wasm: ## build bin/caskg.wasm, the module for browsers, workers, Node and wazero, and print its sizes
	@mkdir -p $(BIN)
	GOOS=wasip1 GOARCH=wasm $(GO) build -trimpath -ldflags="-s -w" -buildmode=c-shared -o $(WASM) ./wasm/reactor
	@node wasm/js/size.mjs $(WASM) 2>/dev/null || echo "$(WASM): $$(wc -c < $(WASM)) bytes raw, $$(gzip -9c $(WASM) | wc -c) gzip -9"

bench-wasm: wasm build ## query latency and load time: native vs wazero vs Node on ../shared/data/skills
	$(CASKG) build $(SHARED)/skills -o $(BIN)/skills.skg
	CASKG_BENCH_ARTIFACT=$(CURDIR)/$(BIN)/skills.skg $(GO) test -run '^$$' -bench 'Query|Load' -benchtime 3s ./wasm/host
	node wasm/js/bench.mjs $(WASM) $(BIN)/skills.skg $(SHARED)/eval/skillsbench/tasks.jsonl

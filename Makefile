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

# caskg serve embeds the playground, caskg.js and the module: build copies them into
# native/serve/assets (git-ignored but for its README) before compiling, so bin/caskg, or a
# go install after make build, serves from any folder with nothing beside it.
SERVE_ASSETS := native/serve/assets
build: wasm ## build bin/caskg, with the playground and the WebAssembly module embedded for caskg serve
	@mkdir -p $(BIN)
	@rm -rf $(SERVE_ASSETS)/playground $(SERVE_ASSETS)/js $(SERVE_ASSETS)/caskg.wasm
	@mkdir -p $(SERVE_ASSETS)/playground $(SERVE_ASSETS)/js
	cp playground/*.html playground/*.js playground/*.css $(SERVE_ASSETS)/playground/
	cp wasm/js/caskg.js wasm/js/caskg.d.ts $(SERVE_ASSETS)/js/
	cp $(WASM) $(SERVE_ASSETS)/caskg.wasm
	$(GO) build $(GOFLAGS_BUILD) -o $(CASKG) ./native/cmd/caskg

demo: build wasm ## build the sample graph, answer sample tasks, then serve the playground until Ctrl-C (DEMO_SERVE=0: don't serve)
	$(CASKG) build graphs/sample -o $(SAMPLE)
	@echo
	$(CASKG) query $(SAMPLE) "heat some egg and put it in the garbage can" -k 6
	@echo
	$(CASKG) query $(SAMPLE) "Your task is to determine if a metal fork is electrically conductive" -k 6
	@echo
	$(CASKG) eval $(SAMPLE) --tasks graphs/sample-tasks.jsonl
	@echo
	$(CASKG) eval $(SAMPLE) --tasks graphs/sample-tasks.jsonl --no-graph
	@echo
	$(if $(filter 0,$(DEMO_SERVE)),@echo "playground: skipped (DEMO_SERVE=0); make serve starts it",$(MAKE) --no-print-directory serve-only)

# make test runs go test -json through caskg-testsum (native/lab/cmd/caskg-testsum), which prints
# what a plain go test prints and keeps the skipped tests with their reasons; the count of skips
# and why comes last, after the fuzz runs. go test's own exit status decides.
test: onnxruntime workerd chromium mcp-npm tsc ## run every check CI runs: vet, formatting, unit, end-to-end and short fuzz tests; end with the skipped tests and why
	@test -z "$$(gofmt -l graphs native wasm playground)" || { echo "gofmt needed:"; gofmt -l graphs native wasm playground; exit 1; }
	$(GO) vet ./...
	@mkdir -p $(BIN) && rm -f $(BIN)/test-skips.txt
	{ $(GO) test -race -count=1 -json ./...; echo $$? > $(BIN)/go-test.status; } | $(GO) run ./native/lab/cmd/caskg-testsum -o $(BIN)/test-skips.txt
	@exit $$(cat $(BIN)/go-test.status)
	$(MAKE) --no-print-directory fuzz FUZZTIME=20000x FUZZTIME_WASM=1500x
	@cat $(BIN)/test-skips.txt

# make test fuzzes by execution count, not by time: Go 1.26's fuzz coordinator can fail a healthy
# run with "context deadline exceeded" when a -fuzztime duration ends mid-execution (golang/go#75804,
# fixed in Go 1.27), which a loaded CI machine makes likely. A count has no deadline to race.
FUZZTIME ?= 30s
# FuzzWASM runs each input through a wazero instance, 40 to 1,500 inputs a second: a smaller count.
FUZZTIME_WASM ?= $(FUZZTIME)
# make fuzz finds its targets itself: every Fuzz function `go test -list` reports, package by
# package, printed as "import/path FuzzName" lines (make fuzz-list). The go test of
# native/guards fails when they are not every func Fuzz in the tree's _test.go files (a target
# behind a build tag, say). A package whose tests do not build fails the list, with go's output.
FUZZ_LIST = out=$$($(GO) test -list '^Fuzz' ./... 2>&1) || { printf '%s\n' "$$out" >&2; exit 1; }; \
	printf '%s\n' "$$out" | awk '/^Fuzz/ { f[n++] = $$1; next } /^ok/ { for (i = 0; i < n; i++) print $$2, f[i] } { n = 0 }'

.PHONY: fuzz-list
fuzz-list: ## print the fuzz targets make fuzz runs, one "import/path FuzzName" a line
	@$(FUZZ_LIST)

fuzz: ## run every fuzz target (make fuzz-list) for FUZZTIME (default 30s; a count such as 20000x also works) each
	@targets=$$($(FUZZ_LIST)) || exit 1; set -- $$targets; n=$$(($$# / 2)); \
	while [ $$# -gt 0 ]; do \
		t='$(FUZZTIME)'; [ "$$2" = FuzzWASM ] && t='$(FUZZTIME_WASM)'; \
		echo "$(GO) test $$1 -run '^\$$' -fuzz '^$$2\$$' -fuzztime $$t -fuzzminimizetime 2s"; \
		$(GO) test $$1 -run '^$$' -fuzz "^$$2\$$" -fuzztime $$t -fuzzminimizetime 2s || exit 1; \
		shift 2; \
	done; echo "fuzz: $$n targets"

# bench: see "Benchmarks" below.

check: test ## alias of test plus a build of every command
	$(GO) build ./...

eval-toollinkos: build ## the walking skeleton's bar on ToolLinkOS (needs ../shared/data)
	$(CASKG) build $(SHARED)/eval/toollinkos/tools.json -o $(BIN)/toollinkos.skg
	$(CASKG) eval $(BIN)/toollinkos.skg --tasks $(SHARED)/eval/toollinkos/tasks_test.jsonl --gold-edges $(SHARED)/eval/toollinkos/gold_edges.jsonl
	$(CASKG) eval $(BIN)/toollinkos.skg --tasks $(SHARED)/eval/toollinkos/tasks_test.jsonl --no-graph

clean: ## remove build outputs (and the copies make build puts into native/serve/assets for embedding)
	rm -rf $(BIN)
	find native/serve/assets -mindepth 1 ! -name README.md -exec rm -rf {} +

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
# The pages holding size figures (<!-- size:NAME -->): make wasm, make worker and make bench-worker
# rewrite them from the build; caskg-sizes' TestDocFigures fails when a Markdown file holds a
# figure and is not listed here, or when a figure disagrees with the build.
SIZE_DOCS := docs/wasm-npm.md docs/worker.md docs/playground.md docs/evaluation.md docs/development.md docs/benchmarks.md
# The reactor runs on one thread: the classic garbage collector (GOEXPERIMENT=nogreenteagc) does as
# well there as Go 1.26's Green Tea and keeps the module 14 KB (gzip) smaller. Toolchains without
# the experiment build with their default. wasm/modbuild does the same for the tests.
WASM_GOEXPERIMENT := $(shell GOEXPERIMENT=nogreenteagc $(GO) env GOEXPERIMENT >/dev/null 2>&1 && echo GOEXPERIMENT=nogreenteagc)

.PHONY: wasm bench-wasm
wasm: ## build bin/caskg.wasm, the module for browsers, workers, Node and wazero; print its sizes and write them into the docs
	@mkdir -p $(BIN)
	GOOS=wasip1 GOARCH=wasm $(WASM_GOEXPERIMENT) $(GO) build -trimpath -ldflags="-s -w -buildid=" -buildmode=c-shared -o $(WASM) ./wasm/reactor
	@echo "$(WASM): its sizes, written into the size figures of $(SIZE_DOCS)"
	@$(GO) run ./native/lab/cmd/caskg-sizes module $(WASM) $(SIZE_DOCS)

bench-wasm: wasm build ## query latency and load time: native vs wazero vs Node on ../shared/data/skills
	$(CASKG) build $(SHARED)/skills -o $(BIN)/skills.skg
	CASKG_BENCH_ARTIFACT=$(CURDIR)/$(BIN)/skills.skg $(GO) test -run '^$$' -bench 'Query|Load|Start' -benchtime 3s ./wasm/host
	node wasm/js/bench.mjs $(WASM) $(BIN)/skills.skg $(SHARED)/eval/skillsbench/tasks.jsonl

# --- Edge worker (wasm/worker) ---------------------------------------------------------------
# The retrieval API on Cloudflare's runtime via syumai/workers. make worker builds the upload
# bundle into bin/worker; make worker-dev serves it with workerd from npm (offline, no account).
# wasm_exec.js is generated by syumai/workers' workers-assets-gen (the version go.mod pins);
# entry.mjs and workerd.capnp are ours. Deploying: wrangler.toml and docs/worker.md.
# The end-to-end test (go test ./wasm/worker) finds workerd through CASKG_WORKERD.
WORKERD_VERSION := 1.20261117.1
WORKERD_DIR     := .cache/workerd
WORKERD_ARCH    := $(if $(filter aarch64 arm64,$(shell uname -m)),arm64,64)
WORKERD         := $(WORKERD_DIR)/node_modules/@cloudflare/workerd-linux-$(WORKERD_ARCH)/bin/workerd
WORKER_DIR      := $(BIN)/worker
WORKER_ARTIFACT ?= $(SAMPLE)
WORKER_ADDR     ?= 127.0.0.1:8787
WORKER_MODE     ?= config
export CASKG_WORKERD := $(CURDIR)/$(WORKERD)

.PHONY: workerd worker worker-dev bench-worker
workerd: $(WORKERD) ## install workerd 1.20261117.1 from npm into .cache/workerd

# npm installs the platform's binary package as an optional dependency; no install script runs.
$(WORKERD):
	@rm -rf $(WORKERD_DIR) && mkdir -p $(WORKERD_DIR)
	npm install --prefix $(WORKERD_DIR) --no-save --no-audit --no-fund --ignore-scripts --loglevel=error workerd@$(WORKERD_VERSION)
	@test -x $@ && touch $@

worker: build ## build the edge worker in bin/worker (WORKER_ARTIFACT=x.skg, default the sample; the artifact a static asset, WORKER_EMBED=1 a data module); print the bundle's gzip size (on the sample, write it into docs/worker.md)
	@mkdir -p $(WORKER_DIR)/feedback
	$(if $(filter $(SAMPLE),$(WORKER_ARTIFACT)),$(CASKG) build graphs/sample -o $(SAMPLE))
	GOOS=js GOARCH=wasm $(WASM_GOEXPERIMENT) $(GO) build -trimpath -ldflags="-s -w" -o $(WORKER_DIR)/app.wasm ./wasm/worker
	$(GO) run github.com/syumai/workers/cmd/workers-assets-gen -mode go -o $(WORKER_DIR)/gen
	cp $(WORKER_DIR)/gen/wasm_exec.js wasm/worker/entry.mjs wasm/worker/workerd.capnp $(WORKER_DIR)/
	@rm -rf $(WORKER_DIR)/gen $(WORKER_DIR)/assets $(WORKER_DIR)/caskg.skg && mkdir -p $(WORKER_DIR)/assets
	@sum=$$(od -An -tx4 -j12 -N4 $(WORKER_ARTIFACT) | tr -d ' \n'); \
	if [ -n "$(WORKER_EMBED)" ]; then \
	  cp $(WORKER_ARTIFACT) $(WORKER_DIR)/caskg.skg && \
	  sed -i 's#(name = "artifact.mjs", esModule = embed "artifact.mjs"),#&\n  (name = "caskg.skg", data = embed "caskg.skg"),#' $(WORKER_DIR)/workerd.capnp && \
	  printf 'import data from "./caskg.skg";\nexport const asset = null;\nexport const embedded = data;\nexport const checksum = "crc32c:%s";\n' $$sum > $(WORKER_DIR)/artifact.mjs; \
	else \
	  cp $(WORKER_ARTIFACT) $(WORKER_DIR)/assets/caskg.skg && \
	  printf 'export const asset = "caskg.skg";\nexport const embedded = null;\nexport const checksum = "crc32c:%s";\n' $$sum > $(WORKER_DIR)/artifact.mjs; \
	fi; echo "$(abspath $(WORKER_ARTIFACT))" > $(WORKER_DIR)/artifact.src
	@$(GO) run ./wasm/worker/bundlesize -json $(BIN)/worker-sizes.json $(WORKER_DIR)
	$(if $(filter $(SAMPLE),$(WORKER_ARTIFACT)),$(if $(WORKER_EMBED),,@$(GO) run ./native/lab/cmd/caskg-sizes worker $(BIN)/worker-sizes.json $(SIZE_DOCS)))

# worker-dev serves what make worker last built, with the artifact it was given: it rebuilds
# only when no bundle is there (make worker WORKER_ARTIFACT=… first to serve another artifact).
worker-dev: workerd ## serve the edge worker with workerd on WORKER_ADDR (127.0.0.1:8787); WORKER_MODE=feedback keeps reports in bin/worker/feedback
	@test -f $(WORKER_DIR)/artifact.mjs || $(MAKE) --no-print-directory worker
	@echo "serving bin/worker with the artifact $$(cat $(WORKER_DIR)/artifact.src 2>/dev/null)"
	cd $(WORKER_DIR) && $(CURDIR)/$(WORKERD) serve workerd.capnp $(WORKER_MODE) --socket-addr http=$(WORKER_ADDR)

# bench-worker measures the worker under workerd beside caskg serve and caskg mcp --http, all
# of this checkout, on the 859-skill artifact: bundle sizes, cold start, p50/p99 of /v1/retrieve
# and MCP tools/call. It first builds the bundle with the artifact embedded, for docs/worker.md's
# library-* size figures.
bench-worker: workerd build ## the worker under workerd: bundle size, cold start, p50/p99 of /v1/retrieve and MCP tools/call, beside caskg serve and caskg mcp --http
	$(CASKG) build $(SHARED)/skills -o $(BIN)/skills.skg
	$(MAKE) --no-print-directory worker WORKER_ARTIFACT=$(BIN)/skills.skg WORKER_EMBED=1
	cp $(BIN)/worker-sizes.json $(BIN)/worker-sizes-embed.json
	$(GO) run ./native/lab/cmd/caskg-sizes library $(BIN)/skills.skg $(BIN)/worker-sizes-embed.json $(SIZE_DOCS)
	$(MAKE) --no-print-directory worker WORKER_ARTIFACT=$(BIN)/skills.skg
	CASKG_BENCH_ARTIFACT=$(CURDIR)/$(BIN)/skills.skg CASKG_BENCH_WORKER=$(CURDIR)/$(WORKER_DIR) \
	  $(GO) test -run '^$$' -bench 'Worker' -benchtime 1000x -count 1 ./wasm/worker

# --- npm package (wasm/js) --------------------------------------------------------------------
# make npm stages wasm/js's package.json, caskg.js and caskg.d.ts beside bin/caskg.wasm in
# bin/npm/package and packs them into bin/caskg-VERSION.tgz: no install scripts, no dependencies,
# the version engine.Version. go test ./wasm/js packs it the same way, installs the tarball
# offline into a scratch project and queries the sample from Node through `import "caskg"`.
NPM_DIR := $(BIN)/npm/package

.PHONY: npm
npm: wasm ## build the npm package bin/caskg-VERSION.tgz (caskg.js, caskg.d.ts, caskg.wasm) for Node, browsers and workers
	@rm -rf $(NPM_DIR) && mkdir -p $(NPM_DIR)
	cp wasm/js/package.json wasm/js/caskg.js wasm/js/caskg.d.ts $(WASM) $(NPM_DIR)/
	cd $(NPM_DIR) && npm pack --ignore-scripts --loglevel=warn --pack-destination $(CURDIR)/$(BIN)

# tsc checks that caskg.d.ts compiles without the DOM lib (tsc --lib es2022 --types node), as a
# Node or workerd project compiles it: exact versions from npm into .cache/tsc, no install
# scripts. go test ./wasm/js finds it through CASKG_TSC (make test sets it; without it the test
# is skipped only when .cache/tsc is absent).
TSC_VERSION       := 5.9.3
TYPES_NODE_VERSION := 22.20.5
TSC_DIR           := .cache/tsc
TSC_STAMP         := $(TSC_DIR)/.installed-$(TSC_VERSION)-$(TYPES_NODE_VERSION)
export CASKG_TSC  := $(CURDIR)/$(TSC_DIR)

.PHONY: tsc
tsc: $(TSC_STAMP) ## install TypeScript 5.9.3 and @types/node 22.20.5 (pinned, from npm) into .cache/tsc

$(TSC_STAMP):
	@rm -rf $(TSC_DIR) && mkdir -p $(TSC_DIR)
	npm install --prefix $(TSC_DIR) --ignore-scripts --save-exact --no-audit --no-fund --no-package-lock --loglevel=error typescript@$(TSC_VERSION) @types/node@$(TYPES_NODE_VERSION)
	@touch $@

# --- Verbose-API dev catalog -------------------------------------------------------------------
# make quality-api writes catalogs in the shape of a verbose REST-API collection (endpoint-style
# names, titles, result samples, multi-need queries) from Seal-Tools (its two halves by API, and
# 2,100 tools) and ToolLinkOS into bin/verboseapi (third-party text: never in the repository), and
# prints COMP@10 of reference BM25, the seeds (--no-graph) and the graph by ../shared/tools/score.py
# (make test checks the seeds against BM25 on the first four: TestSeedsNotBelowBM25). The
# two -short catalogs are the other held-out shape: operationId or MCP tool names, one need a query
# in at most 12 words. Deterministic; about 20 s on two cores.
VAPI_DIR := $(BIN)/verboseapi

.PHONY: quality-api
quality-api: ## score seeds against BM25 on the verbose-API dev catalogs made from Seal-Tools and ToolLinkOS (needs ../shared/data)
	$(GO) build -o $(BIN)/caskg ./native/cmd/caskg
	$(GO) build -o $(BIN)/caskg-lab ./native/lab/cmd/caskg-lab
	$(BIN)/caskg-lab verboseapi $(SHARED)/eval/sealtools/tools.json $(SHARED)/eval/sealtools/tasks.jsonl -o $(VAPI_DIR)/seal-half0 --tools 1800 --parts 2 --part 0
	$(BIN)/caskg-lab verboseapi $(SHARED)/eval/sealtools/tools.json $(SHARED)/eval/sealtools/tasks.jsonl -o $(VAPI_DIR)/seal-half1 --tools 1800 --parts 2 --part 1
	$(BIN)/caskg-lab verboseapi $(SHARED)/eval/sealtools/tools.json $(SHARED)/eval/sealtools/tasks.jsonl -o $(VAPI_DIR)/seal-2100 --tools 2000
	$(BIN)/caskg-lab verboseapi $(SHARED)/eval/toollinkos/tools.json $(SHARED)/eval/toollinkos/tasks.jsonl -o $(VAPI_DIR)/toollinkos
	$(BIN)/caskg-lab verboseapi $(SHARED)/eval/sealtools/tools.json $(SHARED)/eval/sealtools/tasks.jsonl -o $(VAPI_DIR)/seal-short --short --tools 2000
	$(BIN)/caskg-lab verboseapi $(SHARED)/eval/toollinkos/tools.json $(SHARED)/eval/toollinkos/tasks.jsonl -o $(VAPI_DIR)/toollinkos-short --short
	@for d in seal-half0 seal-half1 seal-2100 toollinkos seal-short toollinkos-short; do \
	  $(BIN)/caskg build $(VAPI_DIR)/$$d/tools.json -o $(VAPI_DIR)/$$d/graph.skg >/dev/null 2>&1 || exit 1; \
	  b=$$(python3 ../shared/tools/score.py --catalog $(VAPI_DIR)/$$d/tools.json --tasks $(VAPI_DIR)/$$d/tasks.jsonl --bm25 --label bm25); \
	  s=$$(python3 ../shared/tools/score.py --catalog $(VAPI_DIR)/$$d/tools.json --tasks $(VAPI_DIR)/$$d/tasks.jsonl --project $(BIN)/caskg $(VAPI_DIR)/$$d/graph.skg --project-args=--no-graph --label seeds); \
	  g=$$(python3 ../shared/tools/score.py --catalog $(VAPI_DIR)/$$d/tools.json --tasks $(VAPI_DIR)/$$d/tasks.jsonl --project $(BIN)/caskg $(VAPI_DIR)/$$d/graph.skg --label graph); \
	  echo "$$d $$b"; echo "$$d $$s"; echo "$$d $$g"; \
	done

# --- Evaluation --------------------------------------------------------------------------------
# make eval builds and scores every dev set (bin/caskg-lab compare, from native/lab/cmd/caskg-lab:
# one JSON result a set in bin/eval): the sample, SkillsBench, ToolLinkOS tasks_test, Seal-Tools and NESTFUL. Each set gets
# the seeds alone (no graph), the default build, default + traces where the set has training
# runs, publish-all, the per-channel seed ablation, and on the sets with gold edges the
# evaluation-only oracle prober at error rates EVAL_ORACLE. Then it writes docs/evaluation-results.md and
# rewrites the README between <!-- eval:begin --> and <!-- eval:end --> (caskg-lab report).
# Last, bin/caskg-learn (native/lab/cmd/caskg-learn) replays the training runs of ToolLinkOS,
# Seal-Tools and NESTFUL through POST /v1/feedback with caskg update after each batch, and writes
# the learning curves into docs/evaluation-results.md and the plot docs/evaluation-learning.svg. Then the figures
# of docs/ taken from it (<!-- fig:eval-NAME -->) are rewritten from the new record (native/guards
# TestRecordFigures -update, which otherwise fails when they differ).
# --role marks the sets the defaults were tuned on and the sets kept as checks. Deterministic
# except the build times (kept in their own section); two to four minutes on two cores.
EVAL_DIR    := $(BIN)/eval
EVAL_ORACLE := 0.1,0.3
TOOLLINK    := $(SHARED)/eval/toollinkos
SEALTOOLS   := $(SHARED)/eval/sealtools
NESTFUL     := $(SHARED)/eval/nestful
EVAL_SETS   := sample skillsbench toollinkos sealtools nestful

.PHONY: eval
eval: build ## build and score every dev set (no graph, default, + traces, publish-all, oracle) and the learning curves; write docs/evaluation-results.md, its plot and the README results (needs ../shared/data)
	@mkdir -p $(EVAL_DIR)
	$(GO) build $(GOFLAGS_BUILD) -o $(BIN)/caskg-lab ./native/lab/cmd/caskg-lab
	$(BIN)/caskg-lab compare graphs/sample --tasks graphs/sample-tasks.jsonl --role check \
		--title "Sample tasks (graphs/sample)" --label "sample" --json -o $(EVAL_DIR)/sample.json
	$(BIN)/caskg-lab compare $(SHARED)/skills --tasks $(SHARED)/eval/skillsbench/tasks.jsonl --role tuning \
		--title "SkillsBench (all 859 skills)" --label "SkillsBench" --json -o $(EVAL_DIR)/skillsbench.json
	$(BIN)/caskg-lab compare $(TOOLLINK)/tools.json --tasks $(TOOLLINK)/tasks_test.jsonl --gold-edges $(TOOLLINK)/gold_edges.jsonl \
		--traces $(TOOLLINK)/traces_train.jsonl --oracle-errors $(EVAL_ORACLE) --role tuning \
		--title "ToolLinkOS tasks_test (traces: traces_train)" --label "ToolLinkOS" --json -o $(EVAL_DIR)/toollinkos.json
	$(BIN)/caskg-lab compare $(SEALTOOLS)/tools.json --tasks $(SEALTOOLS)/tasks.jsonl --gold-edges $(SEALTOOLS)/gold_edges.jsonl \
		--traces $(SEALTOOLS)/traces_train.jsonl --oracle-errors $(EVAL_ORACLE) --role tuning \
		--title "Seal-Tools (4,076 tools)" --label "Seal-Tools" --json -o $(EVAL_DIR)/sealtools.json
	$(BIN)/caskg-lab compare $(NESTFUL)/tools.json --tasks $(NESTFUL)/tasks.jsonl --gold-edges $(NESTFUL)/gold_edges.jsonl \
		--traces $(NESTFUL)/traces_train.jsonl --oracle-errors $(EVAL_ORACLE) --role check \
		--title "NESTFUL (133 tools)" --label "NESTFUL" --json -o $(EVAL_DIR)/nestful.json
	$(BIN)/caskg-lab report $(EVAL_SETS:%=$(EVAL_DIR)/%.json) -o docs/evaluation-results.md --readme README.md
	$(GO) build $(GOFLAGS_BUILD) -o $(BIN)/caskg-learn ./native/lab/cmd/caskg-learn
	$(BIN)/caskg-learn -shared $(SHARED) -dir $(EVAL_DIR)/learn -results $(EVAL_DIR) -evaluation docs/evaluation-results.md -svg docs/evaluation-learning.svg
	$(GO) test ./native/guards -run TestRecordFigures -count=1 -update

# --- Browser playground and caskg serve ------------------------------------------------------
# make serve (and the end of make demo) serves the playground, caskg.js and the module embedded in
# bin/caskg (make build), the sample graph and its tasks on SERVE_ADDR until Ctrl-C; make demo
# DEMO_SERVE=0 stops before serving. The end-to-end test (go test ./playground) drives the page in headless Chromium,
# found through CASKG_CHROMIUM. make chromium uses CHROMIUM when it exists; otherwise it installs
# Debian's package, which needs root (npm has no browser of its own: its packages download one
# from elsewhere at install time). It never upgrades an installed package: it simulates the
# install first and stops, naming them, when any would be upgraded.
SERVE_ADDR ?= 127.0.0.1:8080
DEMO_SERVE ?= 1
CHROMIUM   ?= /usr/bin/chromium
export CASKG_CHROMIUM := $(CHROMIUM)

.PHONY: serve serve-only chromium
serve: build ## serve the playground and the /v1/retrieve API for bin/sample.skg on SERVE_ADDR (127.0.0.1:8080) until Ctrl-C
	@test -f $(SAMPLE) || $(CASKG) build graphs/sample -o $(SAMPLE)
	@$(MAKE) --no-print-directory serve-only

serve-only:
	$(CASKG) serve $(SAMPLE) --tasks graphs/sample-tasks.jsonl --addr $(SERVE_ADDR)

chromium: ## use CHROMIUM (default /usr/bin/chromium), or install Debian's chromium (apt-get, needs root; upgrades nothing installed)
	@test -x $(CHROMIUM) && exit 0; \
	if [ "$$(id -u)" != 0 ]; then \
	  echo "chromium: $(CHROMIUM) is missing; installing Debian's chromium needs root (sudo make chromium), or give your own: make test CHROMIUM=/path/to/chromium"; exit 1; \
	fi; \
	apt-get update -qq || exit 1; \
	plan=$$(apt-get install -s --no-upgrade chromium) || { printf '%s\n' "$$plan"; exit 1; }; \
	up=$$(printf '%s\n' "$$plan" | awk '/^Inst [^ ]+ \[/ {print $$2}'); \
	if [ -n "$$up" ]; then \
	  echo "chromium: installing it would upgrade installed packages: $$(echo $$up)"; \
	  echo "chromium: not done; install Chromium yourself, or: make test CHROMIUM=/path/to/chromium"; exit 1; \
	fi; \
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-upgrade chromium
	@test -x $(CHROMIUM) || { echo "chromium: $(CHROMIUM) is still missing; set CHROMIUM=/path/to/chromium"; exit 1; }

# --- Benchmarks -------------------------------------------------------------------------------
# make bench builds libraries of 1,000 to 100,000 skills grown from ../shared/data/skills by
# native/internal/lab/synth (each build in its own process: time, peak memory), times queries natively, over
# wazero and in Node, checks forward push and the semantic prefilter against exact computation,
# prints the tables and writes docs/benchmarks.md and the section of docs/evaluation.md between <!-- bench:begin -->
# and <!-- bench:end -->. It also runs caskg beside MiniSearch, Orama and FlexSearch in Node
# (wasm/js/bench-peers.mjs) on the real library and the 10,000 and 100,000 synthetic ones, and
# the memory of past tasks at scale (1,000 skills, 100,000 runs with task text: query cost, artifact
# growth, update against a full build; about 2 minutes, -memory=false skips it). It
# takes about 30 minutes on 2 cores; BENCHFLAGS=-reuse reuses the artifacts of an earlier run in
# bin/bench. Not part of make test.
BENCHFLAGS ?=
.PHONY: bench-go peers
bench: wasm peers bench-gateway ## build 1k-100k-skill libraries, time build and queries (native, wazero, Node, JS peers); write docs/benchmarks.md
	$(GO) build -o $(BIN)/caskg-bench ./native/lab/cmd/caskg-bench
	$(BIN)/caskg-bench -base $(SHARED)/skills -tasks $(SHARED)/eval/skillsbench/tasks.jsonl -wasm $(WASM) -dir $(BIN)/bench \
		-peers $(PEERS_DIR) $(BENCHFLAGS)
	$(MAKE) --no-print-directory bench-worker

# The JavaScript peers of make bench, exact versions from npm into .cache/peers (no install
# scripts run; nothing enters the repository). A stamp names the versions, so changing one
# reinstalls.
PEERS_DIR := .cache/peers
PEERS     := minisearch@7.2.0 @orama/orama@3.1.18 flexsearch@0.8.212
PEERS_STAMP := $(PEERS_DIR)/installed-$(shell echo '$(PEERS)' | cksum | cut -d' ' -f1)
peers: $(PEERS_STAMP) ## install the JS search libraries make bench compares with (pinned, from npm) into .cache/peers

$(PEERS_STAMP):
	@rm -rf $(PEERS_DIR) && mkdir -p $(PEERS_DIR)
	echo '{"private": true}' > $(PEERS_DIR)/package.json
	cd $(PEERS_DIR) && npm install --ignore-scripts --save-exact --no-audit --no-fund --no-package-lock $(PEERS)
	@touch $@

# make bench-gateway runs the gateway's Go benchmarks, each against a target: a call_tool through
# the gateway against the same call straight to catalog-server over stdio and HTTP (p50/p99 and
# what the gateway adds), search_tools on the 4,076 Seal-Tools tools in process over the first
# graph and lexically, and the learning loop's update-and-swap on ToolLinkOS as traces
# accumulate. caskg-bench gateway writes their tables into docs/benchmarks.md between
# <!-- gateway-bench:begin --> and <!-- gateway-bench:end -->, a section the rest of make bench
# keeps. Skips (and says so) without ../shared/data. About two minutes on 2 cores.
GW_BENCH_OUT := $(BIN)/bench-gateway.txt
.PHONY: bench-gateway
bench-gateway: ## time the gateway: proxied call overhead (stdio, HTTP), search_tools at 4,076 tools, update-and-swap; write its docs/benchmarks.md section
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/caskg-bench ./native/lab/cmd/caskg-bench
	$(GO) test -run '^$$' -bench 'ProxiedCall|SearchTools' -benchtime 3s -count 1 ./native/internal/gateway > $(GW_BENCH_OUT); \
		s=$$?; cat $(GW_BENCH_OUT); exit $$s
	$(GO) test -run '^$$' -bench 'UpdateSwap' -benchtime 3x -count 1 ./native/internal/gateway/learn > $(GW_BENCH_OUT).learn; \
		s=$$?; cat $(GW_BENCH_OUT).learn; exit $$s
	$(BIN)/caskg-bench gateway -o docs/benchmarks.md $(GW_BENCH_OUT) $(GW_BENCH_OUT).learn

bench-go: ## the Go micro-benchmarks: decode, engine queries and push, build, embedders
	$(GO) test -run '^$$' -bench . -benchmem ./graphs ./wasm/engine ./native/internal/builder ./native/internal/embed

# --- MCP interoperability: Node 22 and the official MCP packages from npm --------------------
# Tests of caskg's MCP fronts (caskg mcp --http, the gateway) drive them with the official
# TypeScript SDK client (native/internal/mcpnode), put them in front of the reference servers
# and run the MCP conformance suite, which needs Node >= 22: npm's node-linux-* package brings
# one into .cache/mcp-npm without touching the system's Node. Exact versions, no install
# scripts; a stamp names the versions, so changing one reinstalls. Go tests find them through
# CASKG_NODE22 and CASKG_MCP_NPM (the folder holding node_modules).
MCP_NODE_VERSION := 22.23.3
MCP_NODE_ARCH    := $(if $(filter aarch64 arm64,$(shell uname -m)),arm64,x64)
MCP_NPM_DIR      := .cache/mcp-npm
MCP_NPM_PKGS     := node-linux-$(MCP_NODE_ARCH)@$(MCP_NODE_VERSION) \
	@modelcontextprotocol/conformance@0.1.16 @modelcontextprotocol/sdk@1.32.2 \
	@modelcontextprotocol/server-everything@2026.8.31 @modelcontextprotocol/server-filesystem@2026.8.31
MCP_NPM_STAMP    := $(MCP_NPM_DIR)/installed-$(shell echo '$(MCP_NPM_PKGS)' | cksum | cut -d' ' -f1)
MCP_NODE         := $(MCP_NPM_DIR)/node_modules/node-linux-$(MCP_NODE_ARCH)/bin/node
export CASKG_NODE22  := $(abspath $(MCP_NODE))
export CASKG_MCP_NPM := $(abspath $(MCP_NPM_DIR))

.PHONY: mcp-npm
mcp-npm: $(MCP_NPM_STAMP) ## install Node 22, the MCP TypeScript SDK, conformance suite and reference servers (pinned, from npm) into .cache/mcp-npm

# The conformance suite's 32 server scenarios against caskg gateway --http in front of a
# server with the suite's fixtures (native/internal/cli/conformance_fixture_test.go), and its generic
# ones against caskg mcp --http. The scenarios a gateway cannot honour are skipped, each
# naming why (docs/gateway.md lists them).
.PHONY: conformance
conformance: mcp-npm ## run the MCP conformance suite's server scenarios against caskg gateway --http and caskg mcp --http
	$(GO) test -run 'TestGatewayConformance|TestMCPConformance' -count 1 -v ./native/internal/cli

$(MCP_NPM_STAMP):
	@rm -rf $(MCP_NPM_DIR) && mkdir -p $(MCP_NPM_DIR)
	echo '{"private": true}' > $(MCP_NPM_DIR)/package.json
	cd $(MCP_NPM_DIR) && npm install --ignore-scripts --save-exact --no-audit --no-fund --no-package-lock --loglevel=error $(MCP_NPM_PKGS)
	@$(MCP_NODE) --version >/dev/null && printf '%s\n' $(MCP_NPM_PKGS) > $@

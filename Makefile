# Two commands for a new user: `make demo` and `make test` (see README.md).
GO       ?= go
PLUGINS  := build/plugins
WASMENV  := GOOS=wasip1 GOARCH=wasm
# SDK is the plugin SDK's own module (hostabi/go.mod), required through a
# replace: `./...` stops at its go.mod, so commands name it by import path.
SDK      := github.com/rpengine/rpengine/hostabi/...
TESTFLAGS ?=

.PHONY: screenshots demo-stop release release-test monitoring-test plugin-kit bench-deps test-nova test-kube all build plugins rust-example test unit demo demo-ironic demo-vmware check bench fuzz clean deps chromium soak idle

all: build plugins

# STAMP puts the commit into every build (Go's VCS stamp is off here:
# -buildvcs=false); the version is cmd/engine/version.go's (docs/RELEASE.md).
COMMIT   := $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
MODIFIED := $(shell test -n "$$(git status --porcelain --untracked-files=no 2>/dev/null)" && echo true || echo false)
STAMP    := -ldflags "-X main.commit=$(COMMIT) -X main.modified=$(MODIFIED)"

build:
	$(GO) build $(STAMP) -o bin/engine ./cmd/engine

plugins: $(PLUGINS)/fake.wasm $(PLUGINS)/ironic.wasm $(PLUGINS)/vmware.wasm rust-example

# rust-example builds the Rust plugin when a rustc with the wasm32-wasi
# target is installed (make deps installs Debian's); otherwise it says so.
rust-example:
	@mkdir -p $(PLUGINS)
	scripts/rust/build.sh $(PLUGINS)/rust-example.wasm

$(PLUGINS)/%.wasm: FORCE
	@mkdir -p $(PLUGINS)
	$(WASMENV) $(GO) build -buildmode=c-shared -o $@ ./plugins/$*

FORCE:

# deps installs the real services the end-to-end tests run against
# (Debian packages; needs root or sudo). It does nothing when present.
deps:
	scripts/placement/install.sh
	scripts/ironic/install.sh
	scripts/chromium/install.sh
	scripts/etcd/install.sh
	scripts/keystone/install.sh
	scripts/rust/install.sh
	scripts/vcsim/install.sh
	scripts/nova/install.sh
	scripts/rabbitmq/install.sh
	scripts/release/install.sh

# chromium installs Debian's chromium for the status page's browser test
# (internal/ops; needs root or sudo). It does nothing when present.
chromium:
	scripts/chromium/install.sh

# test runs every test, the end-to-end ones against the real Placement and
# Ironic included. Set RPENGINE_REQUIRE_E2E=1 to fail instead of skip when
# the real services are missing (CI does).
test: deps build plugins
	RPENGINE_PLUGIN_DIR=$(CURDIR)/$(PLUGINS) RPENGINE_ENGINE_BIN=$(CURDIR)/bin/engine \
		$(GO) test -timeout 45m $(TESTFLAGS) ./... $(SDK)
	cd deploy/helm/tools && RPENGINE_PLUGIN_DIR=$(CURDIR)/$(PLUGINS) RPENGINE_ENGINE_BIN=$(CURDIR)/bin/engine $(GO) test -timeout 10m $(TESTFLAGS) ./...

# test-nova runs nova 26.2.2's own reporting path beside the engine (e2e
# TestNovaBeside and TestNovaEdges, docs/NOVA.md): about 15 minutes on 2 loaded cores.
test-nova: deps build plugins
	RPENGINE_NOVA_E2E=1 RPENGINE_PLUGIN_DIR=$(CURDIR)/$(PLUGINS) RPENGINE_ENGINE_BIN=$(CURDIR)/bin/engine \
		$(GO) test $(TESTFLAGS) -timeout 40m -run 'TestNova(Beside|Edges|Fleet|Observe)$$' ./e2e/

# test-kube runs the scale-out tests against a real kube-apiserver (built
# once into a cache by scripts/kube/install.sh, about 13 minutes cold):
# internal/coord's TestKube and e2e TestScaleOutKube* (docs/SCALEOUT.md).
test-kube: deps build plugins
	scripts/kube/install.sh
	RPENGINE_KUBE_E2E=1 RPENGINE_PLUGIN_DIR=$(CURDIR)/$(PLUGINS) RPENGINE_ENGINE_BIN=$(CURDIR)/bin/engine \
		$(GO) test $(TESTFLAGS) -timeout 40m -run 'TestKube$$|TestScaleOutKube' ./internal/coord/ ./e2e/

# screenshots regenerates docs/screenshots (the status page's node pages
# by headless Chromium, `engine explain` as text) against the real
# Placement: e2e TestScreenshots, which checks the values they show.
screenshots: deps chromium build plugins
	RPENGINE_SCREENSHOTS=$(CURDIR)/docs/screenshots RPENGINE_REQUIRE_E2E=1 RPENGINE_PLUGIN_DIR=$(CURDIR)/$(PLUGINS) \
		RPENGINE_ENGINE_BIN=$(CURDIR)/bin/engine $(GO) test -count=1 -run '^TestScreenshots$$' ./e2e/

# unit runs the fast tests only (no real services).
unit: plugins
	RPENGINE_PLUGIN_DIR=$(CURDIR)/$(PLUGINS) $(GO) test -short ./... $(SDK)

# demo starts its own Placement (or uses RPENGINE_PLACEMENT_URL's) and its
# status page on free ports; RPENGINE_DEMO_DIR (default .demo) runs a
# second one beside it.
demo: build plugins
	scripts/demo.sh

# demo-stop stops the daemon and the Placement that make demo left running
# (scripts/demo.sh stop-daemon stops only the daemon).
demo-stop:
	scripts/demo.sh stop

# demo-ironic runs the engine with the Ironic plugin against a local real
# Ironic (fake-hardware nodes) and Placement, both from Debian's packages.
demo-ironic: build plugins
	scripts/ironic/demo.sh

# demo-vmware runs the engine with the VMware plugin against govmomi's
# vCenter simulator (vcsim, 4 clusters, 32 hosts, 8 datastores) and a
# local real Placement.
demo-vmware: build plugins
	scripts/vcsim/demo.sh

# soak runs the engine through SOAK_CYCLES randomized cycles at SOAK_NODES
# nodes with faults injected, checks every invariant after every cycle and
# writes reports/SOAK.md; it fails on any violation. SOAK_SEED replays a history,
# SOAK_MODE=wasm drives the world through the fake plugin in Wasm.
SOAK_CYCLES ?= 10000
SOAK_NODES  ?= 1000
SOAK_SEED   ?= $(shell date +%s)
SOAK_MODE   ?= memory
# A shorter run then drives the same history through the fake plugin in
# Wasm (reports/SOAK-wasm.md), so the plugin host's path is soaked too.
SOAK_WASM_CYCLES ?= 1000
SOAK_WASM_NODES  ?= 300
soak: plugins
	$(GO) run ./cmd/soak -seed $(SOAK_SEED) -cycles $(SOAK_CYCLES) -nodes $(SOAK_NODES) \
		-mode $(SOAK_MODE) -plugin $(PLUGINS)/fake.wasm -max-duration 15m -out reports/SOAK.md
	$(GO) run ./cmd/soak -seed $(SOAK_SEED) -cycles $(SOAK_WASM_CYCLES) -nodes $(SOAK_WASM_NODES) \
		-mode wasm -plugin $(PLUGINS)/fake.wasm -max-duration 10m -out reports/SOAK-wasm.md

# idle runs `engine run` for 1,000 idle cycles at 2,000 nodes and fails if
# the engine's or the plugin host's RSS grows after warm-up or passes
# memory_limit + 64 MiB.
idle: build plugins
	$(GO) run ./cmd/idlerss -engine bin/engine -plugin $(PLUGINS)/fake.wasm -cycles 1000

# fuzz runs every fuzz target for FUZZTIME (CI: briefly).
FUZZTIME ?= 10s
fuzz: plugins
	RPENGINE_PLUGIN_DIR=$(CURDIR)/$(PLUGINS) scripts/fuzz.sh $(FUZZTIME)

# bench writes reports/BENCHMARKS.md in one run: nova 26.2.2 measured side by
# side (internal/testing/bench TestNovaSideBySide, the compile cache warmed
# first), the POST /reshaper experiment, the event lag, the go test
# benchmarks of the plugin host and plugins (scripts/bench-go.sh, whose
# ratios become the plugin ceiling rows, VMware's on a 2,000-host vcsim),
# then cmd/rpbench: the engine at 1k/10k/100k nodes (idle, changed, unlisted
# and unchanged providers, RSS, restart), the plugins' first start, the real
# Placement, the production-shaped one (uWSGI + MariaDB) and the cold-start
# curve. How to read it: docs/MEASUREMENTS.md. CI does not run it.
# BENCH=quick (default, about 25 minutes on a quiet 2-CPU machine, an estimate) or
# BENCH=full (nova at 200 and 500 nodes, 10k nodes on uWSGI + MariaDB, the
# curve at 1k on both Placements, 3 rounds: about two hours).
BENCH ?= quick
ifeq ($(BENCH),full)
BENCH_NOVA     := RPBENCH_NOVA_SIZES=50,200,500 RPBENCH_NOVA_ROUNDS=3 RPBENCH_NOVA_REPLAY_ROUNDS=2
BENCH_RESHAPER := RPBENCH_RESHAPER_NODES=1000 RPBENCH_RESHAPER_ROUNDS=3
BENCH_EVENTS   := RPBENCH_EVENTS_NODES=1000 RPBENCH_EVENTS_CHANGES=100 RPBENCH_EVENTS_SCALE_NODES=1000,10000 RPBENCH_EVENTS_KIND_CHANGES=20 RPBENCH_EVENTS_LONG_CHANGES=100
BENCH_RPBENCH  := -real 1000 -real-rounds 3 -prod 10000 -prod-rounds 1 -curve-nodes 1000 -curve 1,2,4,8,16 -curve-rounds 3 -curve-kinds prod,sqlite
else
BENCH_NOVA     := RPBENCH_NOVA_SIZES=50 RPBENCH_NOVA_ROUNDS=3
BENCH_RESHAPER := RPBENCH_RESHAPER_NODES=200 RPBENCH_RESHAPER_ROUNDS=2
BENCH_EVENTS   := RPBENCH_EVENTS_NODES=200 RPBENCH_EVENTS_CHANGES=40 RPBENCH_EVENTS_SCALE_NODES=1000,10000 RPBENCH_EVENTS_KIND_CHANGES=10 RPBENCH_EVENTS_LONG_CHANGES=60
BENCH_RPBENCH  := -real 1000 -real-rounds 0 -prod 1000 -prod-rounds 2 -curve-nodes 200 -curve 1,4,16 -curve-rounds 2 -curve-kinds prod
endif
bench-deps:
	scripts/kube/install.sh
	scripts/vcsim/install.sh
	scripts/nova/install.sh
	scripts/rabbitmq/install.sh
	scripts/placement-prod/install.sh

bench: build plugins bench-deps
	@mkdir -p build
	@date +%s > build/bench-started
	@cat /proc/loadavg > build/bench-load 2>/dev/null || true
	RPBENCH_NOVA=1 $(BENCH_NOVA) RPBENCH_NOVA_OUT=$(CURDIR)/build/bench-nova.md \
		RPENGINE_PLUGIN_DIR=$(CURDIR)/$(PLUGINS) RPENGINE_ENGINE_BIN=$(CURDIR)/bin/engine \
		$(GO) test -count=1 -timeout 150m -run 'TestNovaSideBySide$$' -v ./internal/testing/bench/
	RPBENCH_RESHAPER=1 $(BENCH_RESHAPER) RPBENCH_RESHAPER_OUT=$(CURDIR)/build/bench-reshaper.md \
		$(GO) test -count=1 -timeout 60m -run 'TestReshaperBench$$' -v ./internal/testing/bench/
	RPBENCH_EVENTS=1 $(BENCH_EVENTS) RPBENCH_EVENTS_OUT=$(CURDIR)/build/bench-events.md \
		RPBENCH_EVENTS_SCALE_OUT=$(CURDIR)/build/bench-events-scale.md RPBENCH_EVENTS_SLOW_OUT=$(CURDIR)/build/bench-events-slow.md \
		RPENGINE_PLUGIN_DIR=$(CURDIR)/$(PLUGINS) RPENGINE_ENGINE_BIN=$(CURDIR)/bin/engine \
		$(GO) test -count=1 -timeout 120m -run 'TestEventLagBench$$|TestEventScaleBench$$|TestEventSlowServicesBench$$' -v ./internal/testing/bench/
	cat build/bench-events-slow.md >> build/bench-events-scale.md
	RPENGINE_KUBE_E2E=1 RPBENCH_KUBE_SOAK=1 RPBENCH_KUBE_SOAK_OUT=$(CURDIR)/build/bench-kube-soak.md \
		RPENGINE_PLUGIN_DIR=$(CURDIR)/$(PLUGINS) RPENGINE_ENGINE_BIN=$(CURDIR)/bin/engine \
		$(GO) test -count=1 -timeout 40m -run 'TestKubeSoakBench$$' -v ./e2e/
	BENCH=$(BENCH) scripts/bench-go.sh > build/bench-go.md
	$(GO) run ./cmd/rpbench -out reports/BENCHMARKS.md -engine $(CURDIR)/bin/engine -plugin $(CURDIR)/$(PLUGINS)/fake.wasm \
		-nova build/bench-nova.md -reshaper build/bench-reshaper.md -events build/bench-events.md -events-scale build/bench-events-scale.md -kube-soak build/bench-kube-soak.md -gobench build/bench-go.md $(BENCH_RPBENCH) \
		-started $$(cat build/bench-started) -started-load build/bench-load -command "make bench BENCH=$(BENCH)"

# check is CI's gate (.ci/run runs it before the tests): gofmt, go vet and
# staticcheck for the host and for wasip1, every exported name documented,
# go mod tidy clean, no build output or binary tracked. staticcheck is
# pinned and comes from the module proxy; its findings are fixed, or
# silenced where they are wrong with a //lint:ignore that gives the reason.
# The wasip1 run leaves out U1000: staticcheck does not count a
# //go:wasmexport function as used, so every plugin export looks unused.
# HOSTABI names the ABI and SDK by import path, so the lines hold whether
# hostabi/ is a package of this module or a module of its own.
HOSTABI     := github.com/rpengine/rpengine/hostabi/...
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
TOOLS       := $(CURDIR)/build/tools
check:
	@files=$$(gofmt -l .); test -z "$$files" || { echo "check: not gofmt'ed:"; echo "$$files"; exit 1; }
	$(GO) vet ./... $(HOSTABI)
	$(WASMENV) $(GO) vet ./plugins/... $(HOSTABI:...=guest/...)
	GOBIN=$(TOOLS) $(GO) install $(STATICCHECK)
	$(TOOLS)/staticcheck ./... $(HOSTABI)
	$(WASMENV) $(TOOLS)/staticcheck -checks inherit,-U1000 ./plugins/... $(HOSTABI:...=guest/...)
	$(GO) run ./internal/tools/doccheck .
	$(GO) run ./internal/tools/funclen -max 60 engine
	$(GO) run ./internal/tools/funclen -max 60 -notests .
	$(GO) run ./internal/tools/writecheck ./...
	$(GO) test -count=1 ./internal/tools/...
	scripts/check-tree.sh

# release builds dist/: static binaries for linux/amd64 and arm64, the
# plugins, the licence inventory, a CycloneDX SBOM, the Debian packages,
# the OCI image and SHA256SUMS, reproducibly (docs/RELEASE.md).
# release-test builds it twice, in two checkouts and two Go caches, and
# fails unless the checksums match, then checks the Debian package and
# the image. monitoring-test runs promtool on deploy/monitoring.
release:
	scripts/release/release.sh

release-test:
	scripts/release/reproducible.sh

monitoring-test:
	scripts/release/monitoring-test.sh

# plugin-kit builds a plugin from `engine plugin new` in a directory
# outside the repository and runs the kit on it (docs/PLUGIN-SDK.md).
plugin-kit: build
	scripts/release/plugin-kit.sh

clean:
	rm -rf bin build .demo dist

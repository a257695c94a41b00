# Two commands for a new user: `make demo` and `make test` (see README.md).
GO       ?= go
PLUGINS  := build/plugins
WASMENV  := GOOS=wasip1 GOARCH=wasm
TESTFLAGS ?=

.PHONY: all build plugins test unit demo demo-ironic check bench fuzz clean deps chromium soak idle

all: build plugins

build:
	$(GO) build -o bin/engine ./cmd/engine

plugins: $(PLUGINS)/fake.wasm $(PLUGINS)/ironic.wasm

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

# chromium installs Debian's chromium for the status page's browser test
# (internal/ops; needs root or sudo). It does nothing when present.
chromium:
	scripts/chromium/install.sh

# test runs every test, the end-to-end ones against the real Placement and
# Ironic included. Set RPENGINE_REQUIRE_E2E=1 to fail instead of skip when
# the real services are missing (CI does).
test: deps build plugins
	RPENGINE_PLUGIN_DIR=$(CURDIR)/$(PLUGINS) RPENGINE_ENGINE_BIN=$(CURDIR)/bin/engine \
		$(GO) test $(TESTFLAGS) ./...

# unit runs the fast tests only (no real services).
unit: plugins
	RPENGINE_PLUGIN_DIR=$(CURDIR)/$(PLUGINS) $(GO) test -short ./...

demo: build plugins
	scripts/demo.sh

# demo-ironic runs the engine with the Ironic plugin against a local real
# Ironic (fake-hardware nodes) and Placement, both from Debian's packages.
demo-ironic: build plugins
	scripts/ironic/demo.sh

# soak runs the engine through SOAK_CYCLES randomized cycles at SOAK_NODES
# nodes with faults injected, checks every invariant after every cycle and
# writes SOAK.md; it fails on any violation. SOAK_SEED replays a history,
# SOAK_MODE=wasm drives the world through the fake plugin in Wasm.
SOAK_CYCLES ?= 10000
SOAK_NODES  ?= 1000
SOAK_SEED   ?= $(shell date +%s)
SOAK_MODE   ?= memory
soak: plugins
	$(GO) run ./cmd/soak -seed $(SOAK_SEED) -cycles $(SOAK_CYCLES) -nodes $(SOAK_NODES) \
		-mode $(SOAK_MODE) -plugin $(PLUGINS)/fake.wasm -max-duration 15m -out SOAK.md

# idle runs `engine run` for 1,000 idle cycles at 2,000 nodes and fails if
# the engine's or the plugin host's RSS grows after warm-up or passes
# memory_limit + 64 MiB.
idle: build plugins
	$(GO) run ./cmd/idlerss -engine bin/engine -plugin $(PLUGINS)/fake.wasm -cycles 1000

# fuzz runs every fuzz target for FUZZTIME (CI: briefly).
FUZZTIME ?= 10s
fuzz: plugins
	RPENGINE_PLUGIN_DIR=$(CURDIR)/$(PLUGINS) scripts/fuzz.sh $(FUZZTIME)

# bench writes BENCHMARKS.md: engine figures from cmd/rpbench, then the
# Wasm-versus-native and per-call benchmarks of the plugin host.
bench: build plugins
	$(GO) run ./cmd/rpbench -out BENCHMARKS.md -engine $(CURDIR)/bin/engine -plugin $(CURDIR)/$(PLUGINS)/fake.wasm
	scripts/bench-go.sh >> BENCHMARKS.md

check:
	@test -z "$$(gofmt -l .)" || (gofmt -l . && false)
	$(GO) vet ./...
	$(WASMENV) $(GO) vet ./plugins/... ./hostabi/guest/...

clean:
	rm -rf bin build .demo

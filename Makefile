# The project's entry points. `make up` and `make test` are the two commands
# of a fresh machine; everything else is what they are made of.
SHELL := /usr/bin/env bash -o errexit -o pipefail -o nounset
GO ?= go
BIN := _output/bin
# The platform's build tags; hack/lib/common.sh's PLATFORM_GO_TAGS says why.
PLATFORM_GO_TAGS := $(shell . hack/lib/common.sh >/dev/null 2>&1 && echo "$$PLATFORM_GO_TAGS")
# Integration and e2e tests start real servers and guests: give them room.
TEST_TIMEOUT ?= 60m
# How long `make test` fuzzes decode + default + validate, and how long it
# minimizes each new input: go's default (60 s) spent about 20 of the 30 s
# shrinking the first input found, with no input executed meanwhile.
FUZZTIME ?= 30s
FUZZMINIMIZETIME ?= 2s

.PHONY: all deps generate verify verify-codegen verify-gofmt verify-shared-modules vet build test test-unit \
	test-integration test-e2e test-reliability test-fuzz up down images bench clean

all: build

## deps: install the Debian packages the project needs (idempotent; root)
deps:
	hack/install-deps.sh

## generate: regenerate deepcopy, conversion, defaults, OpenAPI, clients, protobuf
generate: deps
	hack/update-codegen.sh
	hack/update-launcher-proto.sh

## verify: gofmt, go vet, and generated code up to date
verify: verify-gofmt vet verify-codegen verify-shared-modules

verify-gofmt:
	@out="$$(gofmt -l $$(git ls-files --cached --others --exclude-standard '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet: deps
	$(GO) vet ./...
	cd hack/mkimage && $(GO) vet ./...
	cd bench && $(GO) vet ./...

verify-codegen: deps
	hack/verify-codegen.sh

# The platform's commands and the Kubernetes build compile k8s.io modules at
# the same versions, so that a cold make up compiles them once.
verify-shared-modules:
	hack/verify-shared-modules.sh

## build: every binary into _output/bin
build: deps
	mkdir -p $(BIN)
	$(GO) build -tags "$(PLATFORM_GO_TAGS)" -o $(BIN)/ ./cmd/...

## test: unit, fuzz, integration, end-to-end, reliability, restore and
## multi-node tests, one after the other; prints each suite's duration
TEST_SUITES := test-unit test-fuzz test-integration test-e2e test-reliability test-restore test-nodes
# The suite's figures from `make test` are a by-product: the committed ones
# in docs/ come from `make test-reliability`.
test:
	RELIABILITY_REPORT=_output/reliability.md RELIABILITY_COMMAND="make test" MAKE="$(MAKE)" \
		hack/run-suites.sh $(TEST_SUITES)

test-unit: deps
	$(GO) test $$($(GO) list ./... | grep -v '/test/')
	cd hack/mkimage && $(GO) test ./...
	cd bench && $(GO) test ./...

## test-fuzz: what the API server does with a request body, on random bodies
test-fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzDecodeDefaultValidate -fuzztime=$(FUZZTIME) -fuzzminimizetime=$(FUZZMINIMIZETIME) ./apis/virtualization/validation/

# -count=1: these tests depend on servers, guests and a cluster that Go's test
# cache knows nothing about; a cached pass would prove nothing.
test-integration: deps
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./test/integration/...

# E2E_PARALLEL: how many of the e2e tests that keep to their own namespace
# run at once (test/e2e/main_test.go); the others run alone, first.
E2E_PARALLEL ?= 2
test-e2e: deps
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) -parallel $(E2E_PARALLEL) ./test/e2e/...

## test-reliability: the fault-injection suite on the local cluster (about
## 9 min on 2 cores); writes its figures to RELIABILITY_REPORT. The API
## storm's size: RELIABILITY_STORM_CLIENTS, _BEFORE, _AFTER (test/reliability)
RELIABILITY_REPORT ?= docs/reliability.md
RELIABILITY_COMMAND ?= make test-reliability
test-reliability: deps
	mkdir -p $(dir $(abspath $(RELIABILITY_REPORT)))
	RELIABILITY_REPORT=$(abspath $(RELIABILITY_REPORT)) RELIABILITY_COMMAND="$(RELIABILITY_COMMAND)" \
		$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./test/reliability/...

## test-restore: make backup, make down PURGE=1, make up, make restore on
## the local cluster: every VM and VMI definition comes back (test/restore)
.PHONY: test-restore
test-restore: deps
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./test/restore/...

## test-nodes: the platform on three nodes (make up NODES=3: placement,
## cross-node networking, and make down leaving the host as it was;
## test/nodes), then the cluster back to one node
.PHONY: test-nodes
test-nodes: deps
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./test/nodes/...

## up: a local single-node Kubernetes with the platform deployed into it and
## an example VM booted (idempotent; prints the KUBECONFIG to use and what to
## try; docs/getting-started.md). HA=1 switches the platform to its HA mode
## (an etcd cluster, two virt-apiserver replicas), HA=0 back; without HA
## the current mode stays (docs/cluster.md "HA mode"). NODES=N runs N
## nodes on this machine, the count kept likewise (docs/cluster.md "More
## nodes")
up: deps
	$(if $(HA),VIRT_HA=$(HA)) $(if $(NODES),VIRT_NODES=$(NODES)) hack/cluster/up.sh
	hack/cluster/example.sh

## down: stop the local cluster and undo its changes to the host; PURGE=1
## also deletes its state (certificates, etcd, images, VMs)
down:
	hack/cluster/down.sh $(if $(PURGE),--purge)

## uninstall: remove the platform from the local cluster in a safe order
## (its VMs and VMIs, then the APIService, then the rest; docs/runbooks.md),
## leaving the cluster up
.PHONY: uninstall
uninstall:
	hack/cluster/uninstall.sh

## backup: an etcd snapshot of the platform's store, either mode, into
## BACKUP (default ~/.cache/virt/backups/<UTC time>.db) and BACKUP.json
## restore: BACKUP back as the platform's whole store: every VM and VMI as
## it was then (docs/cluster.md "Backup and restore")
.PHONY: backup restore
backup:
	hack/cluster/store.sh backup $(BACKUP)
restore:
	hack/cluster/store.sh restore $(BACKUP)

## images: build the platform's container images (make up imports them)
images: deps
	hack/cluster/images.sh

## bench: measure the platform against CRDs + webhooks and raw libvirt on the
## local cluster (up if needed; root); writes docs/performance.md and .png.
## BENCH_FLAGS are virt-bench's flags (bench/README.md)
BENCH_FLAGS ?=
# bench/ is a module of its own (its chart's plotting and font libraries
# stay out of the product's go.mod); virt-launcher is the product's.
bench: deps
	mkdir -p $(BIN)
	$(GO) build -tags "$(PLATFORM_GO_TAGS)" -o $(BIN)/ ./cmd/virt-launcher ./cmd/virt-imagecopy
	cd bench && $(GO) build -o $(abspath $(BIN))/ ./cmd/...
	nice $(BIN)/virt-bench $(BENCH_FLAGS)

clean:
	rm -rf _output

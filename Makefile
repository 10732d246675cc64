# pacpfl — build, test, benchmark, run.
#   make test    everything CI runs (installs missing system packages first)
#   make run     the main job
#   make bench   the benchmark suite

GO        ?= go
NETLIB_LD := -lopenblas -llapacke
# Packages with goroutines; they also run under the race detector.
RACE_PKGS := ./bench/... ./linalg/... ./cholesky/... ./conv/... ./lml/... ./svgd/... ./fl/... ./rpc/... ./internal/... ./harness/... ./methods/... ./predict/... ./train/... ./wisdom/... ./outfile/...
BENCH_REPS ?= 5
TUNE_BUDGET ?= 2m
# make test's short fuzz pass: a number of executions per target (about 10 s
# each on 2 busy cores), not a duration: go 1.26's coordinator can fail a
# duration-limited run with a spurious "context deadline exceeded" when the
# time runs out mid-execution (golang/go#75804, fixed in go 1.27).
FUZZ_EXECS_CSV   ?= 60000x
FUZZ_EXECS_IDX   ?= 50000x
FUZZ_EXECS_MODEL ?= 100000x
FUZZ_EXECS_WISDOM ?= 100000x

.PHONY: all deps proto test fmt-check vet test-go test-cli test-own-data test-federation test-fuzz test-race test-purego test-netlib test-arm64 bench run build

all: build

build:
	$(GO) build -o bin/pacpfl ./cmd/pacpfl

deps:
	@echo "==> deps"
	@bash scripts/deps.sh

test: deps fmt-check vet test-go test-cli test-own-data test-federation test-fuzz test-race test-purego test-netlib test-arm64
	@echo "==> all test steps passed"

fmt-check:
	@echo "==> gofmt"
	@bad=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$bad" ]; then echo "gofmt needed on:"; echo "$$bad"; exit 1; fi
	@echo "==> citations stay inside the repository (docs/math.md's numbering, the papers by name)"
	@sh scripts/check_citations.sh

vet:
	@echo "==> go vet (amd64, purego, netlib, arm64)"
	$(GO) vet ./...
	$(GO) vet -tags purego ./...
	CGO_LDFLAGS='$(NETLIB_LD)' $(GO) vet -tags netlib ./...
	GOARCH=arm64 $(GO) vet ./...

test-go:
	@echo "==> go test ./..."
	$(GO) test ./...

test-cli:
	@echo "==> pacpfl through a table of bad invocations (exit status, no file left or corrupted)"
	GO=$(GO) bash scripts/cli_bad_invocations.sh

test-own-data:
	@echo "==> README's \"Your own data\" commands on examples/sites.csv (train --data, predict, plot)"
	bash scripts/own_data.sh

test-federation:
	@echo "==> pacpfl server + 4 client processes on 127.0.0.1 (TLS, tokens; SIGKILL a client and the server, --resume): report equals train's"
	GO=$(GO) bash scripts/federation_e2e.sh

test-fuzz:
	@echo "==> a short fuzz pass over the file readers (CSV, IDX, model file, wisdom file)"
	$(GO) test -run '^$$' -fuzz '^FuzzReadCSV$$' -fuzztime $(FUZZ_EXECS_CSV) -parallel 1 ./data
	$(GO) test -run '^$$' -fuzz '^FuzzReadIDX$$' -fuzztime $(FUZZ_EXECS_IDX) -parallel 1 ./data
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZ_EXECS_MODEL) -parallel 1 ./modelfile
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZ_EXECS_WISDOM) -parallel 1 ./wisdom

test-race:
	@echo "==> go test -race (concurrent packages)"
	$(GO) test -race $(RACE_PKGS)

test-purego:
	@echo "==> go test -tags purego ./..."
	$(GO) test -tags purego ./...

test-netlib:
	@echo "==> go test -tags netlib ./... (OpenBLAS/LAPACKE via cgo)"
	CGO_LDFLAGS='$(NETLIB_LD)' $(GO) test -tags netlib ./...

test-arm64:
	@echo "==> GOARCH=arm64 go test under qemu-aarch64-static"
	GOARCH=arm64 $(GO) test -timeout 30m -exec qemu-aarch64-static ./...

bench:
	@echo "==> go test -bench (kernels and routines)"
	$(GO) test -run '^$$' -bench . -benchtime 1x ./...
	CGO_LDFLAGS='$(NETLIB_LD)' $(GO) build -tags netlib -o bin/pacpfl-netlib ./cmd/pacpfl
	@echo "==> pacpfl tune blas (the wisdom file pacpfl bench then reads; TUNE_BUDGET=$(TUNE_BUDGET))"
	./bin/pacpfl-netlib tune blas --budget $(TUNE_BUDGET)
	@echo "==> pacpfl bench (with OpenBLAS)"
	./bin/pacpfl-netlib bench all --reps $(BENCH_REPS)

run:
	$(GO) run ./cmd/pacpfl train

# The generated code of rpc/pb is committed (CI does not need protoc). Needs
# protoc, protoc-gen-go v1.36.11 and protoc-gen-go-grpc in PATH.
proto:
	protoc --proto_path=rpc/pb --go_out=rpc/pb --go_opt=paths=source_relative \
		--go-grpc_out=rpc/pb --go-grpc_opt=paths=source_relative rpc/pb/federation.proto

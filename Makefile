# The developer's commands (CONTRIBUTING.md). CI runs `bash .ci/run`, which does all of
# this and starts the real engines the tests need.

GOLDEN_PKGS := ./analyze ./cmd ./hwtopo ./render ./settings ./source/sim
export CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations

.PHONY: build test test-short lint update-golden bench bench-read k8s ci mutation mutation-diff mutate mutation-chargeback

build: ## the binary, ./seedance
	go build -o seedance .

test: ## every test; real engines are skipped (saying how to get them) unless installed
	go test ./...

test-short: ## the inner loop: skips real engines, control planes and long streams
	go test -short ./...

lint: ## gofmt, go vet and the lint gate, as CI runs them
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	go vet ./...
	go run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0 run ./...

update-golden: ## rewrite the golden files of every package that has them, and the chart's manifests
	go test $(GOLDEN_PKGS) -update
	cd deploy/charttest && go test ./... -update

bench: ## the planner's benchmarks of docs/performance.md (seconds); the reader's and the fleet's give their own commands there
	GOMAXPROCS=1 go test -run XXX -bench 'OpenB|Plan10000' -benchtime 3x ./recommend

bench-read: ## the profile reader's CPU time per MB against cat, gzip -dc, zstd -dc, encoding/json and a number loop (issue #30; SEEDANCE_BENCH_BASELINE=an-older-seedance adds it; ~10 min)
	go test ./cmd -run XXX -bench ReadCPU -benchtime 1x -timeout 60m -v

GREMLINS := go run github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0
MUTATION_PKGS ?= ./recommend=10 ./ledger=60 ./chargeback=10 ./pipeline=20 ./analyze=30
BASE ?= origin/main

mutation: ## mutation testing (gremlins, pinned) of MUTATION_PKGS against each package's tests; scores and reviewed survivors in docs/testing.md (about 2 h on two cores: the ledger 1.5 h)
	@$(MAKE) --no-print-directory mutate MUTATE_ARGS=

mutation-diff: ## the habit: mutation testing of the code changed since BASE (default origin/main) only, before a merge
	@$(MAKE) --no-print-directory mutate MUTATE_ARGS="--diff $(BASE)"

# Each package with the timeout coefficient its slowest tests need (analyze's
# table tests take 30x their time under two workers, the ledger's concurrent
# updaters 60x on a loaded machine); the ledger with -short,
# so its PostgreSQL twins do not run once per mutant (CI runs them).
mutate:
	@for pc in $(MUTATION_PKGS); do p=$${pc%=*}; c=$${pc#*=}; short=; [ "$$p" = ./ledger ] && short=-short; \
	  echo "== $$p (timeout coefficient $$c)"; GOFLAGS=$$short $(GREMLINS) unleash --workers 2 --timeout-coefficient $$c $(MUTATE_ARGS) $$p || exit 1; done

# The charge tests of the packages that read chargeback (the ledger's and
# cmd's), with -short: their SQLite halves.
CHARGE_TESTS := Cents|Method|SameAs|Merge|Part|Ratios|Budget|Charge|Focus|Showback|Emission|Settled|Price|Ledger|Shared|Report|Carbon|Intensity|Export|Cluster|Comparison|Daily|Owner|AnyWindow|Backfill|Hole|Lag|Summer|Split|Share

mutation-chargeback: ## chargeback's mutants that its own tests leave alive or do not reach, run against the charge tests of chargeback, the ledger and cmd (issue #54; about 1 h on two cores; docs/testing.md)
	$(GREMLINS) unleash --workers 2 --timeout-coefficient 10 -o /tmp/seedance-chargeback-mutants.json ./chargeback
	cd chargeback && python3 ../scripts/mutate-across.py /tmp/seedance-chargeback-mutants.json --timeout 400 -- sh -c \
	  "go test -short -count=1 -failfast -timeout 150s -run '$(CHARGE_TESTS)' -skip 'Concurrent|Killed|Fault' . ../ledger/... && \
	   go test -short -count=1 -failfast -timeout 150s -run '$(CHARGE_TESTS)' -skip 'Concurrent|Killed|Fault' ../cmd ../render ../pipeline"

k8s: ## build and cache the Kubernetes control plane the plan tests run against (~15-35 min once)
	bash .ci/k8s-build.sh

ci: ## everything CI runs, on this machine
	bash .ci/run

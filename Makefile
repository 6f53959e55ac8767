# glue-recon developer tasks. `make help` lists them.
# Tools installed by `make setup` (.venv, node_modules) are put on PATH for every recipe.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
export PATH := $(CURDIR)/.venv/bin:$(CURDIR)/node_modules/.bin:$(PATH)

BIN := target/release/glue-recon
BENCH_ARGS ?=
# Lambda CPU architecture for build/deploy: arm64 (the template's default) or x86_64.
ARCH ?= arm64
FUNCTIONS := -p recon-trigger -p recon-lookup -p recon-hash -p recon-merge
SAM_CONFIG := infra/samconfig.toml

.PHONY: help setup pip-lock release build validate deploy demo screenshots test e2e infra-check portable-check arm64-check lean-check lint fmt bench bench-check moto-start moto-stop clean distclean

help: ## List the targets
	@grep -E '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) \
	  | awk 'BEGIN {FS = ":.*## "}; {printf "  %-12s %s\n", $$1, $$2}'

setup: ## Install dev tools: .venv (moto, duckdb, sam, ...), asl-validator, chromium
	@scripts/setup.sh

pip-lock: ## Re-resolve requirements-*.txt into requirements-*.lock (then commit them)
	scripts/pip-lock.sh

release: ## Build the release CLI (target/release/glue-recon)
	cargo build --release --bin glue-recon

build: setup ## Build the four Lambda functions with cargo lambda (ARCH=arm64|x86_64) into target/lambda/
	cargo lambda build --release --$(subst _,-,$(ARCH)) $(FUNCTIONS)
	@ls -l target/lambda/*/bootstrap

validate: setup ## Static checks of infra/ and statemachine/: cfn-lint, sam validate, asl-validator, checkov
	bash tests/infra/check.sh --static

deploy: setup ## sam build + sam deploy (--guided the first time); ARCH must match the stack's Architecture parameter
	sam build -t infra/template.yaml --config-file $(CURDIR)/$(SAM_CONFIG) --parameter-overrides Architecture=$(ARCH)
	@if grep -q '^parameter_overrides' $(SAM_CONFIG); then \
	  sam deploy --config-file $(CURDIR)/$(SAM_CONFIG); \
	else \
	  echo "deploy: first deploy: sam asks for the parameters and saves them in $(SAM_CONFIG)"; \
	  sam deploy --guided --config-file $(CURDIR)/$(SAM_CONFIG); \
	fi

demo: ## Five days of three pairs on sample data (a history for the dashboard), the last with planted problems
	# The demo reads and writes local folders only: the CLI without its AWS adapters
	# compiles in about half the time of the full one (docs/performance.md, First build).
	cargo build --release -p glue-recon --no-default-features --bin glue-recon
	@BIN=$(BIN) scripts/demo.sh

screenshots: setup ## docs/dashboard.png and docs/report.png from what `make demo` wrote (headless Chromium)
	@scripts/screenshots.sh

test: setup ## Run every test: cargo test (against moto), infra checks, the end-to-end run, portable and arm64 checks, lint
	scripts/test.sh
	$(MAKE) --no-print-directory infra-check e2e portable-check arm64-check lean-check lint

portable-check: ## The hashing tests with the AVX-512 path forced off (the path of every other CPU)
	cargo test -p recon-engine --features portable --lib -- row_hash canonical row_slots row_hasher
	cargo test -p glue-recon --features portable --test tests -- engine::hash_vectors engine::types

lean-check: ## The CLI without the aws feature (what make demo builds): it builds, runs a local diff, and names what an s3:// table needs
	cargo build -p glue-recon --no-default-features --bin glue-recon --target-dir target/lean
	scripts/lean_check.sh target/lean/debug/glue-recon

arm64-check: setup ## Build the four functions for arm64 Lambdas (debug, cargo lambda + zig): the non-x86 code paths compile
	cargo lambda build --arm64 $(FUNCTIONS)

e2e: setup ## End to end: the real state machine on moto calling the real function binaries under cargo lambda watch
	cargo build --workspace --bins
	.venv/bin/python -m pytest -p no:cacheprovider tests/e2e $(PYTEST_ARGS)

infra-check: ## Check infra/ and statemachine/ (cfn-lint, sam validate, asl-validator, checkov, flow tests, the docs' SQL)
	cargo build --bin glue-recon
	bash tests/infra/check.sh

SHELL_SCRIPTS := .ci/run $(wildcard scripts/*.sh) tests/infra/check.sh

lint: setup ## cargo fmt --check, clippy -D warnings, rustdoc -D warnings, ruff (Python), shellcheck (shell), no module cycles in any crate
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet
	.venv/bin/ruff check .
	.venv/bin/shellcheck $(SHELL_SCRIPTS)
	.venv/bin/python scripts/module_cycles.py src crates/*/src functions/*/src

fmt: ## Format the code
	cargo fmt --all

bench: setup release ## Compare glue-recon with DuckDB on 10M rows per side (BENCH_ARGS="--record" keeps the results in bench/results/; "--peers polars" ...)
	.venv/bin/python bench/run_bench.py $(BENCH_ARGS)

bench-check: setup release ## Quick agreement check: glue-recon vs DuckDB vs known counts, 200k rows from bench/gen_parquet.py
	.venv/bin/python bench/run_bench.py --generator duckdb --rows 200000 --partitions 5 --repeat 1 --data target/bench-check

moto-start: ## Start a moto server by hand (prints its URL; see scripts/moto.sh)
	@scripts/moto.sh start

moto-stop: ## Stop the moto server started by moto-start
	@scripts/moto.sh stop

clean: ## Remove build output and generated data (keeps .venv and node_modules)
	-@scripts/moto.sh stop 2>/dev/null
	cargo clean
	rm -rf demo-data bench-data recon-out

distclean: clean ## Also remove .venv and node_modules
	rm -rf .venv node_modules

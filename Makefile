# Storytime catalog — the front door. `make run` and `make test` need nothing done first.
SHELL := /bin/bash
DEMO_BOOKS ?= 2000
PORT ?= 8080

.PHONY: run test house deps db-up db-down db-reset migrate build build-release bench soak cluster deploy-drill psql clean

run: deps build
	@scripts/run.sh

test: deps
	@scripts/test.sh

# The house's rules (scripts/house.py: what each checks and why), in seconds, no build.
# `scripts/house.py --report` counts per rule; `scripts/house-selftest.sh` checks the checker.
house:
	@python3 scripts/house.py

deps:
	@scripts/deps.sh

build:
	swift build

build-release:
	swift build -c release $$(scripts/release-flags.sh)

db-up:
	@scripts/db.sh up && scripts/db.sh ensure storytime

db-down:
	@scripts/db.sh down

# Drops and recreates the development database (the demo seed runs again on `make run`).
db-reset: db-up
	@scripts/db.sh reset storytime

migrate: db-up build
	DATABASE_URL=$${DATABASE_URL:-$$(scripts/db.sh url storytime)} .build/debug/App migrate

# Two instances behind nginx on one port, a streaming read replica (scripts/cluster.sh; not needed by make run).
cluster: deps
	@scripts/cluster.sh

psql: db-up
	@scripts/db.sh psql -d storytime

clean:
	rm -rf .build

# Release build, bench databases of 10k and 100k books (BENCH_1M=1 adds a million), wrk + pgbench.
bench: deps
	@bench/run.sh

# The warm mix, cold starts under load (engine from SQL, from its snapshot) and a rolling restart
# of `make cluster` under the mix through nginx, at 100,000 books (BENCH_1M=1 adds a million).
deploy-drill: deps
	@BENCH_ONLY=deploy BENCH_SIZES="$${BENCH_SIZES:-100000}" bench/run.sh

# Not in CI: 10 minutes at 200 connections of mixed catalog traffic with console writes (SOAK_MINUTES, SOAK_CONNECTIONS).
soak: deps
	@bench/soak.sh

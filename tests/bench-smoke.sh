#!/usr/bin/env bash
# A smoke run of `make bench` (tiny catalog, one second per scenario, the debug build that the
# tests already built) so the instrument cannot rot. It checks the run completes and every
# scenario answered; it asserts no timing.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(BENCH_SIZES=200 BENCH_DURATION=1 BENCH_CONNECTIONS=4 BENCH_BUILD=debug BENCH_SKIP_BUILD=1 bench/run.sh 2>&1)
echo "$out" | tail -25
rows=$(echo "$out" | grep -c '^| 200 | ' || true)
if [ "$rows" -lt 24 ]; then echo "bench smoke: expected 24 result rows for size 200, got $rows" >&2; exit 1; fi
if echo "$out" | grep -E '^\| 200 \| [^|]+ \| 0 \|' >/dev/null; then echo "bench smoke: a scenario served nothing" >&2; exit 1; fi
if echo "$out" | grep -q 'answered an error'; then echo "bench smoke: a scenario answered an error" >&2; exit 1; fi
scripts/db.sh psql -d postgres -c "DROP DATABASE IF EXISTS st_bench_200 WITH (FORCE)" >/dev/null

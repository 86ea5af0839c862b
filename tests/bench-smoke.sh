#!/usr/bin/env bash
# A smoke run of `make bench` (tiny catalog, one second per scenario, the debug build that the
# tests already built) so the instrument cannot rot. It checks the run completes and every
# scenario answered; it asserts no timing. It does assert what must hold whatever the timing: the
# rolling restart of the cluster under load lost no request at the front (nginx), and the cold
# start from the snapshot used it.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(COLD_SLICES=1 BENCH_ONEOFF_PATHS=2000 BENCH_SIZES=200 BENCH_DURATION=1 BENCH_CONNECTIONS=4 BENCH_BUILD=debug BENCH_SKIP_BUILD=1 bench/run.sh 2>&1)
echo "$out" | tail -25
rows=$(echo "$out" | grep -c '^| 200 | ' || true)
if [ "$rows" -lt 24 ]; then echo "bench smoke: expected 24 result rows for size 200, got $rows" >&2; exit 1; fi
if ! echo "$out" | grep -qF '| 200 | 40 tablets, 0 writes/s |'; then echo "bench smoke: no row of the 40 tablets without writes" >&2; exit 1; fi
if echo "$out" | grep -E '^\| 200 \| [^|]+ \| 0 \|' >/dev/null; then echo "bench smoke: a scenario served nothing" >&2; exit 1; fi
if echo "$out" | grep -q 'answered an error'; then echo "bench smoke: a scenario answered an error" >&2; exit 1; fi
if ! echo "$out" | grep -E 'rolling restart at 200 books: instance [0-9]+: stopped .*instance [0-9]+: stopped .* through nginx: 0 non-2xx, 0 socket errors' >/dev/null; then
    echo "bench smoke: the rolling restart did not restart both instances without an error at the front" >&2; exit 1
fi
if ! echo "$out" | grep -E 'cold start at 200 books, snapshot: .* loaded in [0-9.]+ s' >/dev/null; then
    echo "bench smoke: the cold start did not load the engine snapshot" >&2; exit 1
fi
if ! echo "$out" | grep -E 'page, one-off \(all steps' >/dev/null; then
    echo "bench smoke: the engine's per-step profile printed nothing" >&2; exit 1
fi
# The facet counts' own bench (compiled from the engine's sources): it checks the two ways of
# counting agree before it times them.
facets=$(BENCH_ONLY=facets BENCH_FACETS_BOOKS=20000 bench/run.sh 2>&1) || { echo "bench smoke: the facet counts' bench failed: $facets" >&2; exit 1; }
if [ "$(echo "$facets" | grep -cE '^\| [0-9]+ % \| ')" -ne 7 ]; then echo "bench smoke: the facet counts' bench printed no table: $facets" >&2; exit 1; fi
scripts/db.sh psql -d postgres -c "DROP DATABASE IF EXISTS st_bench_200_$(sha1sum seeds/demo.json | cut -c1-8) WITH (FORCE)" >/dev/null

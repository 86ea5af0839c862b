#!/usr/bin/env bash
# `make bench`: the app in release mode against seeded bench databases, loaded with wrk on
# loopback, beside pgbench runs of the app's own SQL and of bare exact counts. Prints one table
# and writes it to bench/results/. Absolute numbers on a shared 2-core machine are noisy; the
# ratios, taken in one run, are the figures to compare.
#
#   BENCH_SIZES="10000 100000"   catalog sizes (BENCH_1M=1 adds 1000000; seeding it takes ~3 min)
#   BENCH_DURATION=10            seconds per scenario
#   BENCH_CONNECTIONS=32         keep-alive connections (wrk) and clients (pgbench)
#   BENCH_BUILD=release          or debug (the smoke run of `make test`)
#   BENCH_ONLY=child             only the parent's side, varied (bench/child.sh)
#   BENCH_ONLY=compression       only the warm mix without and with gzip and br (bench/compression.sh)
#   BENCH_ONLY=speed             only a child's tablet and one-off searches beside their base rows (bench/speed.sh)
#   BENCH_SPEED_ROWS="0 2 0 2"   with it, only those rows, in that order (one row's swing beside its base)
#   BENCH_ONLY=deploy            only the warm mix, the cold starts and the rolling restart (bench/deploy.sh)
#   BENCH_ONLY=facets            only the facet counts, no server (bench/facets.sh; BENCH_FACETS_BOOKS, a million)
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${BENCH_SIZES:-"10000 100000"}
[ "${BENCH_1M:-0}" = 1 ] && sizes="$sizes 1000000"
duration=${BENCH_DURATION:-10}
connections=${BENCH_CONNECTIONS:-32}
build=${BENCH_BUILD:-release}
[ "${BENCH_ONLY:-}" = facets ] && exec bench/facets.sh

command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
command -v pgbench >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-contrib-15 >/dev/null; }
scripts/db.sh up >/dev/null
flags=""
[ "$build" = release ] && flags=$(scripts/release-flags.sh)
[ "${BENCH_SKIP_BUILD:-0}" = 1 ] || swift build -c "$build" --product App $flags >/dev/null
app=.build/$build/App
port=$(scripts/db.sh port)
export JWT_SECRET=bench-jwt-secret-0123456789abcdefghijklmn SESSION_SECRET=bench-session-secret-0123456789abcdefghij \
    PLAYBACK_SIGNING_KEY=bench-playback-key-0123456789abcdefghijklm VIDEO_WEBHOOK_SECRET=bench-video-webhook-secret-0123456789abcdef \
    STAFF_2FA_KEY=bench-staff-2fa-key-0123456789abcdefghijklmn
# The load is a few accounts at thousands of requests a second: no per-account budget.
export LOG_LEVEL=error BCRYPT_COST=4 RATE_LIMIT_REQUESTS=0
mkdir -p bench/results
work=$(mktemp -d)
server=
trap '[ -n "$server" ] && kill $server 2>/dev/null; rm -rf "$work"' EXIT
. bench/lib.bash
. bench/console.sh
. bench/child.sh
. bench/child_devices.sh
. bench/deploy.sh
. bench/compression.sh
. bench/speed.sh

results=bench/results/$(date -u +%Y%m%dT%H%M%SZ).md
{
  echo "# make bench $(date -u +%FT%TZ) — ${connections} connections, ${duration}s per scenario, build ${build}"
  echo
  echo "| size | scenario | req/s | p50 ms | p99 ms | non-2xx | pgbench tps (same SQL, uncached) | ratio |"
  echo "|---:|---|---:|---:|---:|---:|---:|---:|"
} > "$results"

for n in $sizes; do
    prepare_db "$n"
    # Every start of the app writes its engine snapshot here once built (the cold starts read it).
    snapshot=$work/engine-$n.snapshot
    export ENGINE_SNAPSHOT_PATH=$snapshot
    start_app_server
    if [ "${BENCH_ONLY:-}" = child ]; then
        child_mix
        kill $server 2>/dev/null; wait $server 2>/dev/null || true; server=
        continue
    fi
    if [ "${BENCH_ONLY:-}" = speed ]; then
        speed_mix
        kill $server 2>/dev/null; wait $server 2>/dev/null || true; server=
        continue
    fi
    if [ "${BENCH_ONLY:-}" = compression ]; then
        mixed_paths
        # Warm: one run to fill the engine's answers, then identity, gzip, br, identity.
        PATHS="$work/paths.txt" TOKEN="$token" wrk -t2 -c"$connections" -d"${duration}s" -s bench/mixed.lua "$base" > /dev/null 2>&1 || true
        compression_mix
        kill $server 2>/dev/null; wait $server 2>/dev/null || true; server=
        continue
    fi
    if [ "${BENCH_ONLY:-}" = search ]; then
        mixed_paths
        # Warm: one run to fill the engine's answers, then the mix and the suggestions measured.
        for _ in 1 2; do
            PATHS="$work/paths.txt" TOKEN="$token" wrk -t2 -c"$connections" -d"${duration}s" --latency -s bench/mixed.lua "$base" > "$work/wrk.txt" 2>&1 || true
        done
        read -r unscoped p50 p99 bad < <(parse_wrk "$work/wrk.txt")
        echo "| $n | mixed, 0 writes/s (warm) | $unscoped | $p50 | $p99 | $bad | | |" >> "$results"
        printf '%-8s %-28s %8s req/s  p50 %7s ms  p99 %7s ms  non-2xx %s\n' "$n" "mixed, 0 writes/s (warm)" "$unscoped" "$p50" "$p99" "$bad"
        suggest_mix
        relevance_set
        kill $server 2>/dev/null; wait $server 2>/dev/null || true; server=
        continue
    fi
    if [ "${BENCH_ONLY:-}" = deploy ]; then
        mixed_paths
        # Warm: one run to fill the engine's answers, then the one measured.
        for _ in 1 2; do
            PATHS="$work/paths.txt" TOKEN="$token" wrk -t2 -c"$connections" -d"${duration}s" --latency -s bench/mixed.lua "$base" > "$work/wrk.txt" 2>&1 || true
        done
        read -r unscoped p50 p99 bad < <(parse_wrk "$work/wrk.txt")
        echo "| $n | mixed, 0 writes/s (warm) | $unscoped | $p50 | $p99 | $bad | | |" >> "$results"
        cold_start "$unscoped"
        deploy_drill
        continue
    fi

    # scenario | path | header | pgbench query string (the app's own uncached SQL) or '-'
    scenarios=(
      "list page 1|/api/v1/catalog/books|auth|"
      "q, 3 letters|/api/v1/catalog/books?q=owl|auth|q=owl"
      "q, 5 letters, typo|/api/v1/catalog/books?q=drgon|auth|q=drgon"
      "q, 8 letters, typo|/api/v1/catalog/books?q=godnight|auth|q=godnight"
      "category + age|/api/v1/catalog/books?category=bedtime-stories&age=4|auth|category=bedtime-stories&age=4"
      "page 200|/api/v1/catalog/books?page=200|auth|page=200"
      "book detail|/api/v1/catalog/books/1|auth|-"
      "categories|/api/v1/catalog/categories|none|-"
      "library, recently_watched|/api/v1/children/$child/library?sort=recently_watched|auth|-"
      "history, page 1 (10,000 plays)|/api/v1/children/$child/history|auth|-"
      "history, page 50|/api/v1/children/$child/history?page=50|auth|-"
      "stats, month, Paris|/api/v1/children/$child/stats?period=month&tz=Europe/Paris|auth|-"
      "stats, all|/api/v1/children/$child/stats|auth|-"
      "continue watching|/api/v1/children/$child/continue|auth|-"
      "bulk copy of 60 (duplicates)|/api/v1/children/$child/library/bulk|post|-"
      "no database (floor)|/livez|none|-"
      "console book list|/admin/books|cookie|-"
    )
    declare -A rps
    for entry in "${scenarios[@]}"; do
        IFS='|' read -r name path header sqlquery <<<"$entry"
        args=()
        [ "$header" = auth ] && args=(-H "Authorization: Bearer $token")
        [ "$header" = post ] && args=(-H "Authorization: Bearer $token" -H "Content-Type: application/json" -s bench/post.lua)
        [ "$header" = cookie ] && args=(-H "Cookie: storytime_session=$cookie")
        if [ "$header" = post ]; then
            curl -sf -o /dev/null -H "Authorization: Bearer $token" -H "Content-Type: application/json" -d "$BENCH_BODY" "$base$path" \
                || echo "warning: $name answered an error" >&2
        else
            curl -sf -o /dev/null "${args[@]}" "$base$path" || echo "warning: $name answered an error" >&2
        fi
        wrk -t2 -c"$connections" -d"${duration}s" --latency "${args[@]}" "$base$path" > "$work/wrk.txt" 2>&1 || true
        read -r r p50 p99 bad < <(parse_wrk "$work/wrk.txt")
        rps[$name]=$r
        tps="-"; ratio="-"
        if [ -n "$sqlquery" ] && [ "$sqlquery" != "-" ]; then
            DATABASE_URL=$url $app catalog-sql --query "$sqlquery" > "$work/app.sql"
        elif [ -z "$sqlquery" ]; then
            DATABASE_URL=$url $app catalog-sql --query "" > "$work/app.sql"
        fi
        if [ "$sqlquery" != "-" ]; then
            tps=$(pgbench -n -M prepared -c "$connections" -j 2 -T "$duration" -h 127.0.0.1 -p "$port" -U postgres -f "$work/app.sql" "$db" 2>/dev/null \
                  | awk '/^tps/ { printf "%.0f", $3 }')
        fi
        echo "| $n | $name | $r | $p50 | $p99 | $bad | $tps | |" >> "$results"
        printf '%-8s %-28s %8s req/s  p50 %7s ms  p99 %7s ms  pgbench %s\n' "$n" "$name" "$r" "$p50" "$p99" "$tps"
    done
    # bare exact counts of each list filter (the count wall), and the ratios that matter
    # The realistic mix: ~6,000 distinct paths, random per request, while a writer changes books
    # at 0, 1 and 10 statements a second (pgbench -R), beside the bare exact count's tps.
    mixed_paths
    echo "SELECT count(*) FROM books b WHERE b.status = 'active';" > "$work/count.sql"
    for writes in 0 1 10; do
        writer=
        if [ "$writes" != 0 ]; then
            pgbench -n -c 1 -T $((duration + 2)) -h 127.0.0.1 -p "$port" -U postgres $(content_writes "$writes") "$db" > "$work/writer.txt" 2>&1 &
            writer=$!
        fi
        PATHS="$work/paths.txt" TOKEN="$token" wrk -t2 -c"$connections" -d"${duration}s" --latency -s bench/mixed.lua "$base" > "$work/wrk.txt" 2>&1 || true
        [ -n "$writer" ] && { wait "$writer" || true; }
        read -r r p50 p99 bad < <(parse_wrk "$work/wrk.txt")
        tps=$(pgbench -n -M prepared -c "$connections" -j 2 -T "$duration" -h 127.0.0.1 -p "$port" -U postgres -f "$work/count.sql" "$db" 2>/dev/null \
              | awk '/^tps/ { printf "%.0f", $3 }')
        ratio=$(python3 -c "print(f'{${r:-0} / max(${tps:-0}, 1):.1f}× the bare count')")
        echo "| $n | mixed, $writes writes/s | $r | $p50 | $p99 | $bad | $tps (bare count) | $ratio |" >> "$results"
        printf '%-8s %-28s %8s req/s  p50 %7s ms  p99 %7s ms  non-2xx %s  bare count %s tps\n' "$n" "mixed, $writes writes/s" "$r" "$p50" "$p99" "$bad" "$tps"
        unscoped=$r
        [ "$writes" = 0 ] && warm_mix=$r
    done
    suggest_mix
    relevance_set
    compression_mix
    child_device_mix "$unscoped"
    speed_mix
    child_mix
    echo "app RSS after the runs at $n books: $(ps -o rss= -p $server | awk '{printf "%.0f MB", $1/1024}')" | tee -a "$work/seed.txt"
    # The console's list pages and dashboard, one or two filters, any sort, deep pages (bench/console.sh).
    console_pages

    for filter in "list page 1|b.status = 'active'" \
                  "category + age|b.status = 'active' AND b.age_min <= 4 AND b.age_max >= 4 AND EXISTS (SELECT 1 FROM book_categories bc WHERE bc.book_id = b.id AND bc.category_id = (SELECT id FROM categories WHERE slug = 'bedtime-stories'))" \
                  "page 200|b.status = 'active'"; do
        IFS='|' read -r name condition <<<"$filter"
        echo "SELECT count(*) FROM books b WHERE $condition;" > "$work/count.sql"
        tps=$(pgbench -n -M prepared -c "$connections" -j 2 -T "$duration" -h 127.0.0.1 -p "$port" -U postgres -f "$work/count.sql" "$db" 2>/dev/null \
              | awk '/^tps/ { printf "%.0f", $3 }')
        ratio=$(python3 -c "print(f'{${rps[$name]:-0} / max(${tps:-0}, 1):.2f}×')")
        echo "| $n | bare count for \"$name\" | | | | | $tps | app ÷ count = $ratio |" >> "$results"
        printf '%-8s %-28s pgbench bare count %s tps; app/count %s\n' "$n" "count: $name" "$tps" "$ratio"
    done
    floor=${rps["no database (floor)"]:-1}
    for name in "book detail" "categories"; do
        ratio=$(python3 -c "print(f'{${rps[$name]:-0} / max($floor, 1):.2f}')")
        echo "| $n | $name ÷ floor | | | | | | $ratio |" >> "$results"
    done
    cold_start "$warm_mix"
    deploy_drill
    [ -n "$server" ] && kill $server 2>/dev/null; wait $server 2>/dev/null || true; server=
done
[ -f "$work/seed.txt" ] && { echo; echo '```'; cat "$work/seed.txt"; echo '```'; } >> "$results"
echo
cat "$results"
echo
echo "written to $results"

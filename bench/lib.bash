# Shared by bench/run.sh and bench/soak.sh (sourced after $app, $work and JWT/SESSION secrets are set).

# bench_db N: the bench database's name — per size and version of the demo seed.
bench_db() { echo "st_bench_${1}_$(sha1sum seeds/demo.json | cut -c1-8)"; }

# prepare_db N: the bench database of N books (seeded once per version of seeds/demo.json,
# migrated every time), a parent with two children, a library of 60 books and 10,000 plays, a
# viewer; sets db, url, child, sibling, bulk_ids.
prepare_db() {
    local n=$1
    db=$(bench_db "$n")
    url=$(scripts/db.sh url "$db")
    have=$(scripts/db.sh psql -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'")
    books=0
    [ "$have" = 1 ] && books=$(scripts/db.sh psql -d "$db" -tAc "SELECT count(*) FROM books" 2>/dev/null || echo 0)
    if [ "$books" != "$n" ]; then
        scripts/db.sh reset "$db" >/dev/null
        DATABASE_URL=$url $app migrate >/dev/null
        start=$(date +%s%N)
        DATABASE_URL=$url $app seed demo --books "$n" >/dev/null
        echo "seed demo --books $n: $(( ($(date +%s%N) - start) / 1000000 )) ms" | tee -a "$work/seed.txt"
    else
        DATABASE_URL=$url $app migrate >/dev/null
    fi
    DATABASE_URL=$url $app parent create --email bench@bench.test --password 'bench password' --child Bo >/dev/null 2>&1 || true
    DATABASE_URL=$url $app staff create --email bench@bench.test --password 'bench password' --role viewer >/dev/null 2>&1 || true
    child=$(scripts/db.sh psql -d "$db" -tAc "SELECT c.id FROM children c JOIN parents p ON p.id = c.added_by WHERE p.email = 'bench@bench.test' ORDER BY c.id LIMIT 1")
    scripts/db.sh psql -d "$db" -qc "INSERT INTO library_entries (child_id, book_id, added_at, last_played_at)
        SELECT $child, id, now() - id * interval '1 minute', CASE WHEN id % 2 = 0 THEN now() - id * interval '30 seconds' END
          FROM books WHERE status = 'active' ORDER BY id LIMIT 60 ON CONFLICT DO NOTHING" >/dev/null
    # A viewing history of 10,000 plays over those books (about a year, a play every 55 minutes),
    # and a second child to copy to.
    scripts/db.sh psql -d "$db" -qc "DELETE FROM plays WHERE child_id = $child;
        INSERT INTO plays (child_id, book_id, position_seconds, completed, played_at)
        SELECT $child, b.book_id, (g * 37) % 600, g % 5 = 0, now() - g * interval '55 minutes'
          FROM generate_series(1, 10000) g
          JOIN (SELECT book_id, row_number() OVER (ORDER BY book_id) - 1 AS k FROM library_entries WHERE child_id = $child) b ON b.k = g % 60;
        INSERT INTO children (added_by, name) SELECT added_by, 'Cy' FROM children WHERE id = $child
         AND NOT EXISTS (SELECT 1 FROM children c WHERE c.added_by = (SELECT added_by FROM children WHERE id = $child) AND c.name = 'Cy')" >/dev/null
    sibling=$(scripts/db.sh psql -d "$db" -tAc "SELECT id FROM children WHERE name = 'Cy' AND added_by = (SELECT added_by FROM children WHERE id = $child)")
    bulk_ids=$(scripts/db.sh psql -d "$db" -tAc "SELECT string_agg(book_id::text, ',') FROM library_entries WHERE child_id = $child")
    export BENCH_BODY="{\"action\": \"copy\", \"to_child_id\": $sibling, \"book_ids\": [$bulk_ids]}"
    scripts/db.sh psql -d "$db" -qc "VACUUM ANALYZE" >/dev/null
}

# start_app_server: serves the app (production mode) on a free port, waits for the catalog engine,
# signs in a parent and a console viewer; sets http, server, base, token, cookie.
start_app_server() {
    http=$((30000 + RANDOM % 10000))
    DATABASE_URL=$url $app serve --env production --hostname 127.0.0.1 --port $http > "$work/server.log" 2>&1 &
    server=$!
    for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$http/healthz" >/dev/null && break; sleep 0.2; done
    # The catalog engine builds in the background; measure once it serves.
    start=$(date +%s%N)
    for _ in $(seq 1 600); do curl -sf "http://127.0.0.1:$http/healthz" | grep -q '"engine":"ready"' && break; sleep 0.1; done
    echo "catalog engine ready at $n books: $(( ($(date +%s%N) - start) / 1000000 )) ms after /healthz; app RSS $(ps -o rss= -p $server | awk '{printf "%.0f MB", $1/1024}')" | tee -a "$work/seed.txt"
    base="http://127.0.0.1:$http"
    token=$(curl -sf -X POST "$base/api/v1/auth/token" -H 'Content-Type: application/json' \
        -d '{"email":"bench@bench.test","password":"bench password"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
    cookie=$(console_login bench@bench.test 'bench password')
}

# console_login EMAIL PASSWORD: signs in to the console and prints the session cookie's value. The
# cookie is Secure in production; curl keeps no Secure cookie over http, so it is carried by hand.
console_login() {
    curl -sf -D "$work/h1" -o "$work/login.html" "$base/admin/login"
    local sid csrf
    sid=$(grep -i '^set-cookie: storytime_session=' "$work/h1" | sed 's/.*storytime_session=//; s/;.*//' | tr -d '\r')
    csrf=$(grep -o 'name="csrf_token" value="[^"]*"' "$work/login.html" | head -1 | sed 's/.*value="//; s/"$//')
    curl -sf -D "$work/h2" -o /dev/null -H "Cookie: storytime_session=$sid" -X POST "$base/admin/login" \
        --data-urlencode "csrf_token=$csrf" --data-urlencode "email=$1" --data-urlencode "password=$2"
    grep -i '^set-cookie: storytime_session=' "$work/h2" | sed 's/.*storytime_session=//; s/;.*//' | tr -d '\r'
}

# mixed_paths: the realistic mix's ~6,000 distinct paths for $db, into $work/paths.txt (bench/mixed_paths.py).
mixed_paths() {
    scripts/db.sh psql -d "$db" -tAc "SELECT term FROM search_terms WHERE term NOT LIKE '~%' ORDER BY id" > "$work/words.txt"
    scripts/db.sh psql -d "$db" -tAc "SELECT slug FROM categories" > "$work/slugs.txt"
    scripts/db.sh psql -d "$db" -tAc "SELECT id FROM books WHERE status = 'active' ORDER BY random() LIMIT 3000" > "$work/ids.txt"
    python3 bench/mixed_paths.py "$work/words.txt" "$work/slugs.txt" "$work/ids.txt" "$work/paths.txt"
    SUGGEST=1 python3 bench/mixed_paths.py "$work/words.txt" "$work/slugs.txt" "$work/ids.txt" "$work/suggest.txt"
}

# content_writes RATE: pgbench's arguments for RATE catalog changes a second: each time one of a
# title edited, a book taken down, a book put in one more category, a book's rights narrowed to
# exclude a country — and undone a tenth of a second later (bench/writes/*.sql: two changes a
# script, each read by the engine on its own — an undo in the same breath would be no change at
# all — and the bench database is left as it was), on a random book of the $n. Real changes of what answers
# read: a write that changes nothing a list shows (a touch of updated_at) keeps every kept answer.
content_writes() {
    echo "-R $(python3 -c "print($1 / 2)") -D books=$n -f bench/writes/title.sql -f bench/writes/status.sql -f bench/writes/category.sql -f bench/writes/rights.sql"
}

# As-you-type suggestions (/catalog/suggest, ~2,000 distinct prefixes of 1-8 letters, a fifth
# after a first word), warm, one row.
suggest_mix() {
    PATHS="$work/suggest.txt" TOKEN="$token" wrk -t2 -c"$connections" -d"${duration}s" -s bench/mixed.lua "$base" > /dev/null 2>&1 || true
    PATHS="$work/suggest.txt" TOKEN="$token" wrk -t2 -c"$connections" -d"${duration}s" --latency -s bench/mixed.lua "$base" > "$work/wrk.txt" 2>&1 || true
    read -r r p50 p99 bad < <(parse_wrk "$work/wrk.txt")
    echo "| $n | suggest, as-you-type (warm) | $r | $p50 | $p99 | $bad | | |" >> "$results"
    printf '%-8s %-28s %8s req/s  p50 %7s ms  p99 %7s ms  non-2xx %s\n' "$n" "suggest, as-you-type" "$r" "$p50" "$p99" "$bad"
}

# wrk output → socket errors (connect + read + write + timeout)
socket_errors() {
    awk '/Socket errors/ { gsub(",", ""); s = $4 + $6 + $8 + $10 } END { print s + 0 }' "$1"
}

# wrk output → "req/s p50_ms p99_ms"
parse_wrk() {
    awk '
      function ms(v) { if (v ~ /us$/) return substr(v,1,length(v)-2)/1000; if (v ~ /ms$/) return substr(v,1,length(v)-2)+0;
                       if (v ~ /s$/) return substr(v,1,length(v)-1)*1000; return v }
      /Requests\/sec/ { rps=$2 } $1=="50%" { p50=ms($2) } $1=="99%" { p99=ms($2) }
      /Non-2xx/ { bad=$NF }
      END { printf "%.0f %.2f %.2f %s\n", rps, p50, p99, (bad==""?0:bad) }' "$1"
}

# The judged query set (bench/relevance/judged.tsv): nDCG@10 and recall@10 per kind of query,
# over the demo's classics (English, French, Spanish).
relevance_set() {
    echo "relevance of the judged set at $n books:" | tee -a "$results"
    python3 bench/relevance/judged.py score "$base" "$token" | tee -a "$results"
}

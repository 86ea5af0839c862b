#!/usr/bin/env bash
# The database restarted under the running app: while PostgreSQL is down, requests get quick 503
# problems (never hangs) and /healthz says 503; when it is back, the app serves again — reads and
# writes — without a restart. Run by `make test` after the Swift suites: it stops and starts the
# test cluster's postmaster, so it runs alone.
set -euo pipefail
cd "$(dirname "$0")/.."
. tests/lib.bash
db=st_outage
fresh_database $db
$app parent create --email outage@example.com --password 'outage password' --child Ada >/dev/null
$app seed demo --books 200 >/dev/null
start_app .build/outage-server.log
base="http://127.0.0.1:$port"
token=$(curl -sf -X POST "$base/api/v1/auth/token" -H 'Content-Type: application/json' \
    -d '{"email":"outage@example.com","password":"outage password"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
child=$(curl -sf "$base/api/v1/children" -H "Authorization: Bearer $token" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"][0]["id"])')
fail() { echo "outage: $*" >&2; scripts/db.sh up >/dev/null; exit 1; }

# status and seconds of one request
probe() { curl -s -o /dev/null -w '%{http_code} %{time_total}' --max-time 20 -H "Authorization: Bearer $token" "$base$1"; }

for q in owl moon bear the a; do
    read -r code _ <<<"$(probe "/api/v1/catalog/books?q=$q")"; [ "$code" = 200 ] || fail "before the outage: $code"
done

scripts/db.sh down
# A burst during the outage: the catalog (new and already-seen queries), a library, /healthz.
during=0 worst=0
for path in "/api/v1/catalog/books?q=owl" "/api/v1/catalog/books?q=zebra" "/api/v1/children/$child/library" "/api/v1/children" \
            "/api/v1/catalog/books/1" "/healthz" "/api/v1/catalog/books?page=3" "/api/v1/children/$child/stats"; do
    read -r code seconds <<<"$(probe "$path")"
    python3 -c "import sys; sys.exit(0 if float('$seconds') < 8 else 1)" || fail "$path took ${seconds}s during the outage"
    worst=$(python3 -c "print(max($worst, $seconds))")
    case "$code" in
        503) during=$((during + 1)) ;;
        200) ;;   # an answer the engine could give without the database is fine (none expected: every request reads the version)
        *) fail "$path answered $code during the outage" ;;
    esac
done
[ "$during" -ge 6 ] || fail "only $during of 8 requests were 503 during the outage"
problem=$(curl -s --max-time 10 -H "Authorization: Bearer $token" "$base/api/v1/catalog/books?q=owl")
echo "$problem" | grep -q '"code":"unavailable"' || fail "the outage answer is not the unavailable problem: $problem"

scripts/db.sh up >/dev/null
# Back by itself: within 30 s everything answers again, reads and a write.
for _ in $(seq 1 60); do
    read -r code _ <<<"$(probe "/healthz")"
    [ "$code" = 200 ] && break
    sleep 0.5
done
[ "$code" = 200 ] || fail "/healthz did not recover: $code"
for path in "/api/v1/catalog/books?q=owl" "/api/v1/children/$child/library" "/api/v1/catalog/books?q=zebra"; do
    read -r code _ <<<"$(probe "$path")"; [ "$code" = 200 ] || fail "after the outage $path answered $code"
done
book=$(curl -sf "$base/api/v1/catalog/books?per_page=1" -H "Authorization: Bearer $token" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"][0]["id"])')
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$base/api/v1/children/$child/library" -H "Authorization: Bearer $token" \
    -H 'Content-Type: application/json' -d "{\"book_id\": $book}")
case "$code" in 201|409|422) ;; *) fail "a write after the outage answered $code" ;; esac
kill $server 2>/dev/null || true
scripts/db.sh psql -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null
echo "outage: $during of 8 requests were 503 problems while PostgreSQL was down (slowest ${worst}s); served again without a restart"

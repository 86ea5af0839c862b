#!/usr/bin/env bash
# `make soak` (not in CI): the release app under SOAK_CONNECTIONS connections of the mixed catalog
# traffic (the bench's ~6,000 distinct paths) for SOAK_MINUTES, while the console archives and
# restores a random book every second (audited batch writes the catalog engine must follow).
# Reports per minute: req/s, p50, p99, non-2xx, socket errors, the app's resident memory; fails on
# any error or when memory at the end is more than 10 % above memory after the first minute.
#
#   SOAK_MINUTES=10  SOAK_CONNECTIONS=200  SOAK_BOOKS=100000  SOAK_SKIP_BUILD=1 (reuse the build)
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${SOAK_MINUTES:-10}
connections=${SOAK_CONNECTIONS:-200}
n=${SOAK_BOOKS:-100000}
command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
scripts/db.sh up >/dev/null
[ "${SOAK_SKIP_BUILD:-0}" = 1 ] || swift build -c release --product App $(scripts/release-flags.sh) >/dev/null
app=.build/release/App
export JWT_SECRET=bench-jwt-secret-0123456789abcdefghijklmn SESSION_SECRET=bench-session-secret-0123456789abcdefghij \
    PLAYBACK_SIGNING_KEY=bench-playback-key-0123456789abcdefghijklm VIDEO_WEBHOOK_SECRET=bench-video-webhook-secret-0123456789abcdef \
    STAFF_2FA_KEY=bench-staff-2fa-key-0123456789abcdefghijklmn
# The load is a few accounts at thousands of requests a second: no per-account budget.
export LOG_LEVEL=error BCRYPT_COST=4 RATE_LIMIT_REQUESTS=0
mkdir -p bench/results
work=$(mktemp -d)
server= writer=
trap '[ -n "$writer" ] && kill $writer 2>/dev/null; [ -n "$server" ] && kill $server 2>/dev/null; rm -rf "$work"' EXIT
. bench/lib.bash

prepare_db "$n"
start_app_server
mixed_paths

# The console writer: a viewer cannot write, so an editor of its own.
DATABASE_URL=$url $app staff create --email soak@bench.test --password 'soak password' --role editor >/dev/null 2>&1 || true
editor=$(console_login soak@bench.test 'soak password')
csrf=$(curl -sf -H "Cookie: storytime_session=$editor" "$base/admin/books" | grep -o 'name="csrf_token" value="[^"]*"' | head -1 | sed 's/.*value="//; s/"$//')
# Books the writer flips are never among the paths' detail ids (an archived book's detail is a correct 404).
python3 - "$work/ids.txt" > "$work/shown.sql" <<'PY'
import sys
ids = [line.strip() for line in open(sys.argv[1]) if line.strip()]
print("SELECT id FROM books WHERE status = 'active' AND id NOT IN (" + ",".join(ids) + ") ORDER BY random() LIMIT 500")
PY
scripts/db.sh psql -d "$db" -tA -f "$work/shown.sql" > "$work/flip.txt"
(
    ids=($(cat "$work/flip.txt")); i=0; failed=0
    while true; do
        id=${ids[$((RANDOM % ${#ids[@]}))]}
        for status in archived active; do
            code=$(curl -s -o /dev/null -w '%{http_code}' -H "Cookie: storytime_session=$editor" -X POST "$base/admin/books/batch" \
                --data-urlencode "csrf_token=$csrf" --data-urlencode "action=set_status" --data-urlencode "target_set_status=$status" \
                --data-urlencode "ids[]=$id")
            case "$code" in 303|302|200) i=$((i + 1)) ;; *) failed=$((failed + 1)) ;; esac
            echo "$i $failed" > "$work/writes.txt"
            sleep 0.5
        done
    done
) &
writer=$!

rss() { ps -o rss= -p "$server" | awk '{printf "%.0f", $1/1024}'; }
results=bench/results/soak-$(date -u +%Y%m%dT%H%M%SZ).md
{
  echo "# make soak $(date -u +%FT%TZ) — $n books, $connections connections, $minutes minutes, console writes 2/s"
  echo
  echo "| minute | req/s | p50 ms | p99 ms | non-2xx | socket errors | app RSS MB |"
  echo "|---:|---:|---:|---:|---:|---:|---:|"
} > "$results"
echo "app RSS before the load: $(rss) MB"
errors=0 first_rss= last_rss=
for minute in $(seq 1 "$minutes"); do
    PATHS="$work/paths.txt" TOKEN="$token" wrk -t2 -c"$connections" -d60s --latency --timeout 10s -s bench/mixed.lua "$base" > "$work/wrk.txt" 2>&1 || true
    read -r r p50 p99 bad < <(parse_wrk "$work/wrk.txt")
    socket=$(socket_errors "$work/wrk.txt")
    mem=$(rss)
    [ -z "$first_rss" ] && first_rss=$mem
    last_rss=$mem
    errors=$((errors + bad + socket))
    echo "| $minute | $r | $p50 | $p99 | $bad | $socket | $mem |" >> "$results"
    printf 'minute %3s  %8s req/s  p50 %7s ms  p99 %7s ms  non-2xx %s  socket errors %s  RSS %s MB\n' "$minute" "$r" "$p50" "$p99" "$bad" "$socket" "$mem"
done
read -r writes write_failures < "$work/writes.txt"
growth=$(python3 -c "print(f'{($last_rss - $first_rss) * 100 / $first_rss:+.1f}')")
{
  echo
  echo "console writes: $writes done, $write_failures failed; request errors: $errors; RSS after minute 1: $first_rss MB, at the end: $last_rss MB ($growth %)"
} | tee -a "$results"
echo "written to $results"
python3 -c "import sys; sys.exit(0 if $errors == 0 and $write_failures == 0 and $last_rss <= $first_rss * 1.10 else 1)" || { echo "soak FAILED" >&2; exit 1; }
echo "soak passed"

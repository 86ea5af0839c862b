# Shared by the suites that run the built app: a fresh, migrated database and a served app.
# Source it; it sets $app, $DATABASE_URL and (after start_app) $port and $server.

app=.build/debug/App
# Fuzzers and drills send thousands of requests with one token: no per-account budget.
export BCRYPT_COST=4 LOG_LEVEL=warning RATE_LIMIT_REQUESTS=0

# fresh_database NAME: drops, creates and migrates NAME; exports DATABASE_URL for it.
fresh_database() {
    scripts/db.sh psql -d postgres -c "DROP DATABASE IF EXISTS $1 WITH (FORCE)" >/dev/null
    scripts/db.sh psql -d postgres -c "CREATE DATABASE $1" >/dev/null
    DATABASE_URL=$(scripts/db.sh url "$1")
    export DATABASE_URL
    $app migrate >/dev/null
}

# start_app LOGFILE: serves the app on a free loopback port and waits until /readyz answers 200
# (the database answers and the catalog engine is built), as a load balancer would.
start_app() {
    port=$((20000 + RANDOM % 20000))
    while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
    $app serve --hostname 127.0.0.1 --port "$port" > "$1" 2>&1 &
    server=$!
    trap 'kill $server 2>/dev/null || true' EXIT
    for _ in $(seq 1 300); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && return 0; sleep 0.2; done
    echo "the app did not start:" >&2
    cat "$1" >&2
    return 1
}

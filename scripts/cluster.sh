#!/usr/bin/env bash
# `make cluster`: Storytime as it runs in production, on this machine — two app instances behind
# nginx on one port (round-robin), on the local PostgreSQL (the primary) and a streaming read
# replica made from it with `pg_basebackup -R`, which the instances use for the parent catalog's
# reads (DATABASE_READ_URL). Both instances run `migrate` at once (one applies, the other waits
# on the migrator's advisory lock). Runs until Ctrl-C, then stops what it started (the replica's
# data stays for the next run). CLUSTER_CHECK=1: check the cluster, print what it saw, and stop.
#
# Instances share one engine snapshot (var/cluster/engine.snapshot), so a restarted instance
# serves from its engine within a second or two. nginx keeps an instance out of rotation while it
# is not ready by passive checks: a starting instance answers catalog requests with a fast 503
# `engine_starting` (CATALOG_FALLBACK_CONCURRENCY=0) and a stopped one refuses connections; nginx
# retries either on the other instance (`proxy_next_upstream error timeout http_503`) and leaves
# the failed one alone for `fail_timeout`. Open-source nginx has no active health checks, and a
# reload to take a server out would close clients' idle keep-alive connections mid-race.
#
#   scripts/cluster.sh restart   rolling restart of a running cluster: one instance at a time,
#                                each stopped gracefully, started, and waited for on /readyz;
#                                CLUSTER_APP=path/to/App deploys that binary the same way
#
#   CLUSTER_PORT=8090   nginx's port; the instances take the next two
#   CLUSTER_BUILD=debug or release;  CLUSTER_DATABASE=storytime;  CLUSTER_REPLICA=1 (0: no replica)
#   CLUSTER_STATE=var/cluster (pids, logs, the shared snapshot)
set -euo pipefail
cd "$(dirname "$0")/.."
port=${CLUSTER_PORT:-8090}
state=${CLUSTER_STATE:-var/cluster}
build=${CLUSTER_BUILD:-debug}
app=.build/$build/App

# start_instance PORT: one instance in its own session (a restart outlives the shell that made it).
start_instance() {
    ( set -a; . "$state/env"; set +a
      exec setsid "$app" serve --hostname 127.0.0.1 --port "$1" >> "$state/app-$1.log" 2>&1 < /dev/null ) &
    echo $! > "$state/pid-$1"
}

# wait_ready PORT [SECONDS]: until /readyz says 200; prints the seconds it took.
wait_ready() {
    local start=$(date +%s%N) limit=$(( ${2:-300} * 10 ))
    for _ in $(seq 1 "$limit"); do
        curl -sf -o /dev/null "http://127.0.0.1:$1/readyz" && { echo "$(( ($(date +%s%N) - start) / 1000000 ))"; return 0; }
        sleep 0.1
    done
    echo "cluster: instance $1 not ready after ${2:-300} s; see $state/app-$1.log" >&2
    return 1
}

# stop_instance PORT: SIGTERM (finish what is under way, write the engine snapshot), then wait.
stop_instance() {
    local pid
    pid=$(cat "$state/pid-$1" 2>/dev/null) || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
}

if [ "${1:-}" = restart ]; then
    [ -f "$state/ports" ] || { echo "cluster: none running (no $state/ports); start one with make cluster" >&2; exit 1; }
    # The binary the cluster runs, or a new one to deploy (CLUSTER_APP=path): each restarted
    # instance runs it from then on.
    app=${CLUSTER_APP:-$(cat "$state/app")}
    echo "$app" > "$state/app"
    for p in $(cat "$state/ports"); do
        begin=$(date +%s%N)
        stop_instance "$p"
        stopped=$(( ($(date +%s%N) - begin) / 1000000 ))
        start_instance "$p"
        ready=$(wait_ready "$p")
        echo "instance $p: stopped in $stopped ms, ready $ready ms after its start"
        # nginx takes a server it marked failed back only after fail_timeout (2 s): wait it out
        # before the next instance goes, so one is always in rotation.
        sleep 3
    done
    exit 0
fi
pgbin=${PGBIN:-/usr/lib/postgresql/15/bin}
as_pg() { if [ "$(id -u)" = 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi; }
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null; }
nginx=$(command -v nginx || echo /usr/sbin/nginx)

# The primary: the development cluster and database.
scripts/db.sh up >/dev/null
scripts/db.sh ensure storytime
primary_port=$(scripts/db.sh port)
primary_dir=$(scripts/db.sh dir)

# The replica: a base backup of the primary that streams its WAL (standby.signal and
# primary_conninfo written by -R), on its own port.
replica_dir=${primary_dir}-replica
if [ "${CLUSTER_REPLICA:-1}" = 1 ] && [ ! -f "$replica_dir/standby.signal" ]; then
    rm -rf "$replica_dir"
    mkdir -p "$replica_dir" && chown postgres:postgres "$replica_dir" 2>/dev/null || true
    as_pg "$pgbin/pg_basebackup" -D "$replica_dir" -R -X stream -c fast -h 127.0.0.1 -p "$primary_port" -U postgres 2>&1 | grep -v 'skipping special file' >&2 || true
    chmod 700 "$replica_dir"
    replica_port=$((primary_port + 1))
    while port_in_use "$replica_port"; do replica_port=$((replica_port + 1)); done
    printf "port = %s\nunix_socket_directories = '%s'\nhot_standby = on\n" "$replica_port" "$replica_dir" | as_pg tee -a "$replica_dir/postgresql.conf" >/dev/null
fi
replica_port=
if [ "${CLUSTER_REPLICA:-1}" = 1 ]; then
    replica_port=$(grep '^port = ' "$replica_dir/postgresql.conf" | tail -1 | awk '{print $3}')
    as_pg "$pgbin/pg_ctl" -D "$replica_dir" status >/dev/null 2>&1 || as_pg "$pgbin/pg_ctl" -D "$replica_dir" -l "$replica_dir/server.log" -w -t 60 start >/dev/null
fi

database=${CLUSTER_DATABASE:-storytime}
export DATABASE_URL="postgres://postgres@127.0.0.1:$primary_port/$database"
[ "${CLUSTER_REPLICA:-1}" = 1 ] && export DATABASE_READ_URL="postgres://postgres@127.0.0.1:$replica_port/$database"
export TRUSTED_PROXIES=127.0.0.1
flags=""
[ "$build" = release ] && flags=$(scripts/release-flags.sh)
[ "${CLUSTER_SKIP_BUILD:-0}" = 1 ] || swift build -c "$build" --product App $flags >/dev/null

work=$(mktemp -d)
pids=()
instances=($((port + 1)) $((port + 2)))
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for p in "${instances[@]}"; do stop_instance "$p"; done
    wait 2>/dev/null || true
    rm -f "$state/ports" "$state/ready" "$state/app"
    [ "${CLUSTER_REPLICA:-1}" = 1 ] && { as_pg "$pgbin/pg_ctl" -D "$replica_dir" -m fast stop >/dev/null 2>&1 || true; }
    rm -rf "$work"
}
trap cleanup EXIT

# Both instances migrate at once: the migrator's advisory lock lets one apply, the other wait.
$app migrate > "$work/migrate-a.log" 2>&1 & a=$!
$app migrate > "$work/migrate-b.log" 2>&1 & b=$!
wait $a && wait $b || { cat "$work"/migrate-*.log >&2; exit 1; }
if [ "$database" = storytime ]; then
    $app seed categories >/dev/null
    $app seed demo --books "${DEMO_BOOKS:-2000}" --if-empty --credentials-file .secrets/demo-credentials.txt >/dev/null
fi

# What every instance (and a restart of one) starts with (without secrets in the environment,
# the development ones in .secrets/, shared by both).
mkdir -p "$state"
rm -f "$state/ready"
{
    for name in DATABASE_URL DATABASE_READ_URL TRUSTED_PROXIES JWT_SECRET SESSION_SECRET PLAYBACK_SIGNING_KEY PLAYBACK_BASE_URL VIDEO_WEBHOOK_SECRET STAFF_2FA_KEY LOG_LEVEL BCRYPT_COST RATE_LIMIT_REQUESTS RATE_LIMIT_WINDOW_SECONDS CORS_ORIGINS; do
        [ -n "${!name:-}" ] && printf '%s=%q\n' "$name" "${!name}"
    done
    printf 'ENGINE_SNAPSHOT_PATH=%q\nCATALOG_FALLBACK_CONCURRENCY=0\n' "$(cd "$state" && pwd)/engine.snapshot"
} > "$state/env"
echo "${instances[*]}" > "$state/ports"
echo "$app" > "$state/app"
for p in "${instances[@]}"; do
    : > "$state/app-$p.log"
    start_instance "$p"
done

mkdir -p "$work/nginx"
cat > "$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/nginx-error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $work/nginx/body;
    proxy_temp_path $work/nginx/proxy;
    fastcgi_temp_path $work/nginx/fastcgi;
    uwsgi_temp_path $work/nginx/uwsgi;
    scgi_temp_path $work/nginx/scgi;
    # Cover renditions are immutable (content-hash names): nginx keeps them, the instances serve each once.
    proxy_cache_path $work/nginx/covers levels=1:2 keys_zone=covers:10m max_size=1g inactive=30d use_temp_path=off;
    upstream storytime {
        server 127.0.0.1:${instances[0]} max_fails=1 fail_timeout=2s;
        server 127.0.0.1:${instances[1]} max_fails=1 fail_timeout=2s;
        # When both are marked failed (one restarting, one that failed a request meanwhile), nginx
        # would answer 502 at once; the same instances as backups, never marked, are tried instead.
        server 127.0.0.1:${instances[0]} backup max_fails=0;
        server 127.0.0.1:${instances[1]} backup max_fails=0;
        keepalive 32;
    }
    server {
        listen 127.0.0.1:$port;
        # A cover upload is up to 10 MB (the console's form around it, 11).
        client_max_body_size 12m;
        location /covers/ {
            proxy_pass http://storytime;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_cache covers;
            proxy_cache_valid 200 30d;
            proxy_cache_lock on;
            add_header X-Cache \$upstream_cache_status always;
        }
        location / {
            proxy_pass http://storytime;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host \$host;
            proxy_set_header X-Forwarded-For \$remote_addr;
            proxy_next_upstream error timeout http_503;
            proxy_next_upstream_tries 2;
            add_header X-Upstream \$upstream_addr always;
        }
    }
}
CONF
"$nginx" -c "$work/nginx.conf" -p "$work" -g 'daemon off;' > "$work/nginx.log" 2>&1 &
pids+=($!)

base="http://127.0.0.1:$port"
for p in "${instances[@]}"; do wait_ready "$p" >/dev/null; done
upstreams=$(for _ in 1 2 3 4; do curl -s -o /dev/null -D - "$base/healthz" | grep -i '^x-upstream' | tr -d '\r' | awk '{print $2}'; done | sort -u | tr '\n' ' ')
lag=$(scripts/db.sh psql -d postgres -tAc "SELECT COALESCE(max(pg_wal_lsn_diff(sent_lsn, replay_lsn)), -1) FROM pg_stat_replication")
echo "Storytime cluster: $base (console $base/admin, API $base/api/v1) → instances ${instances[*]}; upstreams seen: $upstreams"
echo "primary 127.0.0.1:$primary_port, replica ${replica_port:+127.0.0.1:$replica_port (streaming, replay lag $lag bytes)}; logs in $state and $work"
touch "$state/ready"
if [ "${CLUSTER_CHECK:-0}" = 1 ]; then
    [ "$(echo $upstreams | wc -w)" = 2 ] || { echo "cluster: nginx reached $(echo $upstreams | wc -w) of 2 instances" >&2; exit 1; }
    [ "$lag" != -1 ] || [ -z "$replica_port" ] || { echo "cluster: the replica is not streaming" >&2; exit 1; }
    [ -z "$replica_port" ] && { echo "cluster: ok (no replica)"; exit 0; }
    replica_version=$(psql -X -h 127.0.0.1 -p "$replica_port" -U postgres -d storytime -tAc "SELECT version FROM catalog_state")
    echo "cluster: ok (replica at catalog version $replica_version, in recovery: $(psql -X -h 127.0.0.1 -p "$replica_port" -U postgres -d storytime -tAc 'SELECT pg_is_in_recovery()'))"
    exit 0
fi
echo "Ctrl-C stops the instances, nginx and the replica; scripts/cluster.sh restart restarts the instances one at a time."
wait "${pids[@]}"

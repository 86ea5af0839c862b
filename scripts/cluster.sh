#!/usr/bin/env bash
# `make cluster`: Storytime as it runs in production, on this machine — two app instances behind
# nginx on one port (round-robin), on the local PostgreSQL (the primary) and a streaming read
# replica made from it with `pg_basebackup -R`, which the instances use for the parent catalog's
# reads (DATABASE_READ_URL). Both instances run `migrate` at once (one applies, the other waits
# on the migrator's advisory lock). Runs until Ctrl-C, then stops what it started (the replica's
# data stays for the next run). CLUSTER_CHECK=1: check the cluster, print what it saw, and stop.
#
#   CLUSTER_PORT=8090   nginx's port; the instances take the next two
set -euo pipefail
cd "$(dirname "$0")/.."
port=${CLUSTER_PORT:-8090}
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
if [ ! -f "$replica_dir/standby.signal" ]; then
    rm -rf "$replica_dir"
    mkdir -p "$replica_dir" && chown postgres:postgres "$replica_dir" 2>/dev/null || true
    as_pg "$pgbin/pg_basebackup" -D "$replica_dir" -R -X stream -c fast -h 127.0.0.1 -p "$primary_port" -U postgres 2>&1 | grep -v 'skipping special file' >&2 || true
    chmod 700 "$replica_dir"
    replica_port=$((primary_port + 1))
    while port_in_use "$replica_port"; do replica_port=$((replica_port + 1)); done
    printf "port = %s\nunix_socket_directories = '%s'\nhot_standby = on\n" "$replica_port" "$replica_dir" | as_pg tee -a "$replica_dir/postgresql.conf" >/dev/null
fi
replica_port=$(grep '^port = ' "$replica_dir/postgresql.conf" | tail -1 | awk '{print $3}')
as_pg "$pgbin/pg_ctl" -D "$replica_dir" status >/dev/null 2>&1 || as_pg "$pgbin/pg_ctl" -D "$replica_dir" -l "$replica_dir/server.log" -w -t 60 start >/dev/null

export DATABASE_URL="postgres://postgres@127.0.0.1:$primary_port/storytime"
export DATABASE_READ_URL="postgres://postgres@127.0.0.1:$replica_port/storytime"
export TRUSTED_PROXIES=127.0.0.1
[ "${CLUSTER_SKIP_BUILD:-0}" = 1 ] || swift build --product App >/dev/null
app=.build/debug/App

work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    as_pg "$pgbin/pg_ctl" -D "$replica_dir" -m fast stop >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

# Both instances migrate at once: the migrator's advisory lock lets one apply, the other wait.
$app migrate > "$work/migrate-a.log" 2>&1 & a=$!
$app migrate > "$work/migrate-b.log" 2>&1 & b=$!
wait $a && wait $b || { cat "$work"/migrate-*.log >&2; exit 1; }
$app seed categories >/dev/null
$app seed demo --books "${DEMO_BOOKS:-2000}" --if-empty --credentials-file .secrets/demo-credentials.txt >/dev/null

instances=($((port + 1)) $((port + 2)))
for p in "${instances[@]}"; do
    $app serve --hostname 127.0.0.1 --port "$p" > "$work/app-$p.log" 2>&1 &
    pids+=($!)
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
    upstream storytime {
        server 127.0.0.1:${instances[0]} max_fails=1 fail_timeout=5s;
        server 127.0.0.1:${instances[1]} max_fails=1 fail_timeout=5s;
        keepalive 32;
    }
    server {
        listen 127.0.0.1:$port;
        client_max_body_size 1m;
        location / {
            proxy_pass http://storytime;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host \$host;
            proxy_set_header X-Forwarded-For \$remote_addr;
            proxy_next_upstream error timeout;
            add_header X-Upstream \$upstream_addr always;
        }
    }
}
CONF
"$nginx" -c "$work/nginx.conf" -p "$work" -g 'daemon off;' > "$work/nginx.log" 2>&1 &
pids+=($!)

base="http://127.0.0.1:$port"
for _ in $(seq 1 150); do curl -sf "$base/healthz" >/dev/null 2>&1 && break; sleep 0.2; done
for p in "${instances[@]}"; do
    for _ in $(seq 1 150); do curl -sf "http://127.0.0.1:$p/healthz" >/dev/null 2>&1 && break; sleep 0.2; done
done
upstreams=$(for _ in 1 2 3 4; do curl -s -o /dev/null -D - "$base/healthz" | grep -i '^x-upstream' | tr -d '\r' | awk '{print $2}'; done | sort -u | tr '\n' ' ')
lag=$(scripts/db.sh psql -d postgres -tAc "SELECT COALESCE(max(pg_wal_lsn_diff(sent_lsn, replay_lsn)), -1) FROM pg_stat_replication")
echo "Storytime cluster: $base (console $base/admin, API $base/api/v1) → instances ${instances[*]}; upstreams seen: $upstreams"
echo "primary 127.0.0.1:$primary_port, replica 127.0.0.1:$replica_port (streaming, replay lag $lag bytes); logs in $work"
if [ "${CLUSTER_CHECK:-0}" = 1 ]; then
    [ "$(echo $upstreams | wc -w)" = 2 ] || { echo "cluster: nginx reached $(echo $upstreams | wc -w) of 2 instances" >&2; exit 1; }
    [ "$lag" != -1 ] || { echo "cluster: the replica is not streaming" >&2; exit 1; }
    replica_version=$(psql -X -h 127.0.0.1 -p "$replica_port" -U postgres -d storytime -tAc "SELECT version FROM catalog_state")
    echo "cluster: ok (replica at catalog version $replica_version, in recovery: $(psql -X -h 127.0.0.1 -p "$replica_port" -U postgres -d storytime -tAc 'SELECT pg_is_in_recovery()'))"
    exit 0
fi
echo "Ctrl-C stops the instances, nginx and the replica."
wait

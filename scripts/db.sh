#!/usr/bin/env bash
# Local PostgreSQL 15 cluster for development and tests, inside the checkout (git-ignored).
# Usage: scripts/db.sh up|down|url [dbname]|ensure DBNAME|reset DBNAME|dir|port
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
pgbin=${PGBIN:-/usr/lib/postgresql/15/bin}

# The postgres OS user must be able to reach the data folder; under /root it cannot, so use a
# folder under /var/tmp keyed by the checkout's path.
key=$(printf '%s' "$here" | cksum | cut -d' ' -f1)
if [ "$(id -u)" = 0 ] && ! runuser -u postgres -- test -x "$here" 2>/dev/null; then
    datadir=${PGDATA_DIR:-/var/tmp/storytime-pg-$key}
else
    datadir=${PGDATA_DIR:-$here/.pgdata}
fi
# A port per checkout, so two clones (say, a CI dry run beside a dev tree) never collide. A
# cluster remembers the port it was created with (the next free one, if the derived one was taken).
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
if [ -n "${PGPORT_LOCAL:-}" ]; then
    port=$PGPORT_LOCAL
elif [ -f "$datadir/postgresql.conf" ] && grep -q '^port = ' "$datadir/postgresql.conf" 2>/dev/null; then
    port=$(grep '^port = ' "$datadir/postgresql.conf" | tail -1 | awk '{print $3}')
else
    port=$((55000 + key % 4000))
fi

as_pg() {
    if [ "$(id -u)" = 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

ensure_installed() {
    if [ ! -x "$pgbin/initdb" ]; then
        echo "PostgreSQL 15 not found; installing it" >&2
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15 postgresql-contrib-15 >/dev/null
    fi
}

up() {
    ensure_installed
    mkdir -p "$datadir"
    [ "$(id -u)" = 0 ] && chown postgres:postgres "$datadir"
    if [ ! -f "$datadir/PG_VERSION" ]; then
        while port_in_use "$port"; do port=$((port + 1)); done
        as_pg "$pgbin/initdb" -D "$datadir" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
        cat >> "$datadir/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$datadir'
max_connections = 300
shared_buffers = 512MB
jit = off
CONF
        if [ "${PG_FAST:-0}" = 1 ]; then
            # Tests: disposable data, and every parallel test's pool at once (a database per test).
            printf 'fsync = off\nsynchronous_commit = off\nfull_page_writes = off\nmax_connections = 600\n' >> "$datadir/postgresql.conf"
        fi
    fi
    if ! as_pg "$pgbin/pg_ctl" -D "$datadir" status >/dev/null 2>&1; then
        as_pg "$pgbin/pg_ctl" -D "$datadir" -l "$datadir/server.log" -w -t 60 start >/dev/null
    fi
}

psql_() { PGOPTIONS="--client-min-messages=warning" psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres "$@"; }

case "${1:-}" in
    up) up; echo "PostgreSQL on 127.0.0.1:$port (data in $datadir)" ;;
    down) as_pg "$pgbin/pg_ctl" -D "$datadir" -m fast stop >/dev/null 2>&1 || true ;;
    url) echo "postgres://postgres@127.0.0.1:$port/${2:-storytime}" ;;
    ensure)
        exists=$(psql_ -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$2'")
        [ "$exists" = 1 ] || psql_ -d postgres -c "CREATE DATABASE \"$2\"" ;;
    reset)
        psql_ -d postgres -c "DROP DATABASE IF EXISTS \"$2\" WITH (FORCE)"
        psql_ -d postgres -c "CREATE DATABASE \"$2\"" ;;
    psql) shift; psql_ "$@" ;;
    dir) echo "$datadir" ;;
    port) echo "$port" ;;
    *) echo "usage: $0 up|down|url [db]|ensure DB|reset DB|psql ARGS|dir|port" >&2; exit 2 ;;
esac

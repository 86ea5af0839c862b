# Sourced by bench/run.sh: instances that start while the mixed traffic is already arriving — a
# deploy, a crash restart, an instance added for the evening peak.

# cold_start WARM: the app stopped and started again with the realistic mix (32 connections)
# beginning as soon as /livez answers, in 5-second slices: once building its engine from SQL (no
# snapshot), once from the snapshot the running app wrote ($snapshot). WARM is the warm mix's
# req/s in this run: each slice's share of it is the figure. Leaves the app running ($server).
cold_start() {
    local warm=$1 mode slices=${COLD_SLICES:-4} i path t0 live r p50 p99 bad socket share ready poller size loaded
    for mode in build snapshot; do
        kill $server 2>/dev/null; wait $server 2>/dev/null || true
        path=$snapshot
        [ "$mode" = build ] && { path=$work/no-snapshot; rm -f "$path"; }
        ENGINE_SNAPSHOT_PATH=$path DATABASE_URL=$url $app serve --env production --hostname 127.0.0.1 --port $http > "$work/server.log" 2>&1 &
        server=$!
        t0=$(date +%s%N)
        until curl -sf -o /dev/null "$base/livez"; do sleep 0.02; done
        live=$(( ($(date +%s%N) - t0) / 1000000 ))
        rm -f "$work/ready-ms"
        ( until curl -sf -o /dev/null --max-time 2 "$base/readyz"; do sleep 0.05; done; echo $(( ($(date +%s%N) - t0) / 1000000 )) > "$work/ready-ms" ) &
        poller=$!
        for i in $(seq 1 "$slices"); do
            PATHS="$work/paths.txt" TOKEN="$token" wrk -t2 -c"$connections" -d5s --latency --timeout 5s -s bench/mixed.lua "$base" > "$work/wrk.txt" 2>&1 || true
            read -r r p50 p99 bad < <(parse_wrk "$work/wrk.txt")
            socket=$(socket_errors "$work/wrk.txt")
            share=$(python3 -c "print(f'{${r:-0} * 100 / max(${warm:-0}, 1):.0f}')")
            echo "| $n | cold start, $mode: seconds $(( (i - 1) * 5 ))–$(( i * 5 )) after /livez | $r | $p50 | $p99 | $bad | | $share % of warm; $socket socket errors |" >> "$results"
            printf '%-8s cold start, %-8s %2s–%2s s %8s req/s (%s %% of warm)  p99 %7s ms  non-2xx %s  socket errors %s\n' \
                "$n" "$mode" $(( (i - 1) * 5 )) $(( i * 5 )) "$r" "$share" "$p99" "$bad" "$socket"
        done
        wait $poller 2>/dev/null || true
        ready=$(cat "$work/ready-ms" 2>/dev/null || echo "not ready")
        loaded=$(curl -sf "$base/healthz" | grep -oE '"load_seconds":[0-9.]+' | grep -oE '[0-9.]+$' || true)
        size=$(du -m "$snapshot" 2>/dev/null | awk '{print $1}' || true)
        echo "cold start at $n books, $mode: /livez $live ms after exec, /readyz $ready ms after /livez$( [ "$mode" = snapshot ] && echo "; snapshot ${size} MB loaded in ${loaded:-?} s; app RSS $(ps -o rss= -p $server | awk '{printf "%.0f MB", $1/1024}')")" \
            | tee -a "$work/seed.txt"
    done
}

# deploy_drill: `make cluster` (release, two instances and nginx, on this bench database, no
# replica) under the realistic mix through nginx, while `scripts/cluster.sh restart` restarts
# both instances in turn (after a warm-up run), in 5-second slices from 5 s before the restart to
# two slices after it ends. Errors and p99 are
# what families behind the front would see. Stops the bench's own app first (CPU is shared).
deploy_drill() {
    kill $server 2>/dev/null; wait $server 2>/dev/null || true; server=
    local front=$((20000 + RANDOM % 5000)) state=$work/cluster cluster restarter i=0 after=0 total=0 errors=0 sockets=0 worst=0 r p50 p99 bad socket
    export CLUSTER_PORT=$front CLUSTER_BUILD=$build CLUSTER_SKIP_BUILD=1 CLUSTER_DATABASE=$db CLUSTER_REPLICA=0 CLUSTER_STATE=$state
    scripts/cluster.sh > "$work/cluster.log" 2>&1 &
    cluster=$!
    for _ in $(seq 1 3000); do [ -f "$state/ready" ] && break; kill -0 $cluster 2>/dev/null || break; sleep 0.2; done
    [ -f "$state/ready" ] || { echo "deploy drill: the cluster did not start" >&2; cat "$work/cluster.log" >&2; return 1; }
    local front_url="http://127.0.0.1:$front"
    # Warm both instances' answers first (not reported): the restart, not a cold cluster, is measured.
    PATHS="$work/paths.txt" TOKEN="$token" wrk -t2 -c"$connections" -d"${duration}s" -s bench/mixed.lua "$front_url" > /dev/null 2>&1 || true
    ( sleep 5; scripts/cluster.sh restart > "$work/restart.txt" 2>&1; echo done >> "$work/restart.txt" ) &
    restarter=$!
    while true; do
        i=$((i + 1))
        PATHS="$work/paths.txt" TOKEN="$token" wrk -t2 -c"$connections" -d5s --latency --timeout 5s -s bench/mixed.lua "$front_url" > "$work/wrk.txt" 2>&1 || true
        read -r r p50 p99 bad < <(parse_wrk "$work/wrk.txt")
        socket=$(socket_errors "$work/wrk.txt")
        errors=$((errors + bad)); sockets=$((sockets + socket))
        worst=$(python3 -c "print(max($worst, ${p99:-0}))")
        echo "| $n | rolling restart through nginx: seconds $(( (i - 1) * 5 ))–$(( i * 5 )) | $r | $p50 | $p99 | $bad | | $socket socket errors |" >> "$results"
        printf '%-8s rolling restart %3s–%3s s %8s req/s  p99 %7s ms  non-2xx %s  socket errors %s\n' "$n" $(( (i - 1) * 5 )) $(( i * 5 )) "$r" "$p99" "$bad" "$socket"
        if grep -q '^done' "$work/restart.txt" 2>/dev/null; then after=$((after + 1)); fi
        if [ $after -ge 2 ] || [ $i -ge 60 ]; then break; fi
    done
    wait $restarter 2>/dev/null || true
    echo "rolling restart at $n books: $(grep '^instance' "$work/restart.txt" | tr '\n' ';' || true) through nginx: $errors non-2xx, $sockets socket errors, worst 5-s p99 $worst ms" \
        | tee -a "$work/seed.txt"
    kill $cluster 2>/dev/null; wait $cluster 2>/dev/null || true
    unset CLUSTER_PORT CLUSTER_BUILD CLUSTER_SKIP_BUILD CLUSTER_DATABASE CLUSTER_REPLICA CLUSTER_STATE
}

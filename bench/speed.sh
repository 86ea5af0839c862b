# Sourced by bench/run.sh: `BENCH_ONLY=speed` — the figures of a child's tablet and of one-off
# searches, each beside its own base row taken in the same run, with the /livez floor of that run
# (a slow base row makes any ratio look good: the base is printed as a share of the floor).
#
# Rows: the floor; parents' repeated mix with 10 content writes/s (base A); the same from 40
# tablets paired to children with controls (max age 8, one blocked category), from one tablet,
# and from the parent's token with child_id on every catalog request (each ÷ A); parents'
# repeated mix without writes (base B); the one-off mix (~150,000 distinct paths, mostly
# searches never asked before in this run) (÷ B); the repeated mix with a third of its requests in
# French (÷ B); the 40 tablets again without writes (÷ B: what they compute that no write
# caused — first asks of their scopes' answers). Each row also prints the server's own CPU per
# request (user + system time from /proc over the requests wrk completed) and each compared row
# the same ratio by that CPU, which the shared machine's other load moves less. Then the engine's per-step profile
# (`App engine profile`): what each step of a list answer costs, kept and one-off, scoped or not.
speed_mix() {
    local floor baseA baseB cpuA cpuB r p50 p99 bad ratio writer
    # name | paths | tokens file ('' = the parent) | writes/s | base (A, B or '' = this row is the base)
    local rows=(
      "parents, repeated mix, 10 writes/s|paths|-|10|A"
      "40 tablets (max age 8, one blocked category), 10 writes/s|paths|tokens|10|vsA"
      "one tablet, 10 writes/s|paths|one-token|10|vsA"
      "parent token with child_id on every list, 10 writes/s|child-id-paths|-|10|vsA"
      "parents, repeated mix, 0 writes/s|paths|-|0|B"
      "one-off mix (~150k distinct paths), 0 writes/s|oneoff|-|0|vsB"
      "repeated mix, a third of requests in French (locale=fr), 0 writes/s|fr-paths|-|0|vsB"
      "40 tablets, 0 writes/s|paths|tokens|0|vsB"
    )
    # BENCH_ONEOFF_REPEAT=N: only B and the one-off mix, alternated N times in this server (what
    # one row hides: once the memos are full their generations turn, docs/performance.md); no
    # engine profile.
    if [ -n "${BENCH_ONEOFF_REPEAT:-}" ]; then
        local b=${rows[4]} o=${rows[5]}
        rows=()
        for _ in $(seq "$BENCH_ONEOFF_REPEAT"); do rows+=("$b" "$o"); done
    fi
    # BENCH_SPEED_ROWS="0 2 0 2": only these rows (0-based, as listed above), in this order, each
    # as often as named — one row's swing measured against its base in one server; no engine profile.
    if [ -n "${BENCH_SPEED_ROWS:-}" ]; then
        local pick=() i
        for i in $BENCH_SPEED_ROWS; do
            [[ $i =~ ^[0-9]+$ ]] && [ "$i" -lt ${#rows[@]} ] || { echo "BENCH_SPEED_ROWS: no row $i (rows 0 to $((${#rows[@]} - 1)))" >&2; exit 1; }
            pick+=("${rows[$i]}")
        done
        rows=("${pick[@]}")
    fi
    mixed_paths
    ONEOFF=${BENCH_ONEOFF_PATHS:-150000} python3 bench/mixed_paths.py "$work/words.txt" "$work/slugs.txt" "$work/ids.txt" "$work/oneoff.txt"
    child_devices_setup
    head -1 "$work/tokens.txt" > "$work/one-token.txt"
    # The parent's own token naming a tablet child (controls: max age 8, one blocked category).
    local scoped_child
    scoped_child=$(head -1 <<<"$ids")
    awk -v c="$scoped_child" '/^\/api\/v1\/catalog\/books/ { print $0 (index($0, "?") ? "&" : "?") "child_id=" c; next } { print }' \
        "$work/paths.txt" > "$work/child-id-paths.txt"
    # The same mix with a third of the requests in French (`locale=fr`: localized titles, categories and highlights).
    awk 'NR % 3 == 0 && /^\/api\/v1\/catalog\// { print $0 (index($0, "?") ? "&" : "?") "locale=fr"; next } { print }' \
        "$work/paths.txt" > "$work/fr-paths.txt"
    # Warm: fill the kept answers of the repeated mix (parents and tablets), and each tablet's scope.
    for warm in "paths|" "paths|$work/tokens.txt" "fr-paths|"; do
        IFS='|' read -r file tokens <<<"$warm"
        PATHS="$work/$file.txt" TOKEN="$token" TOKENS="$tokens" wrk -t2 -c"$connections" -d"${duration}s" -s bench/mixed.lua "$base" > /dev/null 2>&1 || true
    done

    wrk -t2 -c"$connections" -d"${duration}s" --latency "$base/livez" > "$work/wrk.txt" 2>&1 || true
    read -r floor p50 p99 bad < <(parse_wrk "$work/wrk.txt")
    speed_row "no database (floor)" "$floor" "$p50" "$p99" "$bad" ""

    for entry in "${rows[@]}"; do
        IFS='|' read -r name file tokens writes role <<<"$entry"
        writer=
        if [ "$writes" != 0 ]; then
            pgbench -n -c 1 -T $((duration + 2)) -h 127.0.0.1 -p "$port" -U postgres $(content_writes "$writes") "$db" > "$work/writer.txt" 2>&1 &
            writer=$!
        fi
        local tokens_file=""
        [ "$tokens" != - ] && tokens_file="$work/$tokens.txt"
        # BENCH_PERF="B vsB": the server's CPU profile of those rows (perf, call graphs) beside the results.
        local profiler=
        if [[ " ${BENCH_PERF:-} " == *" $role "* ]] && command -v perf > /dev/null; then
            perf record -q -g -p "$server" -o "${BENCH_PERF_DIR:-bench/results}/perf-$n-$role-$file-$tokens.data" -- sleep "$duration" > /dev/null 2>&1 &
            profiler=$!
        fi
        local answers_before cpu_before
        answers_before=$(engine_answers)
        cpu_before=$(server_cpu)
        PATHS="$work/$file.txt" TOKEN="$token" TOKENS="$tokens_file" wrk -t2 -c"$connections" -d"${duration}s" --latency -s bench/mixed.lua "$base" > "$work/wrk.txt" 2>&1 || true
        # Read before the writer's last seconds (it runs 2 s past wrk): a carry then serves no request.
        local cpu_after
        cpu_after=$(server_cpu)
        [ -n "$writer" ] && { wait "$writer" || true; }
        [ -n "$profiler" ] && { wait "$profiler" || true; }
        read -r r p50 p99 bad < <(parse_wrk "$work/wrk.txt")
        # The server's own CPU per request (user + system, from /proc): what the row costs the
        # server whatever else the shared machine ran meanwhile — a ratio of it moves less than
        # one of throughputs.
        local cpu
        cpu=$(python3 -c "print(round((${cpu_after:-0} - ${cpu_before:-0}) * 1e6 / max($(wrk_requests "$work/wrk.txt"), 1)))")
        # The share of the row's list answers the engine computed (not kept): steadier than a
        # ratio of throughputs on a shared machine, and what a carry or memo change moves.
        local computed
        computed=$(python3 -c "b = '$answers_before'.split(); a = '$(engine_answers)'.split()
kept, made, carries, took = int(a[0]) - int(b[0]), int(a[1]) - int(b[1]), int(a[2]) - int(b[2]), float(a[3]) - float(b[3])
patched = int(a[4]) - int(b[4])
carry = f', carry {took * 1000 / carries:.1f} ms a change, {patched} browses patched' if carries else ''
print(f'{made * 100 / max(kept + made, 1):.1f} % of answers computed{carry}')")
        case $role in
          A) baseA=$r; cpuA=$cpu; ratio=$(python3 -c "print(f'base A: {${r:-0} * 100 / max(${floor:-0}, 1):.0f} % of the floor')") ;;
          B) baseB=$r; cpuB=$cpu; ratio=$(python3 -c "print(f'base B: {${r:-0} * 100 / max(${floor:-0}, 1):.0f} % of the floor')") ;;
          vsA) [ -z "${baseA:-}" ] && ratio="no base A ran before it" || ratio=$(python3 -c "print(f'{${r:-0} * 100 / max(${baseA:-0}, 1):.0f} % of A (by server CPU a request: {${cpuA:-0} * 100 / max($cpu, 1):.0f} %)')") ;;
          vsB) [ -z "${baseB:-}" ] && ratio="no base B ran before it" || ratio=$(python3 -c "print(f'{${r:-0} * 100 / max(${baseB:-0}, 1):.0f} % of B (by server CPU a request: {${cpuB:-0} * 100 / max($cpu, 1):.0f} %)')") ;;
        esac
        ratio="$ratio; server $cpu µs CPU a request; $computed"
        speed_row "$name" "$r" "$p50" "$p99" "$bad" "$ratio"
    done
    # The per-step profile of the engine (no HTTP): the same paths, kept and one-off, scoped and not
    # — in a random order, as wrk sends them (the file is sorted: neighbours share their words).
    shuf --random-source=<(yes) "$work/oneoff.txt" > "$work/oneoff-shuffled.txt"
    [ -n "${BENCH_ONEOFF_REPEAT:-}${BENCH_SPEED_ROWS:-}" ] && return
    echo "engine per-step profile at $n books (µs per answer, mean / p99):" | tee -a "$results"
    { echo '```'; DATABASE_URL=$url ENGINE_SNAPSHOT_PATH=$snapshot $app engine profile --paths "$work/oneoff-shuffled.txt" --limit 20000; echo '```'; } | tee -a "$results"
}

# engine_answers: the engine's list answers since start, "KEPT COMPUTED CARRIES CARRY_SECONDS
# PATCHED" (`/metrics`, read from loopback; PATCHED: browses a carry patched rather than dropped).
engine_answers() {
    curl -s "$base/metrics" | awk '/^storytime_catalog_engine_answers\{source="kept"\}/ { k = $2 } /^storytime_catalog_engine_answers\{source="computed"\}/ { c = $2 }
        /^storytime_catalog_engine_carries / { n = $2 } /^storytime_catalog_engine_carry_seconds / { s = $2 }
        /^storytime_catalog_engine_browses_patched / { p = $2 }
        END { printf "%d %d %d %.6f %d\n", k, c, n, s, p }'
}

# server_cpu: the server's CPU seconds so far (user + system, /proc/PID/stat fields 14 and 15; 0
# when the server is gone — the row then says so by its figures, and the run goes on).
server_cpu() {
    awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f\n", ($12 + $13) / hz }' "/proc/$server/stat" 2>/dev/null || echo 0
}

# wrk_requests FILE: the requests wrk completed ("N requests in …"; 0 when it wrote none).
wrk_requests() {
    awk '/ requests in / { n = $1; exit } END { print n + 0 }' "$1" 2>/dev/null || echo 0
}

# speed_row NAME REQS P50 P99 NON2XX RATIO: one row in the results and on the terminal.
speed_row() {
    echo "| $n | $1 | $2 | $3 | $4 | $5 | | $6 |" >> "$results"
    printf '%-8s %-58s %8s req/s  p50 %7s ms  p99 %7s ms  non-2xx %s  %s\n' "$n" "$1" "$2" "$3" "$4" "$5" "$6"
}

# Sourced by bench/run.sh: the parent's side of the app, varied (`child_mix`), for the bench
# child ($child, 10,000 plays) of the running server ($base, $token). Appends to $results.
child_mix() {
    # The parent's side, varied: random history pages and book filters, statistics for three
    # periods in four zones (the history-and-statistics mix), then also continue watching and
    # library pages in every order (all child routes) — while the child watches (a play inserted
    # 0 or 1 times a second, which changes every answer about the child).
    python3 - "$child" "$work/child_paths.txt" "$work/history_paths.txt" <<'PY'
import sys
child, out, history_out = sys.argv[1], sys.argv[2], sys.argv[3]
base = f"/api/v1/children/{child}"
paths = [f"{base}/history?page={p}" for p in range(1, 201)]
paths += [f"{base}/history?per_page=20&page={p}" for p in range(1, 51)]
paths += [f"{base}/stats?period={period}&tz={zone}" for period in ("week", "month", "all")
          for zone in ("UTC", "Europe/Paris", "America/New_York", "Asia/Tokyo")]
open(history_out, "w").write("\n".join(paths) + "\n")
paths += [f"{base}/continue?page={p}&per_page=10" for p in range(1, 7)]
paths += [f"{base}/library?sort={sort}&page={p}&per_page=20" for sort in ("recently_added", "title", "recently_watched") for p in (1, 2, 3)]
open(out, "w").write("\n".join(paths) + "\n")
PY
    printf 'INSERT INTO plays (child_id, book_id, position_seconds, completed) SELECT child_id, book_id, 60, false FROM library_entries WHERE child_id = %s ORDER BY random() LIMIT 1;\n' "$child" > "$work/play.sql"
    for mix in "history and stats|history_paths" "child routes|child_paths"; do
        IFS='|' read -r label file <<<"$mix"
        for writes in 0 1; do
            writer=
            if [ "$writes" != 0 ]; then
                pgbench -n -c 1 -R "$writes" -T $((duration + 2)) -h 127.0.0.1 -p "$port" -U postgres -f "$work/play.sql" "$db" > "$work/writer.txt" 2>&1 &
                writer=$!
            fi
            PATHS="$work/$file.txt" TOKEN="$token" wrk -t2 -c"$connections" -d"${duration}s" --latency -s bench/mixed.lua "$base" > "$work/wrk.txt" 2>&1 || true
            [ -n "$writer" ] && { wait "$writer" || true; }
            read -r r p50 p99 bad < <(parse_wrk "$work/wrk.txt")
            echo "| $n | $label mixed, $writes plays/s | $r | $p50 | $p99 | $bad | | |" >> "$results"
            printf '%-8s %-28s %8s req/s  p50 %7s ms  p99 %7s ms  non-2xx %s\n' "$n" "$label, $writes plays/s" "$r" "$p50" "$p99" "$bad"
        done
    done
}

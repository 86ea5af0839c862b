# Sourced by bench/run.sh: the catalog as children's tablets see it (child mode). 40 children of
# the bench parent, each with family controls (max age 8, one blocked category) and a paired
# device; every request of the realistic mix comes from a random one of those devices, while
# content writes run at 10 a second and a parent changes a child's controls every 5 seconds
# (harsher than the once a minute of a real family). Reported beside the unscoped mix of the
# same run ($1, req/s): the ratio is the figure.

# child_devices_setup: 40 children of the bench parent with controls and a paired tablet each;
# sets $ids (their ids) and writes the tablets' tokens to $work/tokens.txt.
child_devices_setup() {
    local parent
    parent=$(scripts/db.sh psql -d "$db" -tAc "SELECT added_by FROM children WHERE id = $child")
    scripts/db.sh psql -d "$db" -qc "
        INSERT INTO children (added_by, name) SELECT $parent, 'Tablet ' || g FROM generate_series(1, 40) g
         WHERE NOT EXISTS (SELECT 1 FROM children WHERE added_by = $parent AND name = 'Tablet 1');
        INSERT INTO child_controls (child_id, max_age, blocked_categories)
        SELECT c.id, 8, ARRAY[(SELECT id FROM categories ORDER BY id OFFSET (c.id % 5) LIMIT 1)]
          FROM children c WHERE c.added_by = $parent AND c.name LIKE 'Tablet %'
        ON CONFLICT (child_id) DO UPDATE SET max_age = 8" >/dev/null
    ids=$(scripts/db.sh psql -d "$db" -tAc "SELECT id FROM children WHERE added_by = $parent AND name LIKE 'Tablet %' ORDER BY id")
    : > "$work/tokens.txt"
    for id in $ids; do
        curl -sf -X POST "$base/api/v1/children/$id/devices" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
            -d '{"name": "bench tablet"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["access_token"])' >> "$work/tokens.txt"
    done
}

child_device_mix() {
    local unscoped=$1
    child_devices_setup
    pgbench -n -c 1 -T $((duration + 2)) -h 127.0.0.1 -p "$port" -U postgres $(content_writes 10) "$db" > "$work/writer.txt" 2>&1 &
    local writer=$!
    (
        end=$((SECONDS + duration))
        while [ $SECONDS -lt $end ]; do
            sleep 5
            curl -sf -o /dev/null -X PUT "$base/api/v1/children/$(shuf -n1 <<<"$ids")/controls" -H "Authorization: Bearer $token" \
                -H 'Content-Type: application/json' -d "{\"max_age\": $((RANDOM % 4 + 6))}" || echo "warning: a controls change failed" >&2
        done
    ) &
    local changer=$!
    PATHS="$work/paths.txt" TOKENS="$work/tokens.txt" wrk -t2 -c"$connections" -d"${duration}s" --latency -s bench/mixed.lua "$base" > "$work/wrk.txt" 2>&1 || true
    wait "$writer" || true
    wait "$changer" || true
    read -r r p50 p99 bad < <(parse_wrk "$work/wrk.txt")
    # What the non-2xx are: 300 of the paths from random devices, by status (a child asking for a
    # book its controls hide is a 404, as it must be; anything else would be a fault).
    local statuses
    statuses=$(paste -d' ' <(shuf -n 300 -r "$work/paths.txt") <(shuf -n 300 -r "$work/tokens.txt") | while read -r path device; do
        curl -s -o /dev/null -w '%{http_code}\n' -H "Authorization: Bearer $device" "$base$path"
    done | sort | uniq -c | awk '{printf "%s%s×%s", (NR > 1 ? ", " : ""), $2, $1}')
    echo "child devices: statuses of 300 sampled requests: $statuses" | tee -a "$work/seed.txt"
    ratio=$(python3 -c "print(f'{${r:-0} / max(${unscoped:-0}, 1) * 100:.0f} % of the unscoped mix')")
    echo "| $n | mixed, 10 writes/s, every request a child device (sampled statuses: $statuses) | $r | $p50 | $p99 | $bad | | $ratio |" >> "$results"
    printf '%-8s %-28s %8s req/s  p50 %7s ms  p99 %7s ms  non-2xx %s  %s\n' "$n" "child devices, 10 writes/s" "$r" "$p50" "$p99" "$bad" "$ratio"
}

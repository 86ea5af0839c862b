# Sourced by bench/run.sh: the warm mix (0 writes) as a client sending no Accept-Encoding, gzip and
# br, identity measured before and after the coded runs (their mean is the baseline, so drift on a
# shared machine does not pass for compression's cost). Answers of 1 KB or more come compressed.
compression_mix() {
    local -A rps=() p99s=()
    local encoding r p50 p99 bad bytes
    for encoding in identity gzip br identity2; do
        local header=""
        case $encoding in gzip|br) header=$encoding ;; esac
        ENCODING=$header PATHS="$work/paths.txt" TOKEN="$token" wrk -t2 -c"$connections" -d"${duration}s" --latency -s bench/mixed.lua "$base" > "$work/wrk.txt" 2>&1 || true
        read -r r p50 p99 bad < <(parse_wrk "$work/wrk.txt")
        rps[$encoding]=${r:-0}; p99s[$encoding]=$p99
        bytes=$(awk '/Transfer\/sec/ { print $2 }' "$work/wrk.txt")
        [ "$encoding" = identity2 ] && continue
        echo "| $n | mixed, Accept-Encoding: $encoding | $r | $p50 | $p99 | $bad | | $bytes/s transferred |" >> "$results"
        printf '%-8s %-28s %8s req/s  p50 %7s ms  p99 %7s ms  non-2xx %s  %s/s\n' "$n" "mixed, $encoding" "$r" "$p50" "$p99" "$bad" "$bytes"
    done
    local base_rps
    base_rps=$(python3 -c "print((${rps[identity]} + ${rps[identity2]}) / 2)")
    for encoding in gzip br; do
        local ratio
        ratio=$(python3 -c "print(f'{${rps[$encoding]} / max($base_rps, 1) * 100:.0f} % of identity')")
        echo "| $n | $encoding ÷ identity (mean of before and after) | | | | | | $ratio |" >> "$results"
        echo "$n $encoding: $ratio (identity ${rps[identity]} then ${rps[identity2]} req/s)"
    done
}

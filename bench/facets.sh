#!/usr/bin/env bash
# `BENCH_ONLY=facets bench/run.sh`: the facet counts alone (bench/facets/main.swift), compiled with
# the engine's own FacetTable.swift and Bitset.swift as they are and the release build's CPU
# flags, then run — no server, no database (BENCH_FACETS_BOOKS: the catalog's size, a million by
# default). Appends its table to a results file in bench/results/.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The two files import Core for its snapshot coding alone: that file is compiled in beside them,
# and an empty module stands in for Core.
: > "$work/Core.swift"
swiftc -emit-module -module-name Core -emit-module-path "$work/Core.swiftmodule" "$work/Core.swift"
# (release-flags.sh prints `-Xswiftc` pairs for `swift build`; swiftc takes them bare.)
flags=$(scripts/release-flags.sh | sed 's/-Xswiftc //g')
# shellcheck disable=SC2086
swiftc -O -wmo $flags -I "$work" -I Sources/CPrefetch -module-name FacetsBench -o "$work/facets" \
    bench/facets/main.swift Sources/CatalogIndexing/Bitset.swift Sources/CatalogIndexing/FacetTable.swift Sources/Core/SnapshotCoding.swift
mkdir -p bench/results
"$work/facets" "${BENCH_FACETS_BOOKS:-1000000}" | tee -a "bench/results/$(date -u +%Y%m%dT%H%M%SZ)-facets.md"

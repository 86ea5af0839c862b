#!/usr/bin/env bash
# Installs what a clean machine of this kind may lack: the PostgreSQL 15 server and client
# (with contrib: pg_trgm, unaccent) and
# libbrotli-dev (the app's br compression), libstemmer-dev (search's word forms) and
# libvips-tools (cover renditions). Swift itself is expected on PATH.
set -euo pipefail
command -v swift >/dev/null || { echo "error: swift is not on PATH (Swift 6 toolchain required)" >&2; exit 1; }
missing=()
[ -x /usr/lib/postgresql/15/bin/initdb ] || missing+=(postgresql-15 postgresql-contrib-15)
command -v psql >/dev/null || missing+=(postgresql-client-15)
# Brotli's encoder, for compressed API answers (Sources/CBrotli).
[ -e /usr/include/brotli/encode.h ] || missing+=(libbrotli-dev)
# Snowball stemmers for search's word forms (Sources/CStemmer): the algorithms PostgreSQL's *_stem use.
[ -e /usr/include/libstemmer.h ] || missing+=(libstemmer-dev)
# libvips' command-line tools for cover renditions (Sources/App/Covers: vips, vipsheader).
command -v vipsheader >/dev/null || missing+=(libvips-tools)
# qrencode draws the QR code of a staff member's second-factor enrolment (Sources/App/Admin/TwoFactor).
command -v qrencode >/dev/null || missing+=(qrencode)
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing ${missing[*]}" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

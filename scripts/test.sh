#!/usr/bin/env bash
# `make test`: a local cluster (fsync off: test data is disposable), one build, every suite.
set -euo pipefail
cd "$(dirname "$0")/.."
export PG_FAST=1
# The house's rules first: seconds, no build (scripts/house.py says each rule and why).
echo "== make house"
python3 scripts/house.py
bash scripts/house-selftest.sh | tail -n 1
scripts/db.sh up
# Databases left behind by an interrupted run.
scripts/db.sh psql -d postgres -tAc "SELECT datname FROM pg_database WHERE datname ~ '^st_[0-9]+_'" |
    while read -r name; do [ -n "$name" ] && scripts/db.sh psql -d postgres -c "DROP DATABASE IF EXISTS \"$name\" WITH (FORCE)" >/dev/null; done
export STORYTIME_TEST_DATABASE_URL=$(scripts/db.sh url postgres)

# A real SMTP server for the mail tests (Tests/AppTests/Support/SMTPSink.swift runs tests/smtp_sink.py).
python3 -c 'import aiosmtpd' 2>/dev/null || python3 -m pip install -q --disable-pip-version-check 'aiosmtpd>=1.4,<2' 2>&1 | grep -v "Running pip as the 'root'" || true

echo "== build (debug, with tests)"
swift build --build-tests
echo "== unit and integration tests (Swift Testing, real PostgreSQL, a database per test)"
swift test --skip-build 2>&1 | tee .build/test-output.log | grep -vE '^(􀟈|◇|↳)|Test .* started' || true
if ! grep -qE 'Test run with [0-9]+ tests? in [0-9]+ suites? passed|Test run with [0-9]+ tests? passed' .build/test-output.log; then
    echo "FAILED: see .build/test-output.log" >&2
    grep -E '✘|error|failed' .build/test-output.log | head -50 >&2
    exit 1
fi
for suite in tests/*.sh; do
    [ -e "$suite" ] || continue
    echo "== $suite"
    bash "$suite"
done
echo "== all suites passed"

#!/usr/bin/env bash
# Fuzzes the running API against public/openapi.json with schemathesis: fails on any 5xx and on
# any response the document does not describe. Run by `make test` after the Swift suites.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q --disable-pip-version-check 'schemathesis>=4,<5' 2>&1 | grep -v "WARNING: Running pip as the 'root'" || true

. tests/lib.bash
db=st_schemathesis
export JWT_SECRET=schemathesis-jwt-secret-0123456789abcdef SESSION_SECRET=schemathesis-session-secret-0123456789abcdef
fresh_database $db
# The fuzzing parent comes first, so its children are ids 1 and 2: the boundary values schemathesis
# tries for `child_id` (minimum 1) then reach the library logic, not only the 404 of a stranger's child.
$app parent create --email fuzz@example.com --password 'fuzz password' --child Ada --child Ben >/dev/null
$app seed demo --books 300 >/dev/null

start_app .build/schemathesis-server.log
sign_in() {
    curl -sf -X POST "http://127.0.0.1:$port/api/v1/auth/token" -H 'Content-Type: application/json' \
        -d '{"email":"fuzz@example.com","password":"fuzz password"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])'
}

# One worker: with two, CPython 3.11's ast.parse (used by hypothesis to describe strategies) can
# fail across threads ("AST constructor recursion depth mismatch") — a tool error, not an API one.
fuzz() {
    local token=$1; shift
    schemathesis run "http://127.0.0.1:$port/openapi.json" \
        --header "Authorization: Bearer $token" \
        --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,response_headers_conformance \
        --max-examples "${SCHEMATHESIS_EXAMPLES:-60}" --phases examples,coverage,fuzzing \
        --workers 1 --request-timeout 10 --suppress-health-check all --seed 20261122 --no-color "$@" 2>&1 | tail -150
    return "${PIPESTATUS[0]}"
}

# Operations that end the fuzzing session (sign this device or every device out) run last, with a
# token of their own, so every other operation is fuzzed signed in.
enders=(--include-operation-id logout --include-operation-id signOutAllDevices --include-operation-id signOutDevice --include-operation-id deleteAccount)
# Both tokens first: the first pass spends the parent's sign-in budget on wrong current passwords.
first=$(sign_in); second=$(sign_in)
status=0
fuzz "$first" --exclude-operation-id logout --exclude-operation-id signOutAllDevices \
    --exclude-operation-id signOutDevice --exclude-operation-id deleteAccount || status=1
echo "== operations that end the session"
fuzz "$second" "${enders[@]}" || status=1
if grep -qE '^\[ (ERROR|CRITICAL) \]|"level":"(error|critical)"|Fatal error' .build/schemathesis-server.log; then
    echo "the server logged errors during fuzzing:" >&2; grep -E 'ERROR|CRITICAL|Fatal' .build/schemathesis-server.log | head -20 >&2
    status=1
fi
scripts/db.sh psql -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null
exit $status

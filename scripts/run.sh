#!/usr/bin/env bash
# `make run`: a local database (unless DATABASE_URL is set), migrations, seeds, then the server.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${DATABASE_URL:-}" ]; then
    scripts/db.sh up
    scripts/db.sh ensure storytime
    DATABASE_URL=$(scripts/db.sh url storytime)
fi
export DATABASE_URL
app=.build/debug/App
$app migrate
$app seed categories
# The demo passwords are random; they are kept (git-ignored) so a second `make run` can show them.
$app seed demo --books "${DEMO_BOOKS:-2000}" --if-empty --credentials-file .secrets/demo-credentials.txt
echo "Serving the console on http://127.0.0.1:${PORT:-8080}/admin and the API on http://127.0.0.1:${PORT:-8080}/api/v1"
if [ -z "${SMTP_URL:-}" ]; then
    echo "No SMTP_URL: mail (sign-up links, password resets) waits in the console's Outbox, http://127.0.0.1:${PORT:-8080}/admin/outbox (admin sign-in above)"
fi
export PUBLIC_BASE_URL=${PUBLIC_BASE_URL:-http://127.0.0.1:${PORT:-8080}}
exec $app serve --hostname 127.0.0.1 --port "${PORT:-8080}"

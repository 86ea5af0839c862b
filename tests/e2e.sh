#!/usr/bin/env bash
# End-to-end tests of the console in a real headless Chromium (Selenium), against the running
# app on a fresh database. Run by `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
    echo "installing chromium and chromium-driver" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
fi
python3 -c 'import selenium' 2>/dev/null || python3 -m pip install -q --disable-pip-version-check 'selenium>=4.10' 2>&1 | grep -v "Running pip as the 'root'" || true

. tests/lib.bash
db=${STORYTIME_E2E_DB:-st_e2e}
export JWT_SECRET=e2e-jwt-secret-0123456789abcdefghijkl SESSION_SECRET=e2e-session-secret-0123456789abcdefghij
fresh_database $db
$app seed categories >/dev/null
$app staff create --email editor@e2e.test --password 'editor password' --role editor >/dev/null
$app staff create --email viewer@e2e.test --password 'viewer password' --role viewer >/dev/null
$app staff create --email reviewer@e2e.test --password 'reviewer password' --role editor >/dev/null
$app staff create --email admin@e2e.test --password 'admin password' --role admin >/dev/null
# The accessibility sweep's own admin (tests/e2e/test_accessibility.py enrols its second factor).
$app staff create --email sweep@e2e.test --password 'sweep password' --role admin >/dev/null
$app parent create --email parent@e2e.test --password 'parent password' --child Ada >/dev/null
scripts/db.sh psql -d $db -q <<'SQL'
INSERT INTO books (title, author, status, age_min, age_max) VALUES
  ('E2E Alpha', 'Ann', 'active', 2, 6), ('E2E Beta', 'Ben', 'active', 2, 6),
  ('E2E Gamma', 'Cy', 'active', 2, 6), ('E2E Delta', 'Di', 'active', 2, 6);
INSERT INTO rights_windows (book_id, starts_at) SELECT id, now() - interval '1 day' FROM books;
INSERT INTO video_assets (book_id, status, duration_seconds, has_captions) SELECT id, 'ready', 340, true FROM books;
-- For the rights calendar: a draft (kept out of the parent API's lists) whose rights end on the
-- last day of 2026 and start again on the second of 2027.
INSERT INTO publishers (name) VALUES ('E2E Press');
INSERT INTO books (title, author, status, age_min, age_max, publisher_id)
  SELECT 'E2E Calendar', 'Cal', 'draft', 2, 6, id FROM publishers WHERE name = 'E2E Press';
INSERT INTO rights_windows (book_id, starts_at, ends_at)
  SELECT id, timestamptz '2026-10-01T00:00Z', timestamptz '2026-12-31T12:00Z' FROM books WHERE title = 'E2E Calendar'
  UNION ALL SELECT id, timestamptz '2027-01-02T09:00Z', NULL FROM books WHERE title = 'E2E Calendar';
-- Review and preview: a draft to review; a book scheduled for 2030; a book licensed in France only.
INSERT INTO books (title, author, status, age_min, age_max) VALUES ('Review Fox', 'Rex', 'draft', 2, 6);
INSERT INTO books (title, author, status, age_min, age_max, publish_at) VALUES ('Future Owl', 'Ola', 'active', 2, 6, timestamptz '2030-01-01T00:00Z');
INSERT INTO books (title, author, status, age_min, age_max) VALUES ('France Only Hen', 'Henri', 'active', 2, 6);
INSERT INTO rights_windows (book_id, starts_at, territories)
  SELECT id, now() - interval '1 day', CASE WHEN title = 'France Only Hen' THEN ARRAY['FR'] ELSE ARRAY[]::text[] END FROM books WHERE title IN ('Review Fox', 'Future Owl', 'France Only Hen');
INSERT INTO video_assets (book_id, status, duration_seconds, has_captions)
  SELECT id, 'ready', 200, true FROM books WHERE title IN ('Review Fox', 'Future Owl', 'France Only Hen');
SQL

# A current axe-core for the accessibility checks (tests/e2e/test_console.py): the one bundled
# by this pinned PyPI package (axe-core 4.12.1), not axe-selenium-python's 2018 copy.
axe_dir=.build/axe
if [ ! -s "$axe_dir/axe.min.js" ]; then
    mkdir -p "$axe_dir"
    python3 -m pip download -q --disable-pip-version-check --no-deps -d "$axe_dir" 'axe-playwright-python==0.1.8' 2>&1 | grep -v "Running pip as the 'root'" || true
    python3 -c 'import sys, zipfile, glob; z = zipfile.ZipFile(glob.glob(sys.argv[1] + "/axe_playwright_python-*.whl")[0]); open(sys.argv[1] + "/axe.min.js", "wb").write(z.read("axe_playwright_python/axe.min.js"))' "$axe_dir"
fi
export STORYTIME_AXE="$PWD/$axe_dir/axe.min.js"

# The tests whose name says `review` run against the app restarted with review before live
# (`CONSOLE_REVIEW=on`: then a live book's content, categories and cover change only through
# review, which the others' edits of live books are not about); the rest as deployed by default.
# STORYTIME_E2E_ONLY=word runs only the tests whose name contains it (while working on them).
e2e_tests() {
    python3 - "$1" "${STORYTIME_E2E_ONLY:-}" <<'PY'
import sys, unittest
sys.path.insert(0, "tests/e2e")
import test_console, test_accessibility
names = [(m.__name__ + "." + c.__name__, n) for m, c in ((test_console, test_console.ConsoleTest),
         (test_accessibility, test_accessibility.AccessibilityTest)) for n in unittest.defaultTestLoader.getTestCaseNames(c)]
print(" ".join(c + "." + n for c, n in names if ("review" in n) == (sys.argv[1] == "review") and sys.argv[2] in c + "." + n))
PY
}
run_e2e() {
    export STORYTIME_URL="http://127.0.0.1:$port" STORYTIME_E2E_COVER="$cover"
    local names
    names=$(e2e_tests "$1")
    [ -n "$names" ] || [ -n "${STORYTIME_E2E_ONLY:-}" ] || { echo "e2e: no $1 tests found" >&2; return 1; }
    [ -n "$names" ] || return 0
    (cd tests/e2e && python3 -m unittest -v $names)
}

# A cover to upload, made by libvips (scripts/deps.sh installs its tools).
cover=$(mktemp --suffix=.jpg)
vips black "$cover.v" 600 900 --bands 3 && vips linear "$cover.v" "$cover" "1 1 1" "40 120 200" --uchar && rm -f "$cover.v"
start_app .build/e2e-server.log
run_e2e console
kill "$server" && wait "$server" 2>/dev/null || true
CONSOLE_REVIEW=on start_app .build/e2e-review-server.log
run_e2e review
rm -f "$cover"

# The video pipeline as a newcomer meets it: `App video simulate` signs an event with the
# development secret and sends it; the running app applies it (docs/video-and-covers.md).
book=$(scripts/db.sh psql -d $db -tAc "SELECT id FROM books WHERE title = 'E2E Calendar'")
# (Not `tee /dev/stderr`: reopening stderr truncates a log it is redirected to.)
sent=$($app video simulate --book "$book" --event ready --duration 120 --captions en,fr --url "http://127.0.0.1:$port")
echo "$sent"
grep -q ": applied" <<< "$sent" || { echo "video simulate: the event was not applied" >&2; exit 1; }
asset=$(scripts/db.sh psql -d $db -tAc "SELECT status || ' ' || duration_seconds || ' ' || array_to_string(captions, ',') FROM video_assets WHERE book_id = $book")
[ "$asset" = "ready 120 en,fr" ] || { echo "video simulate: expected 'ready 120 en,fr', found '$asset'" >&2; exit 1; }
echo "video simulate: the signed event made the asset ready"
scripts/db.sh psql -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null

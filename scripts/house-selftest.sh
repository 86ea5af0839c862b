#!/usr/bin/env bash
# Checks the checker: scripts/house.py must pass a small repository that keeps every rule, and
# fail — naming the file, the line and the rule — when each rule is broken once, both in that
# small repository and in a copy of this one. Nothing here touches the checkout: every case runs
# in a temporary copy. Takes a few seconds; no build, no database.
#
#   scripts/house-selftest.sh        # prints one line per case, exits 1 if any case fails
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/house-selftest.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
cases=0

ok()   { cases=$((cases + 1)); printf 'ok    %s\n' "$1"; }
fail() { cases=$((cases + 1)); failures=$((failures + 1)); printf 'FAIL  %s\n' "$1"; [[ -z "${2:-}" ]] || sed 's/^/      | /' <<<"$2" | head -20; }

house() { python3 "$1/scripts/house.py" "${@:2}" 2>&1; }

# expect_pass DIR NAME: the checker exits 0 on DIR.
expect_pass() {
  local out status=0
  out=$(house "$1") || status=$?
  if [[ $status -eq 0 ]]; then ok "$2"; else fail "$2 (expected a pass, exit $status)" "$out"; fi
}

# expect_finding DIR NAME "PREFIX"...: the checker exits non-zero and prints a line starting with
# each PREFIX ("path:line: rule:").
expect_finding() {
  local dir=$1 name=$2 out status=0 missing=()
  shift 2
  out=$(house "$dir") || status=$?
  for prefix in "$@"; do
    grep -qF -- "$prefix" <<<"$out" || missing+=("$prefix")
  done
  if [[ $status -ne 0 && ${#missing[@]} -eq 0 ]]; then ok "$name"
  else fail "$name (exit $status; missing: ${missing[*]:-none})" "$out"; fi
}

# expect_new DIR NAME BASELINE "PREFIX"...: like expect_finding, and nothing else of PREFIX's rule
# appears that the baseline output did not have (the break is seen once, where it is).
expect_new() {
  local dir=$1 name=$2 baseline=$3 out status=0 missing=() added
  shift 3
  out=$(house "$dir") || status=$?
  for prefix in "$@"; do
    grep -qF -- "$prefix" <<<"$out" || missing+=("$prefix")
  done
  added=$(comm -13 <(findings <<<"$baseline") <(findings <<<"$out") | grep -c . || true)
  if [[ $status -ne 0 && ${#missing[@]} -eq 0 && $added -eq $# ]]; then ok "$name"
  else fail "$name (exit $status; missing: ${missing[*]:-none}; $added new lines, expected $#)" \
            "$(comm -13 <(findings <<<"$baseline") <(findings <<<"$out"))"; fi
}

findings() { grep -E '^[^ ]+:[0-9]+: [a-z-]+: ' | sort || true; }
copy() { rm -rf "$2"; cp -R "$1" "$2"; }
lines() { for ((i = 1; i <= $1; i++)); do echo "$2"; done; }

# ---- A small repository that keeps every rule ------------------------------------------------------

min=$work/min
mkdir -p "$min/scripts" "$min/docs" "$min/Sources/App/Support" "$min/Sources/App/Shelf" \
         "$min/Sources/Core" "$min/Tests/AppTests"
cp "$here/scripts/house.py" "$min/scripts/"
cat >"$min/README.md" <<'EOF'
# A small house

`make run` and `make test`. See [the shelf](docs/shelf.md#how-books-are-kept), the
[docs folder](docs/), [this file](#a-small-house), <https://example.com> and
[a mail](mailto:someone@example.com).

```sh
cat ../outside/file.md   # code is not a link: [x](../outside.md)
```
EOF
cat >"$min/docs/shelf.md" <<'EOF'
# The shelf

## How books are kept

Back to the [README](../README.md). Inline code is not a link: `[x](/etc/passwd)`.
EOF
cat >"$min/Sources/App/Support/Clock.swift" <<'EOF'
import Foundation

/// The one clock of the app.
struct SystemClock { func now() -> Date { Date() } }
EOF
cat >"$min/Sources/App/Shelf/ShelfController.swift" <<'EOF'
import Vapor

/// `DELETE /shelf/:id` removes a book. SELECT the book FROM the list, then UPDATE the shelf SET.
struct ShelfController {
    // An English sentence: "select all books where the title is long" is not SQL.
    func list(_ req: Request) async throws -> [String] {
        let title = "Where the Wild Things Are"
        let label = "SELECT a book"   // a button's text, not a statement
        /* a block comment with SQL: SELECT id FROM books WHERE id = 1 /* nested */ still a comment */
        let greeting = #"Say "hello" \(not interpolated)"#
        let now = clock.now()
        return try await ShelfQueries(sql: req.sql).titles(after: now) + [title, label, greeting]
    }
}
EOF
cat >"$min/Sources/App/Shelf/ShelfQueries.swift" <<'EOF'
import SQLKit

struct ShelfQueries {
    let sql: any SQLDatabase
    func titles(after instant: Date) async throws -> [String] {
        try await sql.raw("SELECT title FROM books WHERE updated_at > \(bind: instant)").all()
            .map { try $0.decode(column: "title", as: String.self) }
    }
}
EOF
cat >"$min/Sources/Core/Days.swift" <<'EOF'
import Foundation

public enum Days {
    public static func today(now: Date) -> Int { Int(now.timeIntervalSince1970 / 86_400) }
}
EOF
{ echo 'import Testing'; echo 'struct ShelfTests {'; lines 300 '    // a long suite, under the tests budget'; echo '}'; } \
  >"$min/Tests/AppTests/ShelfTests.swift"
echo 'let client = Date()  // StorytimeKit runs on the family''s device, with its own clock' >"$work/kit.swift"
mkdir -p "$min/Sources/StorytimeKit" && cp "$work/kit.swift" "$min/Sources/StorytimeKit/Client.swift"

expect_pass "$min" "a small repository that keeps every rule passes"

# ---- Each rule broken once in it --------------------------------------------------------------------

c=$work/case
copy "$min" "$c"
cat >>"$c/Sources/App/Shelf/ShelfController.swift" <<'EOF'
extension ShelfController {
    func count(_ req: Request) async throws -> Int {
        try await req.sql.raw("SELECT count(*) AS n FROM books").first()!.decode(column: "n", as: Int.self)
    }
}
EOF
expect_finding "$c" "sql-in-controller: a .raw SELECT in a *Controller file" \
  "Sources/App/Shelf/ShelfController.swift:17: sql-in-controller:"

copy "$min" "$c"
cat >"$c/Sources/App/Shelf/ShelfRoutes.swift" <<'EOF'
import Vapor

struct ShelfRoutes {
    static let order: SQLQueryString = "title"
    static let statement = """
        UPDATE books
           SET title = 'x'
         WHERE id = 1
        """
    static let remove = "DELETE FROM books WHERE id = 1"
}
EOF
expect_finding "$c" "sql-in-controller: SQLQueryString, a multi-line UPDATE and a DELETE in a *Routes file" \
  "Sources/App/Shelf/ShelfRoutes.swift:4: sql-in-controller:" \
  "Sources/App/Shelf/ShelfRoutes.swift:5: sql-in-controller:" \
  "Sources/App/Shelf/ShelfRoutes.swift:10: sql-in-controller:"

copy "$min" "$c"
{ lines 249 '// line'; echo 'struct Long {}'; } >"$c/Sources/App/Shelf/Long.swift"
expect_finding "$c" "file-length: a source file of 250 lines" "Sources/App/Shelf/Long.swift:250: file-length:"

copy "$min" "$c"
{ lines 399 '// line'; echo 'struct LongTests {}'; } >"$c/Tests/AppTests/LongTests.swift"
expect_finding "$c" "file-length: a test file of 400 lines" "Tests/AppTests/LongTests.swift:400: file-length:"

copy "$min" "$c"
{ cat "$min/README.md"; lines $((300 - $(wc -l <"$min/README.md"))) 'More.'; } >"$c/README.md"
expect_pass "$c" "readme-length: a README of exactly 300 lines passes"
echo 'One more.' >>"$c/README.md"
expect_finding "$c" "readme-length: a README of 301 lines" "README.md:301: readme-length:"

copy "$min" "$c"
sed -i 's/let now = clock.now()/let now = Date()/' "$c/Sources/App/Shelf/ShelfController.swift"
expect_finding "$c" "date-outside-clock: Date() in a controller" \
  "Sources/App/Shelf/ShelfController.swift:11: date-outside-clock:"

copy "$min" "$c"
sed -i 's/today(now: Date)/today(now: Date = .now)/; s/Int(now\./Int(Date.now./' "$c/Sources/Core/Days.swift"
expect_finding "$c" "date-outside-clock: Date.now in Core" "Sources/Core/Days.swift:4: date-outside-clock:"

copy "$min" "$c"
{ echo 'import SQLKit'; echo 'func read(_ row: any SQLRow) throws {'
  lines 2 '    _ = try row.decode(column: "id", as: Int.self)'; echo '}'; } >"$c/Sources/App/Shelf/ShelfRow.swift"
expect_finding "$c" "decode-column-budget: 3 decode(column:) in Sources/ (budget 2)" \
  "Sources/App/Shelf/ShelfRow.swift:3: decode-column-budget: 2 of the 3"
sed -i '$d' "$c/Sources/App/Shelf/ShelfRow.swift"; sed -i '$d' "$c/Sources/App/Shelf/ShelfRow.swift"; echo '}' >>"$c/Sources/App/Shelf/ShelfRow.swift"
expect_pass "$c" "decode-column-budget: exactly the budget (2) passes"

copy "$min" "$c"
cat >>"$c/docs/shelf.md" <<'EOF'

See [the shared glossary](../../shared/glossary.md), [a page that is not there](missing.md),
[a heading that is not there](../README.md#nowhere), [a disk](/home/someone/notes.md) and
[a file URL](file:///etc/hosts).
EOF
expect_finding "$c" "link-out-of-repo: out of the repository, missing, no such heading, absolute, file:" \
  "docs/shelf.md:7: link-out-of-repo: link \`../../shared/glossary.md\` leaves the repository" \
  "docs/shelf.md:7: link-out-of-repo: link \`missing.md\` names a path that does not exist" \
  "docs/shelf.md:8: link-out-of-repo: link \`../README.md#nowhere\` names no heading" \
  "docs/shelf.md:8: link-out-of-repo: link \`/home/someone/notes.md\` is an absolute path" \
  "docs/shelf.md:9: link-out-of-repo: link \`file:///etc/hosts\` is a \`file:\` link"

# ---- Each rule broken once in a copy of this repository ------------------------------------------

repo=$work/repo
mkdir -p "$repo"
(cd "$here" && git ls-files -co --exclude-standard -z | while IFS= read -r -d '' f; do
   [[ -f "$f" ]] && printf '%s\0' "$f"; done | tar --null -T - -cf -) | tar -xf - -C "$repo"
baseline=$(house "$repo" || true)
printf 'info  this repository today: %s\n' "$(grep -c ': [a-z-]*: ' <<<"$baseline" || true) findings"

r=$work/r
copy "$repo" "$r"
mkdir -p "$r/Sources/App/Shelf"
cat >"$r/Sources/App/Shelf/ShelfController.swift" <<'EOF'
import Vapor

struct ShelfController {
    func count(_ req: Request) async throws -> Int {
        try await req.sql.raw("SELECT count(*) AS n FROM books").first()!.decode(column: "n", as: Int.self)
    }
}
EOF
expect_finding "$r" "this repository: a controller with SQL is named" \
  "Sources/App/Shelf/ShelfController.swift:5: sql-in-controller:" \
  "Sources/App/Shelf/ShelfController.swift:5: decode-column-budget:"

copy "$repo" "$r"
{ lines 260 '// line'; } >"$r/Sources/Core/Long.swift"
expect_new "$r" "this repository: a 260-line source file is named, and nothing else" "$baseline" \
  "Sources/Core/Long.swift:250: file-length:"

copy "$repo" "$r"
{ cat "$repo/README.md"; lines 301 'More.'; } >"$r/README.md"
expect_finding "$r" "this repository: a README over 300 lines is named" "README.md:301: readme-length:"

copy "$repo" "$r"
printf 'import Foundation\nlet started = Date()\n' >"$r/Sources/App/Started.swift"
expect_new "$r" "this repository: a new Date() is named, and nothing else" "$baseline" \
  "Sources/App/Started.swift:2: date-outside-clock:"

copy "$repo" "$r"
printf '\nThe [shared notes](../../shared/notes.md).\n' >>"$r/docs/testing.md"
n=$(wc -l <"$r/docs/testing.md")
expect_new "$r" "this repository: a link out of the repository is named, and nothing else" "$baseline" \
  "docs/testing.md:$n: link-out-of-repo:"

echo
if [[ $failures -eq 0 ]]; then echo "house self-test: all $cases cases pass"; else echo "house self-test: $failures of $cases cases FAIL"; exit 1; fi

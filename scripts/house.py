#!/usr/bin/env python3
"""The house's rules: what `make house` checks, in a second or two, with no build.

This file is where the rules live. The table below says, for each rule, what it checks, its
budget, and why the house keeps it; the code under the table only carries them out. To change a
rule or a budget, change it here and say why in the commit.

    make house                        # every rule; prints `file:line: rule: message`, exits 1 on any
    scripts/house.py --report         # counts per rule and the files behind them (exits 0)
    scripts/house.py --rules          # this table, as text
    scripts/house-selftest.sh         # breaks each rule in a copy of the repository and checks this script sees it

Python 3, standard library only. Files are those git knows (tracked, or new and not ignored);
outside a git checkout, every file under the root except build and database folders.
"""

from collections import namedtuple

Rule = namedtuple("Rule", "name checks budget why")

# ------------------------------------------------------------------------------------------------
# THE HOUSE'S RULES
# ------------------------------------------------------------------------------------------------

SQL_IN_CONTROLLER = "sql-in-controller"
FILE_LENGTH = "file-length"
README_LENGTH = "readme-length"
DATE_OUTSIDE_CLOCK = "date-outside-clock"
DECODE_BUDGET = "decode-column-budget"
LINK_OUT = "link-out-of-repo"

SOURCE_LINES_LIMIT = 250  # a Swift file under Sources/ (and Package.swift) has fewer lines than this
TEST_LINES_LIMIT = 400  # a Swift file under Tests/ has fewer lines than this
README_LINES_MAX = 300  # README.md has at most this many lines
# `decode(column:` in all of Sources/, at most: the two left read a column chosen at run time by a
# resource declaration (ResourceKit/Cells.swift, ResourceStore.formValues); any other row is Codable.
DECODE_COLUMN_BUDGET = 2
# The one file allowed to read the wall clock: `AppClock`, kept in AppServices; tests move it.
CLOCK_FILES = ("Sources/App/Support/Clock.swift",)
# Targets whose code must take the time from that clock (the server's). StorytimeKit and
# StorytimeCLI are the client that runs on families' devices: their clock is the device's, and
# their own tests pass a test clock (`CatalogBrowser(clock:)`).
CLOCK_SCOPE = ("Sources/App/", "Sources/Core/", "Sources/CatalogIndexing/")

RULES = [
    Rule(SQL_IN_CONTROLLER,
         "No SQL in a `*Controller.swift` or `*Routes.swift` file under Sources/App (nor in "
         "`routes.swift`, nor in any file declaring a `…Controller`/`…Routes` type or a route "
         "collection): no string "
         "literal holding a statement or clause (SELECT …, INSERT INTO, UPDATE … SET, DELETE FROM, "
         "WITH x AS (…), WHERE, JOIN, ORDER BY, RETURNING …), no `.raw(` call, no SQLKit builder "
         "on a database (`sql.select()`, `transaction.insert(into:)` …), no SQLKit expression "
         "(`SQLQueryString`, `SQLBind`, `SQLColumn` …). Comments do not count. Passing `req.sql` to a queries type is fine.",
         "0 sites",
         "A handler reads the request, calls its feature's queries and shapes the answer. The "
         "statements live in the feature's `…Queries.swift` (the console's in `ResourceStore` or "
         "a store), where the next schema change finds them, tests count them and two handlers "
         "share them. The parent API went from 29 such sites to 11 in the redesign; six features "
         "later the console alone had 43 again, because nothing noticed."),
    Rule(FILE_LENGTH,
         f"A Swift file under Sources/ has fewer than {SOURCE_LINES_LIMIT} lines; one under Tests/ "
         f"fewer than {TEST_LINES_LIMIT}.",
         f"Sources < {SOURCE_LINES_LIMIT}, Tests < {TEST_LINES_LIMIT} lines",
         "A file is read whole. Past 250 lines a source file is doing several things (the "
         "353-line `CatalogEngine.swift` memoised, corrected, highlighted, spliced bytes and "
         "rendered in one function); split it into named steps. Tests get a higher budget: a "
         "suite is a list of independent cases over one feature, read one case at a time, and "
         "its fixtures sit beside them; but past 400 lines nobody finds the case for a "
         "behaviour, so a suite that long is two suites."),
    Rule(README_LENGTH,
         f"README.md has at most {README_LINES_MAX} lines.",
         f"≤ {README_LINES_MAX} lines",
         "The README is the operator's manual: the two commands, configuration, the command "
         "line, deploying, and where to look when something breaks. Feature detail (formats, "
         "tables, conventions, figures) goes to docs/, linked from it. It grew from 164 to 381 "
         "lines in six features, and the operator's part drowned."),
    Rule(DATE_OUTSIDE_CLOCK,
         "No `Date()`, `Date.now`, `Date.init()`, `Date(timeIntervalSinceNow:)` or "
         "`.timeIntervalSinceNow` in the "
         "server's code (" + ", ".join(CLOCK_SCOPE) + ") outside the clock ("
         + ", ".join(CLOCK_FILES) + "), default arguments included (`now: Date = Date()`).",
         "0 outside the clock",
         "Time comes from one clock in `AppServices`, so a test sets it instead of sleeping. "
         "With 53 scattered reads, tests slept 22 times and seven commits went to timing "
         "flakiness under load. Durations are measured with `ContinuousClock`, not by "
         "subtracting two dates."),
    Rule(DECODE_BUDGET,
         f"`decode(column:` appears at most {DECODE_COLUMN_BUDGET} times in all of Sources/.",
         f"≤ {DECODE_COLUMN_BUDGET} in all",
         "A row is read into a `Codable` struct with `all(decoding:)`/`first(decoding:)`: the "
         "columns are named once, a renamed column fails in one place, and the struct is the "
         "documentation of the row. Column-by-column reads went from 231 to 321 while the rule "
         "was only written down. Tests may read columns one by one (they assert on a few)."),
    Rule(LINK_OUT,
         "Every link in README.md and docs/**/*.md that is not a web address (http, https, "
         "mailto) is relative, stays inside the repository and names a file git knows (tracked, "
         "or new and not ignored), with its #anchor a heading of the target when it is Markdown. "
         "Absolute paths, `~/`, `file:` links and links to git-ignored files fail.",
         "0",
         "The documentation is read in a clone, on GitHub and in an editor: a link to ../shared, "
         "to someone's disk or to a generated file works for one person only, and a moved "
         "section leaves links to nowhere."),
]

# ------------------------------------------------------------------------------------------------
# How the rules are checked
# ------------------------------------------------------------------------------------------------

import argparse
import bisect
import os
import re
import signal
import subprocess
import sys
import textwrap
import unicodedata
import urllib.parse

Finding = namedtuple("Finding", "rule path line message")

SKIPPED_DIRS = {".git", ".build", ".swiftpm", ".pgdata", ".secrets", "node_modules", "__pycache__",
                ".venv", ".schemathesis", ".hypothesis"}


def repository_files(root):
    """Relative paths (with /) of the files to check: git's tracked and untracked-not-ignored
    files when root is a git checkout, else every file under root."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard", "-z"],
                             capture_output=True, check=True).stdout
        top = subprocess.run(["git", "-C", root, "rev-parse", "--show-toplevel"],
                             capture_output=True, check=True, text=True).stdout.strip()
        if os.path.realpath(top) == os.path.realpath(root):
            names = [n.decode() for n in out.split(b"\0") if n]
            return sorted({n for n in names if os.path.isfile(os.path.join(root, n))})
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for base, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith(".pgdata")
                         and not d.startswith(".build"))
        for n in names:
            files.append(os.path.relpath(os.path.join(base, n), root).replace(os.sep, "/"))
    return sorted(files)


def read(root, path):
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        return f.read()


# ---- Swift source: comments and string literals --------------------------------------------------

class SwiftSource:
    """A Swift file split into code and string literals. `code` is the text with comments and
    the text of string literals blanked (newlines kept, so offsets and lines stay the same;
    interpolated code stays). `strings` are (start offset, end offset, text with each
    interpolation as `?`)."""

    def __init__(self, text):
        self.text = text
        self.n = len(text)
        self.masked = list(text)
        self.strings = []
        self.line_starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
        self._code(0, inside_interpolation=False)
        self.code = "".join(self.masked)

    def line(self, offset):
        return bisect.bisect_right(self.line_starts, offset)

    def _blank(self, a, b):
        for k in range(a, min(b, self.n)):
            if self.masked[k] != "\n":
                self.masked[k] = " "

    def _code(self, i, inside_interpolation):
        t, n, depth = self.text, self.n, 0
        while i < n:
            c = t[i]
            if c == "/" and t.startswith("//", i):
                j = t.find("\n", i)
                j = n if j < 0 else j
                self._blank(i, j)
                i = j
            elif c == "/" and t.startswith("/*", i):
                j = self._block_comment(i)
                self._blank(i, j)
                i = j
            elif c in "#\"":
                k = i
                while k < n and t[k] == "#":
                    k += 1
                if k < n and t[k] == '"':
                    i = self._string(i, k, k - i)
                else:
                    i = k if k > i else i + 1
            else:
                if inside_interpolation:
                    if c == "(":
                        depth += 1
                    elif c == ")":
                        if depth == 0:
                            return i + 1
                        depth -= 1
                i += 1
        return i

    def _block_comment(self, i):
        t, n, depth = self.text, self.n, 0
        while i < n:
            if t.startswith("/*", i):
                depth += 1
                i += 2
            elif t.startswith("*/", i):
                depth -= 1
                i += 2
                if depth == 0:
                    return i
            else:
                i += 1
        return n

    def _string(self, start, quote, hashes):
        t, n = self.text, self.n
        # `"""` opens a multi-line literal only when the line ends there (`#""""#` is the text `""`).
        multiline = t.startswith('"""', quote) and re.match(r'"""[ \t]*(?:\r?\n|$)', t[quote:quote + 80]) is not None
        delimiter = '"""' if multiline else '"'
        closing = delimiter + "#" * hashes
        escape = "\\" + "#" * hashes
        j = quote + len(delimiter)
        self._blank(start, j)
        text = []
        while j < n:
            if t.startswith(closing, j):
                self._blank(j, j + len(closing))
                j += len(closing)
                break
            if t.startswith(escape, j):
                k = j + len(escape)
                if k < n and t[k] == "(":
                    self._blank(j, k + 1)
                    text.append("?")
                    end = self._code(k + 1, inside_interpolation=True)
                    if end - 1 < n:
                        self._blank(end - 1, end)
                    j = end
                    continue
                self._blank(j, k + 1)
                text.append(" " if k < n and t[k] == "\n" else t[k:k + 1])
                j = k + 1
                continue
            if t[j] == "\n" and not multiline:
                break  # an unterminated literal: stop at the line's end
            if t[j] != "\n":
                self.masked[j] = " "
            text.append(t[j])
            j += 1
        self.strings.append((start, j, "".join(text)))
        return j


# ---- Rule: SQL in a controller or routes file ---------------------------------------------------

# Uppercase keywords in SQL's shape (the house writes SQL in capitals; prose rarely is): "SELECT a
# book" on a button is not SQL, "SELECT id FROM books" and "SELECT 1" are.
_IDENT = r"[a-z_\?(][\w.]*"
SQL_IN_LITERAL = [
    (re.compile(r"\bSELECT\s+(?:[\d*(?'\"]|DISTINCT\b|EXISTS\b|ARRAY\b|CASE\b|NULL\b|NOT\b|TRUE\b|FALSE\b|"
                r"[a-z_][\w.]*\s*(?:[(,.]|\bAS\b|\bFROM\b|$)|[a-z]\w*_\w*)|\bSELECT\b.*\bFROM\b", re.S), "SELECT"),
    (re.compile(r"\bINSERT\s+INTO\s+" + _IDENT), "INSERT INTO"),
    (re.compile(r"\bUPDATE\s+" + _IDENT + r"(?:\s+(?:AS\s+)?\w+)?\s+SET\b"), "UPDATE … SET"),
    (re.compile(r"\bDELETE\s+FROM\s+" + _IDENT), "DELETE FROM"),
    (re.compile(r"\bWITH\s+(?:RECURSIVE\s+)?\w+(?:\s*\([^)]*\))?\s+AS\s+(?:NOT\s+)?(?:MATERIALIZED\s+)?\("),
     "WITH … AS ("),
    (re.compile(r"\b(?:CREATE|ALTER|DROP)\s+(?:UNIQUE\s+)?(?:TABLE|INDEX|VIEW|TRIGGER|FUNCTION|EXTENSION|TYPE|SCHEMA)\b"),
     "DDL"),
    (re.compile(r"\b(?:TRUNCATE\s+" + _IDENT + r"|LOCK\s+TABLE|SET\s+(?:LOCAL|SESSION|TRANSACTION)\s+\w)"), "SQL command"),
    (re.compile(r"^\s*(?:BEGIN|COMMIT|ROLLBACK|SAVEPOINT\s+\w+)\s*;?\s*$"), "BEGIN/COMMIT"),
    (re.compile(r"\b(?:WHERE|ORDER\s+BY|GROUP\s+BY|(?:LEFT\s+|INNER\s+|CROSS\s+)?JOIN|RETURNING|ON\s+CONFLICT)\s+"
                + _IDENT + r"|[\w)?]\s+IS\s+(?:NOT\s+)?NULL\b|\bNOT\s+EXISTS\s*\(|\bLIMIT\s+[\d?]|\bCASE\s+WHEN\b|"
                r"^\s*WHERE\s*$"), "clause"),
]
SQL_IN_CODE = [
    re.compile(r"\.\s*raw\s*\("),  # sql.raw(…), req.sql.raw(…), SQLRaw's cousins
    re.compile(r"\b(?:sql|transaction|tx|connection)\s*\.\s*(?:select|insert|update|delete|number)\s*\("),  # builders
    re.compile(r"\bSQL(?:QueryString|Fragment|Raw|Bind|Binds|Identifier|Column|Alias|Literal|Function|"
               r"BinaryExpression|BinaryOperator|Direction|List|Group|Expression|OrderBy|Statement)\b"),
]


# A type that registers routes, whatever its file is called: a `…Controller`/`…Routes` type or
# anything conforming to a route collection (Vapor's, the parent API's, a child's).
ROUTE_TYPE = re.compile(r"\b(?:struct|final\s+class|class|enum|extension)\s+\w*(?:Controller|Routes)\b"
                        r"|:\s*[^{]*\b(?:RouteCollection|APIRouteCollection|ChildRouteCollection)\b")


def sql_is_checked(path, source=None):
    if not (path.startswith("Sources/App/") and path.endswith(".swift")):
        return False
    if path.endswith(("Controller.swift", "Routes.swift")) or path == "Sources/App/routes.swift":
        return True
    return source is not None and ROUTE_TYPE.search(source.code) is not None


def sql_sites(source):
    """(first line, what was found) per site: the lines that hold SQL, merged where they share a
    line (a call and its multi-line literal) or a builder chain continues (`.where(…)` on the next
    line), so one statement is one site."""
    spans = []
    for start, end, text in source.strings:
        found = [label for pattern, label in SQL_IN_LITERAL if pattern.search(text)]
        if found:
            spans.append((source.line(start), source.line(max(start, end - 1)), ["SQL text: " + ", ".join(found)]))
    for pattern in SQL_IN_CODE:
        for m in pattern.finditer(source.code):
            line = source.line(m.start())
            spans.append((line, line, ["`" + re.sub(r"\s+", "", m.group(0)) + "`"]))
    spans.sort(key=lambda s: (s[0], s[1]))
    code_lines = source.code.split("\n")
    sites = []
    for first, last, found in spans:
        continues = first == sites[-1][1] + 1 and code_lines[first - 1].lstrip().startswith(".") if sites else False
        if sites and (first <= sites[-1][1] or continues):
            prev = sites[-1]
            sites[-1] = (prev[0], max(prev[1], last), prev[2] + [f for f in found if f not in prev[2]])
        else:
            sites.append((first, last, list(found)))
    return [(first, found) for first, _, found in sites]


def check_sql(root, files, sources):
    findings = []
    for path in files:
        if not sql_is_checked(path, sources(path)):
            continue
        for line, reasons in sql_sites(sources(path)):
            findings.append(Finding(SQL_IN_CONTROLLER, path, line,
                                    "SQL in a controller/routes file (" + ", ".join(reasons)
                                    + ") — move the statement into the feature's …Queries.swift or store"))
    return findings


# ---- Rule: file length ----------------------------------------------------------------------------

def line_count(text):
    return len(text.splitlines())


def length_limit(path):
    if path.startswith("Tests/"):
        return TEST_LINES_LIMIT, "a test file"
    return SOURCE_LINES_LIMIT, "a source file"


def check_length(root, files, sources):
    findings = []
    for path in files:
        if not path.endswith(".swift") or not (path.startswith(("Sources/", "Tests/")) or "/" not in path):
            continue
        lines = line_count(sources(path).text)
        limit, kind = length_limit(path)
        if lines >= limit:
            findings.append(Finding(FILE_LENGTH, path, limit, f"{lines} lines; {kind} has fewer than "
                                    f"{limit} — split it into files (or steps) that each do one thing"))
    return findings


def check_readme(root, files, sources):
    if "README.md" not in files:
        return [Finding(README_LENGTH, "README.md", 1, "README.md is missing")]
    lines = line_count(read(root, "README.md"))
    if lines > README_LINES_MAX:
        return [Finding(README_LENGTH, "README.md", README_LINES_MAX + 1,
                        f"{lines} lines; the operator's manual has at most {README_LINES_MAX} — "
                        "move feature detail to docs/ and link to it")]
    return []


# ---- Rule: Date() outside the clock ---------------------------------------------------------------

WALL_CLOCK = re.compile(r"\bDate\s*(?:\(\s*\)|\.\s*now\b|\.\s*init\s*\(\s*\)|\(\s*timeIntervalSinceNow\s*:)"
                        r"|\.\s*timeIntervalSinceNow\b")


def check_clock(root, files, sources):
    findings = []
    for path in files:
        if not path.endswith(".swift") or not path.startswith(CLOCK_SCOPE) or path in CLOCK_FILES:
            continue
        source = sources(path)
        for m in WALL_CLOCK.finditer(source.code):
            what = re.sub(r"\s+", "", m.group(0))
            what = what + ")" if what.endswith(":") else what
            findings.append(Finding(DATE_OUTSIDE_CLOCK, path, source.line(m.start()),
                                    f"`{what}` reads the wall clock — take `now` from the app's clock "
                                    f"({', '.join(CLOCK_FILES)}) or have the caller pass it"))
    return findings


# ---- Rule: decode(column:) budget -----------------------------------------------------------------

DECODE_COLUMN = re.compile(r"\.\s*decode\s*\(\s*column\s*:")
ROW_DECODING = re.compile(r"\b(?:all|first)\s*\(\s*decoding\s*:")


def decode_sites(files, sources):
    per_file = {}
    for path in files:
        if path.endswith(".swift") and path.startswith("Sources/"):
            source = sources(path)
            lines = [source.line(m.start()) for m in DECODE_COLUMN.finditer(source.code)]
            if lines:
                per_file[path] = lines
    return per_file


def check_decode(root, files, sources):
    per_file = decode_sites(files, sources)
    total = sum(len(v) for v in per_file.values())
    if total <= DECODE_COLUMN_BUDGET:
        return []
    findings = []
    for path, lines in sorted(per_file.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        findings.append(Finding(DECODE_BUDGET, path, lines[0],
                                f"{len(lines)} of the {total} `decode(column:` reads in Sources/ (budget "
                                f"{DECODE_COLUMN_BUDGET} in all) — decode the row into a Codable struct "
                                "with all(decoding:)/first(decoding:)"))
    return findings


# ---- Rule: links out of the repository ------------------------------------------------------------

FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
REFERENCE_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
AUTOLINK = re.compile(r"<([A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*)>")
HTML_LINK = re.compile(r"<(?:a|img|source|link)\b[^>]*?\b(?:href|src)\s*=\s*[\"']([^\"']*)[\"']", re.I)
HTML_ANCHOR = re.compile(r"<a\b[^>]*?\b(?:id|name)\s*=\s*[\"']([^\"']+)[\"']", re.I)
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
WEB_SCHEMES = {"http", "https", "mailto"}


def markdown_links(text):
    """(line, target) of every link outside code blocks and code spans."""
    links, fence = [], None
    for number, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            continue
        if m:
            fence = m.group(1)
            continue
        line = CODE_SPAN.sub(lambda s: " " * len(s.group(0)), line)
        for pattern in (INLINE_LINK, REFERENCE_DEF, AUTOLINK, HTML_LINK):
            for found in pattern.finditer(line):
                target = found.group(1)
                if target.startswith("<") and target.endswith(">"):
                    target = target[1:-1]
                links.append((number, target))
    return links


def heading_anchors(text):
    """The anchors GitHub gives a Markdown file's headings (and explicit <a id/name>)."""
    anchors, seen, fence = set(), {}, None
    for line in text.splitlines():
        m = FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            continue
        if m:
            fence = m.group(1)
            continue
        anchors.update(a for a in HTML_ANCHOR.findall(line))
        h = re.match(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not h:
            continue
        title = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", h.group(1))  # a link's text
        title = re.sub(r"<[^>]+>", "", title)  # inline HTML
        slug = "".join(c for c in title.lower()
                       if c in " -_" or unicodedata.category(c)[0] in "LMN").replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def check_links(root, files, sources):
    findings = []
    known = set(files)
    known_dirs = {os.path.dirname(f) for f in files}
    for d in list(known_dirs):
        while d:
            d = os.path.dirname(d)
            known_dirs.add(d)
    docs = [f for f in files if f == "README.md" or (f.startswith("docs/") and f.endswith(".md"))]
    anchors_of = {}
    for path in docs:
        text = read(root, path)
        for line, target in markdown_links(text):
            problem = link_problem(root, path, target, known, known_dirs, anchors_of)
            if problem:
                findings.append(Finding(LINK_OUT, path, line, f"link `{target}` {problem}"))
    return findings


def link_problem(root, path, target, known, known_dirs, anchors_of):
    scheme = SCHEME.match(target)
    if scheme and len(scheme.group(1)) > 1:  # not a Windows drive letter
        if scheme.group(1).lower() in WEB_SCHEMES:
            return None
        return f"is a `{scheme.group(1)}:` link — it points at one machine, not the repository"
    if target.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:[\\/]", target):
        return "is an absolute path — write it relative to this file"
    if target.startswith("~"):
        return "points into a home folder — write it relative to this file"
    location, _, fragment = target.partition("#")
    location = urllib.parse.unquote(location.partition("?")[0])
    fragment = urllib.parse.unquote(fragment)
    if not location:
        resolved = path
    else:
        resolved = os.path.normpath(os.path.join(os.path.dirname(path), location)).replace(os.sep, "/")
        if resolved == ".." or resolved.startswith("../"):
            return "leaves the repository — link to a file inside it"
        if resolved == ".":
            resolved = ""
        if resolved not in known and resolved not in known_dirs:
            if os.path.exists(os.path.join(root, resolved)):
                return "names a file git ignores (generated or local) — it is not in a clone"
            return "names a path that does not exist in the repository"
    if fragment and resolved.endswith(".md") and resolved in known:
        if resolved not in anchors_of:
            anchors_of[resolved] = heading_anchors(read(root, resolved))
        if fragment.lower() not in {a.lower() for a in anchors_of[resolved]}:
            return f"names no heading `#{fragment}` in {resolved}"
    return None


# ---- Running them ---------------------------------------------------------------------------------

CHECKS = [check_sql, check_length, check_readme, check_clock, check_decode, check_links]


def run(root):
    files = repository_files(root)
    cache = {}

    def sources(path):
        if path not in cache:
            cache[path] = SwiftSource(read(root, path))
        return cache[path]

    findings = []
    for check in CHECKS:
        findings.extend(check(root, files, sources))
    return files, sources, findings


def print_rules():
    print("The house's rules (scripts/house.py; `make house` checks them)\n")
    for rule in RULES:
        print(f"{rule.name}  (budget: {rule.budget})")
        for label, text in (("checks", rule.checks), ("why", rule.why)):
            print(textwrap.fill(text, width=100, initial_indent=f"  {label}: ", subsequent_indent="    "))
        print()


def print_report(root, files, sources, findings):
    by_rule = {r.name: [f for f in findings if f.rule == r.name] for r in RULES}

    def per_file(items):
        counts = {}
        for f in items:
            counts[f.path] = counts.get(f.path, 0) + 1
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))

    print(f"make house — report for {os.path.abspath(root)}\n")
    sql = by_rule[SQL_IN_CONTROLLER]
    checked = [p for p in files if sql_is_checked(p)]
    print(f"{SQL_IN_CONTROLLER}: {len(sql)} sites in {len(per_file(sql))} of {len(checked)} "
          f"controller/routes files (budget 0)")
    for path, n in per_file(sql):
        print(f"  {n:4}  {path}")
    print()

    length = by_rule[FILE_LENGTH]
    swift = [p for p in files if p.endswith(".swift")]
    longest = sorted(((line_count(sources(p).text), p) for p in swift), reverse=True)[:1]
    print(f"{FILE_LENGTH}: {len(length)} files over (Sources < {SOURCE_LINES_LIMIT}, Tests < "
          f"{TEST_LINES_LIMIT}); longest {longest[0][0] if longest else 0} lines")
    for f in sorted(length, key=lambda f: (not f.path.startswith("Sources/"), f.path)):
        print(f"  {f.message.split(';')[0]:>10}  {f.path}")
    near = sorted((n, p) for n, p in ((line_count(sources(p).text), p) for p in swift)
                  if p.startswith("Tests/") and SOURCE_LINES_LIMIT <= n < TEST_LINES_LIMIT)
    if near:
        print(f"  (test files of {SOURCE_LINES_LIMIT}–{TEST_LINES_LIMIT - 1} lines, allowed: {len(near)}; "
              f"longest {near[-1][0]} {near[-1][1]})")
    print()

    readme = line_count(read(root, "README.md")) if "README.md" in files else 0
    print(f"{README_LENGTH}: README.md has {readme} lines (at most {README_LINES_MAX})\n")

    clock = by_rule[DATE_OUTSIDE_CLOCK]
    print(f"{DATE_OUTSIDE_CLOCK}: {len(clock)} wall-clock reads in {len(per_file(clock))} files "
          f"outside {', '.join(CLOCK_FILES)} (budget 0)")
    for scope in CLOCK_SCOPE:
        n = sum(1 for f in clock if f.path.startswith(scope))
        print(f"  {n:4}  in {scope}")
    for path, n in per_file(clock):
        print(f"  {n:4}  {path}")
    print()

    decodes = decode_sites(files, sources)
    total = sum(len(v) for v in decodes.values())
    row_decodes = sum(len(ROW_DECODING.findall(sources(p).code)) for p in files
                      if p.endswith(".swift") and p.startswith("Sources/"))
    print(f"{DECODE_BUDGET}: {total} `decode(column:` in Sources/ over {len(decodes)} files "
          f"(budget {DECODE_COLUMN_BUDGET}); rows read whole with `all/first(decoding:`: {row_decodes}")
    for path, lines in sorted(decodes.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"  {len(lines):4}  {path}")
    print()

    links = by_rule[LINK_OUT]
    print(f"{LINK_OUT}: {len(links)} links out of the repository or to nowhere (budget 0)")
    for f in links:
        print(f"  {f.path}:{f.line}: {f.message}")
    print()

    print("summary: " + ", ".join(f"{r.name} {'FAIL' if by_rule[r.name] else 'ok'}" for r in RULES))


def main(argv=None):
    parser = argparse.ArgumentParser(description="The house's rules (see the top of this file).")
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        help="the repository to check (default: the one holding this script)")
    parser.add_argument("--report", action="store_true", help="counts per rule and the files behind them")
    parser.add_argument("--rules", action="store_true", help="print the rules and why the house keeps them")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends it quietly
    if args.rules:
        print_rules()
        return 0
    files, sources, findings = run(args.root)
    if args.report:
        print_report(args.root, files, sources, findings)
        return 0
    order = {r.name: i for i, r in enumerate(RULES)}
    for f in sorted(findings, key=lambda f: (order[f.rule], f.path, f.line)):
        print(f"{f.path}:{f.line}: {f.rule}: {f.message}")
    if findings:
        failed = [r.name for r in RULES if any(f.rule == r.name for f in findings)]
        print(f"make house: {len(findings)} findings ({', '.join(failed)}); the rules and why: "
              "scripts/house.py --rules", file=sys.stderr)
        return 1
    print(f"make house: all {len(RULES)} rules hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The judged query set (bench/relevance/judged.tsv) and its scores.

  judged.py generate        writes judged.tsv from seeds/demo.json: for each of the demo's 50
                            classics (English, French, Spanish), queries a family would type for
                            it — its most distinctive title word, a prefix, a typo, the other
                            number (plural/singular, irregular plurals), a child's spelling, two
                            title words — each judged: that book must come first.
  judged.py score URL TOKEN queries the running app (/api/v1/catalog/books, per_page=10) and prints
                            nDCG@10 and recall@10 overall and per kind, as a Markdown table.

A query's relevant books are the classics whose title holds all its judged words; generated
demo books never count as relevant (they reuse a few hundred words), so a query is judged on
whether the book a parent had in mind is in the first ten, and where."""
import json
import math
import os
import sys
import unicodedata
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SEEDS = os.path.join(HERE, "..", "..", "seeds", "demo.json")
JUDGED = os.path.join(HERE, "judged.tsv")

IRREGULAR = {"mice": "mouse", "geese": "goose", "wolves": "wolf", "feet": "foot", "children": "child",
             "chevaux": "cheval", "animaux": "animal", "oiseaux": "oiseau", "leones": "leon"}


def fold(text):
    return "".join(c for c in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(c))


def words(text):
    out, word = [], ""
    for c in fold(text):
        if c.isalnum():
            word += c
        elif word:
            out.append(word)
            word = ""
    return out + ([word] if word else [])


def other_number(word, language):
    if word in IRREGULAR:
        return IRREGULAR[word]
    back = {v: k for k, v in IRREGULAR.items()}
    if word in back:
        return back[word]
    if language == "en":
        if word.endswith("ies"):
            return word[:-3] + "y"
        if word.endswith(("ches", "shes", "xes", "sses")):
            return word[:-2]
        if word.endswith("s") and not word.endswith("ss"):
            return word[:-1]
        if word.endswith("y") and word[-2:-1] not in "aeiou":
            return word[:-1] + "ies"
        return word + ("es" if word.endswith(("ch", "sh", "x", "s")) else "s")
    if language == "es":
        if word.endswith("es") and len(word) > 5:
            return word[:-2]
        if word.endswith("s"):
            return word[:-1]
        return word + ("s" if word[-1] in "aeiou" else "es")
    return word[:-1] if word.endswith(("s", "x")) else word + "s"


def typo(word):
    i = len(word) // 2
    return word[:i] + word[i + 1] + word[i] + word[i + 2:] if word[i] != word[i + 1] else word[:i] + "x" + word[i + 1:]


def kid(word):
    w = word.replace("ph", "f").replace("ck", "k").replace("tion", "shun").replace("ough", "uf")
    w = w.replace("ee", "ea") if "ee" in w else w
    out = []
    for i, c in enumerate(w):
        if i > 0 and c == w[i - 1]:
            continue                     # doubled letters once
        if c == "c" and i + 1 < len(w) and w[i + 1] in "aou":
            c = "k"
        out.append(c)
    w = "".join(out)
    vowels = [i for i, c in enumerate(w) if c in "aeiou" and i > 0]
    if vowels:
        i = vowels[len(vowels) // 2]
        w = w[:i] + {"a": "u", "e": "i", "i": "e", "o": "a", "u": "o"}[w[i]] + w[i + 1:]
    return w


def generate():
    seeds = json.load(open(SEEDS))
    common = {fold(w) for key in ("adjectives", "nouns", "places", "verbs", "themes", "names") for item in seeds[key] for w in words(item)}
    common |= {"the", "and", "les", "los", "las", "del", "de", "la", "le", "el", "who", "des", "du", "en", "my", "too", "go"}
    people = {fold(w) for key in ("first_names", "last_names") for w in seeds[key]}
    surnames = [words(c[1])[-1] for c in seeds["classics"]]
    rows = []
    for title, author, _, language in seeds["classics"]:
        title_words = [w for w in words(title) if len(w) >= 3]
        distinctive = sorted((w for w in title_words if w not in common), key=lambda w: (-len(w), w))
        if not distinctive:
            continue
        word = distinctive[0]
        queries = [("word", word), ("prefix", word[:4])]
        if len(word) >= 5:
            queries.append(("typo", typo(word)))
            spelled = kid(word)
            if spelled != word:
                queries.append(("kid spelling", spelled))
        form = other_number(word, language)
        if form != word:
            queries.append(("plural/singular", form))
        for w in distinctive[1:2] + [w for w in title_words if w != word][:1]:
            queries.append(("two words", word + " " + w))
            break
        surname = words(author)[-1]
        if surname not in people and surnames.count(surname) == 1:
            queries.append(("author", surname))
        for kind, query in queries:
            rows.append((kind if language == "en" else kind + " (" + language + ")", query, title))
    with open(JUDGED, "w") as out:
        out.write("# kind\tquery\tthe book that must come first (bench/relevance/judged.py generate)\n")
        for row in rows:
            out.write("\t".join(row) + "\n")
    print(f"{len(rows)} judged queries written to {JUDGED}")


def score(base, token):
    classics = [c[0] for c in json.load(open(SEEDS))["classics"]]
    rows = [line.rstrip("\n").split("\t") for line in open(JUDGED) if not line.startswith("#") and line.strip()]
    totals = {}
    for kind, query, expected in rows:
        url = base + "/api/v1/catalog/books?per_page=10&q=" + urllib.parse.quote(query)
        request = urllib.request.Request(url, headers={"Authorization": "Bearer " + token})
        titles = [b["title"] for b in json.load(urllib.request.urlopen(request))["data"]]
        relevant = {expected}
        gains = [1.0 / math.log2(i + 2) for i, t in enumerate(titles) if t in relevant]
        ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(relevant), 10)))
        ndcg, recall = sum(gains) / ideal, len([t for t in titles if t in relevant]) / len(relevant)
        for key in (kind.split(" (")[0], "all"):
            n, a, b = totals.get(key, (0, 0.0, 0.0))
            totals[key] = (n + 1, a + ndcg, b + recall)
        if "(" in kind:
            n, a, b = totals.get("other languages", (0, 0.0, 0.0))
            totals["other languages"] = (n + 1, a + ndcg, b + recall)
    _ = classics
    print("| kind | queries | nDCG@10 | recall@10 |")
    print("|---|---:|---:|---:|")
    for key in sorted(totals, key=lambda k: (k == "all", k)):
        n, a, b = totals[key]
        print(f"| {key} | {n} | {a / n:.3f} | {b / n:.3f} |")


if __name__ == "__main__":
    if sys.argv[1:2] == ["generate"]:
        generate()
    elif sys.argv[1:2] == ["score"] and len(sys.argv) == 4:
        score(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)

"""Writes ~6,000 distinct parent-app paths drawn from the seeded catalog's own words: as-you-type
prefixes of 3-8 letters (a tenth with one typo, a fifth two words), category and/or age browsing
on pages 1-3, detail of active books and categories.
With SUGGEST=1: ~2,000 as-you-type /catalog/suggest paths instead (1-8 letters, a fifth after a
first word).
With ONEOFF=N: N distinct paths drawn the same way (as-you-type searches new at every key make up
most of them: the one-off mix).
Usage: mixed_paths.py WORDS_FILE SLUGS_FILE BOOK_IDS_FILE OUT."""
import os
import random
import sys
import urllib.parse

words = [w.strip() for w in open(sys.argv[1]) if len(w.strip()) >= 3]
slugs = [s.strip() for s in open(sys.argv[2]) if s.strip()]
book_ids = [int(i) for i in open(sys.argv[3]) if i.strip()]
rng = random.Random(8)


def typo(word):
    i = rng.randrange(len(word))
    kind = rng.randrange(4)
    letters = list(word)
    if kind == 0:
        letters[i] = rng.choice("abcdefghijklmnopqrstuvwxyz")
    elif kind == 1:
        letters.insert(i, rng.choice("abcdefghijklmnopqrstuvwxyz"))
    elif kind == 2 and len(letters) > 5:
        del letters[i]
    elif i + 1 < len(letters):
        letters[i], letters[i + 1] = letters[i + 1], letters[i]
    return "".join(letters)


def typed():
    word = rng.choice(words)
    text = word[: rng.randint(3, max(3, min(8, len(word))))]
    if rng.random() < 0.1 and len(word) >= 5:
        text = typo(word[: max(5, len(text))])
    return text


paths = set()
while os.environ.get("SUGGEST") and len(paths) < 2000:
    word = rng.choice(words)
    text = word[: rng.randint(1, max(1, min(8, len(word))))]
    if rng.random() < 0.2:
        text = rng.choice(words) + " " + text
    paths.add("/api/v1/catalog/suggest?" + urllib.parse.urlencode({"q": text}))
target = int(os.environ.get("ONEOFF") or 6000)
if os.environ.get("ONEOFF"):
    rng = random.Random(int(os.environ["ONEOFF"]))
attempts = 0
# A small catalog has fewer distinct paths than asked for: stop when new ones stop coming.
while not os.environ.get("SUGGEST") and len(paths) < target and attempts < 20 * target:
    attempts += 1
    r = rng.random()
    if r < 0.55:
        q = typed() + (" " + typed() if rng.random() < 0.2 else "")
        params = {"q": q}
        if rng.random() < 0.2:
            params["age"] = rng.randint(0, 10)
        paths.add("/api/v1/catalog/books?" + urllib.parse.urlencode(params))
    elif r < 0.85:
        params = {}
        if rng.random() < 0.7:
            params["category"] = rng.choice(slugs)
        if rng.random() < 0.6 or not params:
            params["age"] = rng.choice([0, 2, 4, 6, 8])
        params["page"] = rng.randint(1, 3)
        if rng.random() < 0.3:
            params["sort"] = "newest"
        paths.add("/api/v1/catalog/books?" + urllib.parse.urlencode(params))
    elif r < 0.98:
        paths.add("/api/v1/catalog/books/%d" % rng.choice(book_ids))
    else:
        paths.add("/api/v1/catalog/categories?v=%d" % rng.randint(1, 100))
with open(sys.argv[4], "w") as out:
    for path in sorted(paths):
        out.write(path + "\n")

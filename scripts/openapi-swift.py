#!/usr/bin/env python3
"""Derives StorytimeKit's copy of the API document from public/openapi.json.

public/openapi.json writes a nullable object the OpenAPI 3.1 way, `anyOf: [{$ref}, {type: null}]`,
which strict validators and other generators expect. swift-openapi-generator 1.14 skips the
`null` branch (apple/swift-openapi-generator#906), so StorytimeKit is generated from a copy in which
such a property is a plain `$ref` left out of `required`: Swift sees an optional, which decodes
`null` and a missing field alike. An entry composed as `allOf: [BookFields, its own fields]` is
one flat object there, so Swift reads `entry.title`. `make test` (tests/openapi.sh) fails when the copy is stale.

    scripts/openapi-swift.py            # rewrites Sources/StorytimeKit/openapi.json
    scripts/openapi-swift.py --check    # exit 1 when it differs
"""
import json, pathlib, sys

root = pathlib.Path(__file__).resolve().parent.parent
source, target = root / "public/openapi.json", root / "Sources/StorytimeKit/openapi.json"


def nullable_ref(schema):
    """The `$ref` of `anyOf: [{$ref}, {type: null}]`, else None."""
    branches = schema.get("anyOf") if isinstance(schema, dict) else None
    if not isinstance(branches, list) or len(branches) != 2 or {"type": "null"} not in branches:
        return None
    ref = next(b for b in branches if b != {"type": "null"})
    return ref if set(ref) == {"$ref"} else None


def rewrite(node):
    if isinstance(node, list):
        return [rewrite(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: rewrite(value) for key, value in node.items()}
    properties = node.get("properties")
    if isinstance(properties, dict):
        for name, schema in properties.items():
            ref = nullable_ref(schema)
            if ref is None:
                continue
            properties[name] = {**{k: v for k, v in schema.items() if k != "anyOf"}, **ref}
            if name in node.get("required", []):
                node["required"] = [r for r in node["required"] if r != name]
    return node


def flatten(document):
    """`allOf: [{$ref}, {object}]` as one object with both's fields: Swift gets `entry.title`
    rather than `entry.value1.title`."""
    schemas = document["components"]["schemas"]
    for name, schema in schemas.items():
        parts = schema.get("allOf")
        if not (isinstance(parts, list) and len(parts) == 2 and set(parts[0]) == {"$ref"}):
            continue
        base = schemas[parts[0]["$ref"].rsplit("/", 1)[1]]
        own = parts[1]
        merged = {k: v for k, v in schema.items() if k != "allOf"}
        merged["type"] = "object"
        merged["required"] = base.get("required", []) + [r for r in own.get("required", []) if r not in base.get("required", [])]
        merged["properties"] = {**base.get("properties", {}), **own.get("properties", {})}
        schemas[name] = merged
    return document


text = json.dumps(rewrite(flatten(json.loads(source.read_text()))), indent=1, ensure_ascii=False) + "\n"
if sys.argv[1:] == ["--check"]:
    if not target.exists() or target.is_symlink() or target.read_text() != text:
        sys.exit(f"{target.relative_to(root)} is stale: run scripts/openapi-swift.py")
else:
    if target.is_symlink():
        target.unlink()
    target.write_text(text)

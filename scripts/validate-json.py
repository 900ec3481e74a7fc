#!/usr/bin/env python3
"""Validates soundmark JSON outputs against docs/schemas (JSON Schema 2020-12).

usage: validate-json.py SCHEMA_DIR SCHEMA=FILE...

Each FILE holds one JSON object, or JSON Lines (one object a line); every object is checked
against SCHEMA_DIR/SCHEMA.schema.json, whose $refs (common.schema.json#/$defs/…) resolve
within SCHEMA_DIR. Prints one line per failure (FILE:LINE: SCHEMA: path: message) and
"ok: N object(s)" at the end. Exit 0 when all are valid, 1 when some are not, 2 on bad usage
or unreadable files, 3 when the jsonschema module is missing (Debian: python3-jsonschema).
"""
import json
import os
import sys

try:
    import jsonschema
except ImportError:
    print("validate-json: the Python module jsonschema is missing: install python3-jsonschema "
          "(apt-get install python3-jsonschema, or make deps)", file=sys.stderr)
    sys.exit(3)


def load_schemas(folder):
    """Every *.schema.json of folder, by $id."""
    schemas = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".schema.json"):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                schema = json.load(f)
            schemas[schema["$id"]] = schema
    return schemas


def validator_for(schema, schemas):
    """A Draft 2020-12 validator whose references resolve among schemas (jsonschema 4.18+ through
    referencing, older versions through RefResolver)."""
    cls = jsonschema.Draft202012Validator
    try:
        from referencing import Registry, Resource
        registry = Registry().with_resources((uri, Resource.from_contents(s)) for uri, s in schemas.items())
        return cls(schema, registry=registry)
    except (ImportError, TypeError):  # no referencing, or a jsonschema before 4.18 (Debian 12: 4.10)
        resolver = jsonschema.RefResolver(schema["$id"], schema, store=dict(schemas))
        return cls(schema, resolver=resolver)


def documents(path):
    """(line, object) of a file of one JSON value or of JSON Lines."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if not text.strip():
        raise ValueError("empty output")
    try:
        return [(1, json.loads(text))]
    except json.JSONDecodeError:
        return [(n, json.loads(line)) for n, line in enumerate(text.splitlines(), 1) if line.strip()]


def main(argv):
    if len(argv) < 3 or any("=" not in a for a in argv[2:]):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    schemas = load_schemas(argv[1])
    failures = checked = 0
    for pair in argv[2:]:
        name, path = pair.split("=", 1)
        uri = next((u for u in schemas if u.endswith("/" + name + ".schema.json")), None)
        if uri is None:
            print(f"validate-json: no schema {name}.schema.json in {argv[1]}", file=sys.stderr)
            return 2
        validator = validator_for(schemas[uri], schemas)
        try:
            docs = documents(path)
        except (OSError, ValueError) as e:
            print(f"{path}: {name}: not JSON: {e}")
            failures += 1
            continue
        for line, doc in docs:
            checked += 1
            for error in sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path)):
                where = "/".join(str(p) for p in error.absolute_path) or "(top)"
                print(f"{path}:{line}: {name}: {where}: {error.message[:300]}")
                failures += 1
    print(f"ok: {checked} object(s)" if failures == 0 else f"{failures} failure(s) in {checked} object(s)")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/python3
# Validates one JSON document against one of docs/schemas/*.schema.json.
#   /usr/bin/python3 tests/cli/validate_json.py SCHEMA DOCUMENT   (DOCUMENT "-": stdin)
#   /usr/bin/python3 tests/cli/validate_json.py --check-schema SCHEMA...
# Exit 0: valid. Exit 1: the document breaks the schema (every violation listed, one a line,
# with its JSON path). Exit 2: usage, an unreadable file, a document that is not JSON, a
# schema that is not a valid draft 2020-12 schema, or python3-jsonschema missing.
#
# Stricter than plain JSON Schema where memplan's JSON contract is (docs/schemas/README.md):
#  - "integer" means a JSON number written without a fraction or exponent: 1.0 is not a
#    byte count, although draft 2020-12 would accept it;
#  - a key twice in one object, and NaN / Infinity, are errors (nlohmann::json never
#    writes them, so seeing one means something else wrote the output).
# Runs with Debian's /usr/bin/python3 and python3-jsonschema (scripts/setup.sh installs it);
# a `python3` on PATH may be a pyenv shim without Debian's packages.
import json
import sys

PROG = "validate_json"


def fail(message, code=2):
    sys.stderr.write(f"{PROG}: error: {message}\n")
    sys.exit(code)


def load_json(path, what):
    try:
        if path == "-":
            text = sys.stdin.read()
            path = "<stdin>"
        else:
            with open(path, encoding="utf-8") as f:
                text = f.read()
    except OSError as e:
        fail(f"{path}: cannot read the {what}: {e.strerror}")
    except UnicodeDecodeError as e:
        fail(f"{path}: the {what} is not UTF-8 (byte {e.start})")

    def no_duplicates(pairs):
        seen = {}
        for key, value in pairs:
            if key in seen:
                raise ValueError(f"key '{key}' appears twice in one object")
            seen[key] = value
        return seen

    def no_constants(name):
        raise ValueError(f"{name} is not JSON")

    try:
        return json.loads(text, object_pairs_hook=no_duplicates, parse_constant=no_constants)
    except json.JSONDecodeError as e:
        fail(f"{path}:{e.lineno}:{e.colno}: the {what} is not JSON: {e.msg}")
    except ValueError as e:
        fail(f"{path}: the {what} is not valid JSON: {e}")


def json_path(parts):
    out = "$"
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def short(text, limit=300):
    return text if len(text) <= limit else text[:limit] + "..."


def import_jsonschema():
    try:
        import jsonschema
        return jsonschema
    except ImportError:
        hint = "" if sys.executable == "/usr/bin/python3" else f"; run this script with /usr/bin/python3, not {sys.executable}"
        fail(f"python3-jsonschema is not installed (apt-get install python3-jsonschema, or scripts/setup.sh){hint}")


def checked_schema(jsonschema, schema_path):
    """Returns the schema and its validator class; exits 2 when it is not a valid schema."""
    schema = load_json(schema_path, "schema")
    base = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        base.check_schema(schema)
    except jsonschema.exceptions.SchemaError as e:
        fail(f"{schema_path}: not a valid schema: {short(e.message)} at {json_path(e.absolute_path)}")
    return schema, base


USAGE = "usage: validate_json.py SCHEMA DOCUMENT  (DOCUMENT '-' reads stdin)\n" \
        "       validate_json.py --check-schema SCHEMA...\n"


def main(argv):
    if len(argv) == 2 and argv[1] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0
    if len(argv) >= 3 and argv[1] == "--check-schema":
        jsonschema = import_jsonschema()
        for path in argv[2:]:
            checked_schema(jsonschema, path)
        return 0
    if len(argv) != 3 or argv[1].startswith("--"):
        sys.stderr.write(USAGE)
        return 2
    schema_path, doc_path = argv[1], argv[2]
    jsonschema = import_jsonschema()
    from jsonschema import validators

    schema, base = checked_schema(jsonschema, schema_path)
    document = load_json(doc_path, "document")

    def is_integer(_checker, value):
        return isinstance(value, int) and not isinstance(value, bool)

    checker = base.TYPE_CHECKER.redefine("integer", is_integer)
    Strict = validators.extend(base, type_checker=checker)

    def where(e):  # document order: array indices as numbers
        return [(0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in e.absolute_path], e.message

    errors = sorted(Strict(schema).iter_errors(document), key=where)
    if not errors:
        return 0

    shown = doc_path if doc_path != "-" else "<stdin>"
    lines = []
    for e in errors:
        # A oneOf/anyOf failure says little by itself: add the closest branch's reasons.
        detail = ""
        if e.context:
            best = jsonschema.exceptions.best_match(e.context)
            detail = f" (closest: {json_path(best.absolute_path)}: {short(best.message)})"
        # The rule's own words, where the schema gives them.
        if isinstance(e.schema, dict) and isinstance(e.schema.get("description"), str):
            detail += f" -- {short(e.schema['description'], 120)}"
        lines.append(f"  {json_path(e.absolute_path)}: {short(e.message)}{detail}"
                     f"  [schema {'/'.join(map(str, e.absolute_schema_path))}]")
    sys.stderr.write(f"{PROG}: error: {shown} does not match {schema_path}: "
                     f"{len(errors)} violation{'s' if len(errors) != 1 else ''}\n")
    sys.stderr.write("\n".join(lines) + "\n")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))

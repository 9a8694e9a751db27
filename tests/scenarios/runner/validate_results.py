#!/usr/bin/env python3
"""Validates a sluice results.json against analysis/results.schema.json (JSON Schema
draft 2020-12) with python3-jsonschema. Usage: validate_results.py SCHEMA RESULTS.
Exit 0: valid; 1: invalid (the first errors are printed); 2: cannot validate."""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("validate_results: python3-jsonschema is not installed (make deps installs it)", file=sys.stderr)
    sys.exit(2)

if len(sys.argv) != 3:
    print(__doc__, file=sys.stderr)
    sys.exit(2)
with open(sys.argv[1]) as f:
    schema = json.load(f)
with open(sys.argv[2]) as f:
    doc = json.load(f)
validator = jsonschema.Draft202012Validator(schema)
validator.check_schema(schema)
errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
for e in errors[:10]:
    print("%s: %s" % ("/".join(str(p) for p in e.path) or "(root)", e.message), file=sys.stderr)
sys.exit(1 if errors else 0)

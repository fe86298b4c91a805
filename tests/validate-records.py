#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
# validate-records.py: checks JSON lines against cmd/output/record.schema.json; prints a count, or each bad line's first error.
#
# Usage: validate-records.py SCHEMA FILE...  Exit 0 when every line of every
# FILE is a record the schema allows, 1 otherwise. Debian's python3-jsonschema.
import json
import sys

import jsonschema


def main():
    if len(sys.argv) < 3:
        print("usage: validate-records.py SCHEMA FILE...", file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    good = bad = 0
    for path in sys.argv[2:]:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                try:
                    record = json.loads(line)
                except ValueError as e:
                    errors = [f"not JSON: {e}"]
                else:
                    errors = [f"{'/'.join(map(str, e.absolute_path)) or '(record)'}: {e.message}"
                              for e in validator.iter_errors(record)]
                if errors:
                    bad += 1
                    if bad <= 5:
                        print(f"{path}:{n}: {errors[0][:300]}")
                else:
                    good += 1
    print(f"{good} records valid, {bad} not")
    return 1 if bad or not good else 0


if __name__ == "__main__":
    sys.exit(main())

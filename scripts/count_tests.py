#!/usr/bin/env python3
"""Sums doctest's per-program counts from meson's testlog.json.

Prints one plain line "N passed, N failed". A program that failed without a
doctest summary (a crash, a time-out) counts as one failed case. Each further
argument "NAME=STATUS" is one more case run outside meson (test.sh's check for
leftovers), passed when STATUS is 0. Exits 1 when anything failed or no test ran.
"""
import json
import re
import sys

SUMMARY = re.compile(r"test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed")


def main(path, extras=()):
    passed = failed = 0
    try:
        lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    except OSError as e:
        print(f"count_tests: {e}", file=sys.stderr)
        print("0 passed, 1 failed")
        return 1
    for line in lines:
        if not line.strip():
            continue
        t = json.loads(line)
        m = None
        for m in SUMMARY.finditer(t.get("stdout", "") or ""):
            pass
        ok = t.get("result") == "OK"
        if m:
            passed += int(m.group(2))
            failed += int(m.group(3))
            if not ok and int(m.group(3)) == 0:
                failed += 1  # the program failed after its cases passed
        elif ok:
            passed += 1
        else:
            failed += 1
            print(f"count_tests: {t.get('name')} {t.get('result')} without a doctest summary",
                  file=sys.stderr)
    for extra in extras:
        name, _, status = extra.partition("=")
        if status == "0":
            passed += 1
        else:
            failed += 1
            print(f"count_tests: {name} failed", file=sys.stderr)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))

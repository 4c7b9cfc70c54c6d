#!/usr/bin/env python3
"""Sums doctest's per-program counts from meson's test logs (testlog*.json).

Usage: count_tests.py LOG.json [LOG.json ...] [NAME=STATUS ...]

Prints one plain line "N passed, N failed" over every log given (test.sh runs the
unit tier and the others as separate meson runs, each with its own log). A
program that failed without a doctest summary (a crash, a time-out) counts as one
failed case; so does a log that cannot be read. Each argument "NAME=STATUS" (one
not ending in .json) is one more case run outside meson (test.sh's check for
leftovers), passed when STATUS is 0. Exits 1 when anything failed or no test ran.
"""
import json
import re
import sys

SUMMARY = re.compile(r"test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed")
# The browser lab's programs: vitest's "Tests  3 failed | 40 passed (43)" (either part may be
# missing) and the end-to-end runner's plain "N passed, N failed" line (ui/e2e/run.mjs).
VITEST = re.compile(r"^\s*Tests\s+(?:(\d+) failed)?\s*\|?\s*(?:(\d+) passed)?.*\(\d+\)\s*$", re.M)
PLAIN = re.compile(r"^(\d+) passed, (\d+) failed\s*$", re.M)


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def summary(stdout):
    """(passed, failed) a program's output reports, or None when it reports none."""
    stdout = ANSI.sub("", stdout)
    m = None
    for m in SUMMARY.finditer(stdout):
        pass
    if m:
        return int(m.group(2)), int(m.group(3))
    for m in VITEST.finditer(stdout):
        pass
    if m and (m.group(1) or m.group(2)):
        return int(m.group(2) or 0), int(m.group(1) or 0)
    for m in PLAIN.finditer(stdout):
        pass
    if m:
        return int(m.group(1)), int(m.group(2))
    return None


def count_log(path):
    """(passed, failed) over one meson test log."""
    passed = failed = 0
    try:
        lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    except OSError as e:
        print(f"count_tests: {e}", file=sys.stderr)
        return 0, 1
    for line in lines:
        if not line.strip():
            continue
        t = json.loads(line)
        counts = summary(t.get("stdout", "") or "")
        ok = t.get("result") == "OK"
        if counts:
            passed += counts[0]
            failed += counts[1]
            if not ok and counts[1] == 0:
                failed += 1  # the program failed after its cases passed
        elif ok:
            passed += 1
        else:
            failed += 1
            print(f"count_tests: {t.get('name')} {t.get('result')} without a doctest summary",
                  file=sys.stderr)
    return passed, failed


def main(args):
    passed = failed = 0
    logs = [a for a in args if a.endswith(".json")]
    extras = [a for a in args if not a.endswith(".json")]
    for path in logs:
        p, f = count_log(path)
        passed += p
        failed += f
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
    sys.exit(main(sys.argv[1:]))

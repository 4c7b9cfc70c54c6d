#!/usr/bin/env python3
"""Fails when an event type is spelled as a string literal outside the event catalog.

The catalog (engine/events/event_types.h) names every event type the lab writes or
reads as a constant (`inline constexpr char kName[] = "type.name";`); the
types are read from that file, so a type added there is checked from then on. Every
C++ string literal (plain or raw, comments skipped) in engine/, projections/,
workers/, app/, bpf/ and tests/ whose whole text is one of those types is named with
its file and line, except in engine/events/ itself. A literal that is not a catalog
type (a forged or malformed type in a test) is not an event-type literal, nor is one
on (or just below) a line marked NOLINT(event-type) (a receipt field spelled like a type).

`--self-test` plants literals in a scratch tree and fails unless each is
caught and a clean tree passes.
"""
import os
import re
import sys
import tempfile

CATALOG = "engine/events/event_types.h"
SCANNED = ("engine", "projections", "workers", "app", "bpf", "tests")
EXEMPT = ("engine/events/",)
# On the literal's line or the line above: the text is not an event type (a receipt field that shares the spelling).
OPT_OUT = "NOLINT(event-type)"
TYPE_CONSTANT = re.compile(
    r'inline\s+constexpr\s+char\s+k\w+\[\]\s*=\s*"([a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+)"\s*;')

def catalog_types(root):
    with open(os.path.join(root, CATALOG), encoding="utf-8") as f:
        return set(TYPE_CONSTANT.findall(f.read()))


def string_literals(text):
    """Yields (line, contents) for each string literal of C++ source `text`."""
    i, line, n = 0, 1, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += text.count("\n", i, j)
            i = j
        elif c == "'":
            j = i + 1
            while j < n and text[j] != "'" and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif c == '"':
            raw = i > 0 and text[i - 1] == "R" and (i < 2 or not (text[i - 2].isalnum() or text[i - 2] == "_"))
            if raw:
                paren = text.find("(", i)
                delim = text[i + 1:paren]
                end = text.find(")" + delim + '"', paren)
                end = n if end < 0 else end
                yield line, text[paren + 1:end]
                line += text.count("\n", i, end)
                i = end + len(delim) + 2
            else:
                j = i + 1
                while j < n and text[j] != '"' and text[j] != "\n":
                    j += 2 if text[j] == "\\" else 1
                yield line, text[i + 1:j]
                i = j + 1
        elif c.isdigit() and i + 1 < n and text[i + 1] == "'":
            i += 2  # a digit separator (1'000), not a character literal
        else:
            i += 1


def literals(root, types):
    found = []
    for top in SCANNED:
        for folder, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for name in sorted(files):
                if not name.endswith((".cc", ".h", ".c", ".hpp", ".cpp")):
                    continue
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                if rel.startswith(EXEMPT):
                    continue
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                lines = text.split("\n")
                for number, value in string_literals(text):
                    marked = OPT_OUT in lines[number - 1] or (
                        number > 1 and OPT_OUT in lines[number - 2])
                    if value in types and not marked:
                        found.append((rel, number, value))
    return found


def check(root):
    """Returns the errors as printable lines."""
    types = catalog_types(root)
    if not types:
        return [f"{CATALOG}: no event type constant found"]
    return [f"{rel}:{number}: event type \"{value}\" spelled as a literal; use its constant "
            f"from {CATALOG}" for rel, number, value in literals(root, types)]


def self_test():
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    with open(os.path.join(here, CATALOG), encoding="utf-8") as f:
        catalog = f.read()
    with tempfile.TemporaryDirectory() as root:
        def write(rel, text):
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        write(CATALOG, catalog)
        write("engine/events/attempt_events.cc", 'auto t = "gate.verdict";\n')
        write("engine/a/a.cc",
              '// writes "attempt.started" events\n/* "gate.verdict" */\n'
              'auto kind = "probe.output";\nchar c = \'"\'; int n = 1\'000;\n'
              'auto forged = "attempt.bogus";\nauto t = events::kGateVerdict;\n')
        write("tests/t.cc", 'auto s = "attempt.started: member";\n'
              '// a receipt field: NOLINT(event-type)\nfail("gate.verdict", why);\n')
        if check(root):
            print("check-event-literals self-test: a clean tree was refused: " +
                  "; ".join(check(root)), file=sys.stderr)
            return 1
        planted = {
            "engine/a/bad.cc": 'draft(s, "attempt.started", "engine", p);\n',
            "projections/bad.h": 'if (t == "gate.verdict") {}\n',
            "workers/bad.cc": 'x(); /* c */ log.append({s, "run.ended", "supervisor", p});\n',
            "app/cli/bad.cc": 'auto t = R"(receipt.issued)";\n',
            "tests/bad.cc": 'auto a = "x\\"y"; auto b = "scenario.loaded";\n',
            "bpf/bad.c": 'const char *t =\n  "capabilities.measured";\n',
        }
        for rel, text in planted.items():
            write(rel, text)
        caught = {e.split(":", 1)[0] for e in check(root)}
        missed = sorted(set(planted) - caught)
        if missed:
            print("check-event-literals self-test: missed " + ", ".join(missed), file=sys.stderr)
            return 1
    print(f"check-event-literals self-test: {len(planted)} planted literals caught, "
          "the clean tree passed")
    return 0


def main(argv):
    if len(argv) > 1 and argv[1] == "--self-test":
        return self_test()
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    errors = check(root)
    for line in errors:
        print("check-event-literals: " + line)
    if errors:
        print(f"check-event-literals: {len(errors)} event type literal(s) outside the catalog",
              file=sys.stderr)
        return 1
    print("check-event-literals: no event type literal outside engine/events/")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

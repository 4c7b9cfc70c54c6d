#!/usr/bin/env python3
"""Fails when a source file includes a header from a layer above its own.

The layers, bottom to top (docs/ARCHITECTURE.md): engine/ includes only engine/;
projections/ and workers/ include engine/ and themselves (never each other); app/
includes any of them; tests/ may include anything. Every `#include "..."` of a C++
source or header under the layer folders is checked, and each crossing is named
with its file and line. Inside a layer, the subsystem folders (engine/log,
engine/gate, ...) must not include each other in a cycle: each cycle is named with
one include of every step. `--self-test` plants crossings in a scratch tree and
fails unless each is caught and a clean tree passes.
"""
import os
import re
import sys
import tempfile

ALLOWED = {
    "engine": {"engine"},
    "projections": {"engine", "projections"},
    "workers": {"engine", "workers"},
    "bpf": {"engine", "bpf"},
    "app": {"engine", "projections", "workers", "app"},
}
TOP_FOLDERS = set(ALLOWED) | {"tests", "scenarios", "ui", "scripts", "docs"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def includes(root):
    """(layer, path, line number, included name) for every quoted include of each layer."""
    for layer in sorted(ALLOWED):
        for folder, _, files in os.walk(os.path.join(root, layer)):
            for name in sorted(files):
                if not name.endswith((".cc", ".h", ".c", ".hpp", ".cpp")):
                    continue
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if m:
                            yield layer, path, number, m.group(1)


def crossings(root):
    found = []
    for layer, path, number, name in includes(root):
        top = name.split("/", 1)[0]
        if "/" in name and top in TOP_FOLDERS and top not in ALLOWED[layer]:
            rel = os.path.relpath(path, root)
            found.append(f"{rel}:{number}: {layer}/ includes \"{name}\" from {top}/, a layer it "
                         "may not use")
    return found


def folder_cycles(root):
    """Cycles among the subsystem folders of each layer ("engine/gate" -> "engine/receipt")."""
    edges = {}  # (from, to) -> "file:line"
    for layer, path, number, name in includes(root):
        rel = os.path.relpath(path, root).split(os.sep)
        parts = name.split("/")
        if len(rel) < 3 or len(parts) < 3 or parts[0] != layer:
            continue
        src, dst = "/".join(rel[:2]), "/".join(parts[:2])
        if dst != src:
            edges.setdefault((src, dst), f"{os.path.relpath(path, root)}:{number}")
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    found, seen = [], set()

    def walk(start, node, trail):
        for nxt in sorted(graph.get(node, ())):
            if nxt == start:
                cycle = trail + [start]
                key = frozenset(cycle)
                if key not in seen:
                    seen.add(key)
                    steps = "; ".join(f"{x} -> {y} ({edges[(x, y)]})"
                                      for x, y in zip(cycle, cycle[1:]))
                    found.append(f"cycle {' -> '.join(cycle)}: {steps}")
            elif nxt not in trail and nxt > start:
                walk(start, nxt, trail + [nxt])

    for start in sorted(graph):
        walk(start, start, [start])
    return found


def self_test():
    with tempfile.TemporaryDirectory() as root:
        def write(rel, text):
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        write("engine/a/a.h", '#include "engine/b/b.h"\n#include <vector>\n')
        write("workers/w.cc", '#include "engine/a/a.h"\n#include "workers/x.h"\n')
        write("app/cli/c.cc", '#include "workers/w.h"\n#include "projections/p.h"\n')
        write("tests/t.cc", '#include "app/cli/c.h"\n')
        write("engine/b/b.h", '#include "engine/c/c.h"\n')
        if crossings(root) or folder_cycles(root):
            print("check-layers self-test: a clean tree was refused", file=sys.stderr)
            return 1
        write("engine/c/c.cc", '#include "engine/a/a.h"\n')
        cycles = folder_cycles(root)
        if len(cycles) != 1 or "engine/a -> engine/b -> engine/c -> engine/a" not in cycles[0]:
            print(f"check-layers self-test: the planted cycle a -> b -> c -> a was not named: {cycles}",
                  file=sys.stderr)
            return 1
        planted = {
            "engine/a/bad.cc": '#include "workers/drivers.h"\n',
            "engine/b/bad.h": '  #  include "app/lab/lab.h"\n',
            "projections/bad.cc": '#include "workers/x.h"\n',
            "workers/bad.cc": '#include "projections/lab/p.h"\n',
            "workers/bad2.cc": '#include "app/cli/cli.h"\n',
            "engine/c/bad.cc": '#include "tests/support/temp_dir.h"\n',
        }
        for rel, text in planted.items():
            write(rel, text)
        caught = {c.split(":", 1)[0] for c in crossings(root)}
        missed = sorted(set(planted) - caught)
        if missed:
            print("check-layers self-test: missed " + ", ".join(missed), file=sys.stderr)
            return 1
    print("check-layers self-test: 6 planted crossings and a folder cycle caught, the clean tree "
          "passed")
    return 0


def main(argv):
    if len(argv) > 1 and argv[1] == "--self-test":
        return self_test()
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    found = crossings(root)
    cycles = folder_cycles(root)
    for line in found + cycles:
        print("check-layers: " + line)
    if found or cycles:
        print(f"check-layers: {len(found)} include(s) cross a layer upward, {len(cycles)} folder "
              "cycle(s)", file=sys.stderr)
        return 1
    print("check-layers: no include crosses a layer upward; no subsystem folders include each "
          "other in a cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

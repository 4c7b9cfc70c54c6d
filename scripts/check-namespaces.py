#!/usr/bin/env python3
"""Fails unless each source folder has one C++ namespace of its own.

For every folder of engine/, workers/, projections/ and app/ that holds C++ sources, the
namespaces its files declare (followed through nesting by clang-format's closing comments,
`}  // namespace X`) must all be one namespace N or nested inside it (N::format, N::detail);
N must be `aura` or start with `aura::`; and no two folders may have the same N, except the
base vocabulary (BASE below: the log, blobs, keys, signatures... that every layer names
unqualified), which shares plain `aura`. A block that only forward-declares another folder's
types (`namespace aura::writer { class RunTokens; }`) is not a declaration of that folder's
namespace. Anonymous namespaces and aliases (`namespace x = y;`) are ignored.
`--self-test` plants violations in a scratch tree and fails unless each is caught and a clean
tree passes.
"""
import os
import re
import sys
import tempfile
from collections import Counter, defaultdict

LAYERS = ("engine", "workers", "projections", "app")
# Folders whose namespace is plain `aura`: the engine's base vocabulary (docs/ARCHITECTURE.md,
# "Namespaces"). Any other folder needs a namespace of its own.
BASE = {
    "engine/blob", "engine/checkpoint", "engine/common", "engine/crypto", "engine/keys",
    "engine/log", "engine/package", "engine/sign", "projections/core", "projections/streams",
}
OPEN = re.compile(r"^\s*(?:inline\s+)?namespace\s+([A-Za-z_][\w:]*)\s*\{\s*(.*)$")
CLOSE = re.compile(r"^\s*\}\s*//\s*namespace\s+([A-Za-z_][\w:]*)\s*$")
ANON_OPEN = re.compile(r"^\s*namespace\s*\{")
ANON_CLOSE = re.compile(r"^\s*\}\s*//\s*namespace\s*$")
FORWARD = re.compile(r"^\s*(class|struct|enum class|enum)\s+\w+(\s*:\s*\w+)?\s*;\s*(//.*)?$")


def declared(path):
    """(full namespace, line number, forward_only) for every named namespace block in a file."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    stack, out, i = [], [], 0
    while i < len(lines):
        line = lines[i]
        m = OPEN.match(line)
        if m:
            name, rest = m.group(1), m.group(2).strip()
            full = "::".join(stack + [name])
            if rest.endswith("}"):  # a one-line block: namespace a::b { class X; }
                inner = line[line.index("{") + 1:line.rindex("}")].strip()
                fwd = all(FORWARD.match(s.strip() + ";") for s in inner.split(";") if s.strip())
                out.append((full, i + 1, fwd))
                i += 1
                continue
            # Forward-only: every line up to the close is blank, a comment or a forward
            # declaration. Such a block may end with a bare `}` (no function body can be in it).
            j, fwd = i + 1, True
            while j < len(lines) and not CLOSE.match(lines[j]):
                s = lines[j].strip()
                if fwd and s == "}":
                    break
                if s and not s.startswith("//") and not FORWARD.match(s):
                    fwd = False
                if OPEN.match(lines[j]) or ANON_OPEN.match(lines[j]):
                    fwd = False
                    break
                j += 1
            out.append((full, i + 1, fwd))
            if fwd and j < len(lines) and lines[j].strip() == "}":
                i = j + 1
                continue
            stack.append(name)
        elif ANON_OPEN.match(line):
            stack.append("")
        elif CLOSE.match(line) or ANON_CLOSE.match(line):
            if stack:
                stack.pop()
        i += 1
    return [(n.replace("::::", "::").strip(":"), ln, fwd) for n, ln, fwd in out if n]


def check(root):
    errors = []
    owner = {}  # namespace -> folder
    for layer in LAYERS:
        for folder, _, files in sorted(os.walk(os.path.join(root, layer))):
            sources = sorted(f for f in files if f.endswith((".h", ".cc")))
            if not sources:
                continue
            rel = os.path.relpath(folder, root)
            decls = []
            for name in sources:
                path = os.path.join(folder, name)
                for ns, line, fwd in declared(path):
                    if not fwd:
                        decls.append((ns, os.path.relpath(path, root), line))
            if not decls:
                continue
            # The folder's namespace: the shortest declared name that every other one is in.
            names = sorted({d[0] for d in decls}, key=lambda n: (n.count("::"), n))
            main = names[0]
            for ns, path, line in decls:
                if ns != main and not ns.startswith(main + "::"):
                    errors.append(f"{path}:{line}: namespace {ns} in folder {rel}, whose "
                                  f"namespace is {main} (one namespace per folder)")
            if main != "aura" and not main.startswith("aura::"):
                errors.append(f"{rel}: namespace {main} is not inside aura")
            if main == "aura":
                if rel not in BASE:
                    errors.append(f"{rel}: uses plain aura but is not one of the base folders "
                                  "(give it aura::<name>, or list it in BASE with a reason)")
                continue
            if main in owner:
                errors.append(f"{rel}: namespace {main} is already {owner[main]}'s")
            else:
                owner[main] = rel
    return errors


def self_test():
    cases = {
        "two namespaces": {"engine/a/x.h": "namespace aura::a {\nint f();\n}  // namespace aura::a\n",
                           "engine/a/y.cc": "namespace aura::b {\nint g();\n}  // namespace aura::b\n"},
        "bare json": {"engine/a/x.cc": "namespace aura::a {\nnamespace json {\nint f();\n"
                                        "}  // namespace json\n}  // namespace aura::a\n",
                      "engine/a/y.cc": "namespace json {\nint g();\n}  // namespace json\n"},
        "shared": {"engine/a/x.h": "namespace aura::a {\nint f();\n}  // namespace aura::a\n",
                   "workers/b/y.h": "namespace aura::a {\nint g();\n}  // namespace aura::a\n"},
        "plain aura outside base": {"workers/c/x.h": "namespace aura {\nint f();\n"
                                                      "}  // namespace aura\n"},
    }
    clean = {
        "engine/a/x.h": "namespace aura::writer {\nclass RunTokens;\n}\n"
                        "namespace aura::world { class Other; }\n"
                        "namespace aura::a {\nnamespace {\nint h();\n}  // namespace\n"
                        "namespace fmt {\nint f();\n}  // namespace fmt\n}  // namespace aura::a\n",
        "engine/a/y.cc": "namespace aura::a::detail {\nint g();\n}  // namespace aura::a::detail\n",
        "engine/log/z.h": "namespace aura {\nint z();\n}  // namespace aura\n",
    }
    failed = False
    for name, files in list(cases.items()) + [("clean", clean)]:
        with tempfile.TemporaryDirectory() as d:
            for rel, text in files.items():
                os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
                with open(os.path.join(d, rel), "w") as f:
                    f.write(text)
            errs = check(d)
            if (name == "clean") == bool(errs):
                print(f"self-test {name}: {'unexpected' if errs else 'no'} finding: {errs}")
                failed = True
    print("self-test: " + ("FAILED" if failed else "all cases caught, clean tree passes"))
    return 1 if failed else 0


def main():
    if "--self-test" in sys.argv[1:]:
        return self_test()
    root = next((a for a in sys.argv[1:] if not a.startswith("-")),
                os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    errors = check(root)
    for e in errors:
        print(e)
    print(f"namespaces: {len(errors)} finding(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

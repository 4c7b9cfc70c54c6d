#!/usr/bin/env python3
"""Fails when a relative link in README.md or docs/**/*.md does not resolve.

Checks every Markdown link `[text](target)` whose target is not a URL: the file or folder
must exist in the repository (relative to the page), and a `#fragment` must name a heading
of the page it points to (GitHub's slugs). A link that leaves the repository is refused too.
Usage: scripts/check-links.py [ROOT] (default: the folder above this script), or
--self-test.
"""
import os
import re
import sys
import tempfile

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def slug(heading):
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    seen, out = {}, set()
    for line in prose_lines(path):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line[1])
        if m:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else f"{s}-{n}")
    return out


def prose_lines(path):
    """(number, line) outside fenced code blocks."""
    fenced = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                fenced = not fenced
                continue
            if not fenced:
                yield number, line


def pages(root):
    yield os.path.join(root, "README.md")
    for folder, _, files in os.walk(os.path.join(root, "docs")):
        for name in sorted(files):
            if name.endswith(".md"):
                yield os.path.join(folder, name)


def broken_links(root):
    bad = []
    for page in pages(root):
        rel_page = os.path.relpath(page, root)
        for number, line in prose_lines(page):
            for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                    continue  # a URL
                path, _, fragment = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
                where = f"{rel_page}:{number}: ({target})"
                if os.path.relpath(dest, root).startswith(".."):
                    bad.append(f"{where} leaves the repository")
                elif not os.path.exists(dest):
                    bad.append(f"{where} names {os.path.relpath(dest, root)}, which does not exist")
                elif fragment and dest.endswith(".md") and fragment not in anchors(dest):
                    bad.append(f"{where} names no heading #{fragment} of {os.path.relpath(dest, root)}")
    return bad


def self_test():
    """Plants each kind of broken link in a scratch tree; fails unless each is caught and
    the good links (a file, a heading, a URL, a link in code) pass."""
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs", "formats"))
        def write(rel, text):
            with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
                f.write(text)
        write("docs/A.md", "# Title\n\n## Two words\n")
        write("README.md", "[a](docs/A.md) [h](docs/A.md#two-words) [u](https://x.org/y) "
                           "`[c](nowhere.md)`\n```\n[f](nowhere.md)\n```\n")
        write("docs/formats/B.md", "[up](../A.md#title)\n")
        if broken_links(root):
            print("check-links self-test: good links were refused: " + "; ".join(broken_links(root)),
                  file=sys.stderr)
            return 1
        write("docs/formats/B.md", "[up](../A.md#title)\n[gone](../Gone.md)\n"
                                   "[heading](../A.md#three)\n[out](../../../etc/passwd)\n")
        found = broken_links(root)
        kinds = ["does not exist", "no heading #three", "leaves the repository"]
        missed = [k for k in kinds if not any(k in b for b in found)]
        if missed or len(found) != 3:
            print(f"check-links self-test: caught {found}, missed {missed}", file=sys.stderr)
            return 1
    print("check-links self-test: 3 planted broken links caught, the good links passed")
    return 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--self-test":
        return self_test()
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    bad = broken_links(root)
    for b in bad:
        print(b, file=sys.stderr)
    if bad:
        print(f"check-links: {len(bad)} broken link(s)", file=sys.stderr)
        return 1
    print("check-links: every relative link resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main())

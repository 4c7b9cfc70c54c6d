#!/usr/bin/env python3
"""meson install step: the browser lab's build and the bundled scenario packages into
DESTDIR/PREFIX/<datadir>/aura (argument 1: that folder relative to the prefix, or absolute).

- ui/dist (built by scripts/build-ui.sh) becomes share/aura/ui; without it the install fails,
  naming the command that builds it: an installed lab without its pages would serve a stub.
- each scenarios/<package>/ holding a manifest.json becomes share/aura/scenarios/<package>/,
  without package.sig.json (a signature is one machine's: set-up signs its own copy, in
  DATA/packages). The scenarios folder is 0700 root: the manifests hold the answers and the
  hidden layouts, and the front's user must not read them. What an earlier install left of
  either is replaced whole.
"""
import os
import shutil
import sys


def fail(msg):
    print(f"install-data: {msg}", file=sys.stderr)
    sys.exit(1)


def target_root(rel):
    prefix = os.environ.get("MESON_INSTALL_DESTDIR_PREFIX")
    if not prefix:
        fail("MESON_INSTALL_DESTDIR_PREFIX is not set: run me through 'meson install'")
    if os.path.isabs(rel):
        destdir = os.environ.get("DESTDIR", "")
        return destdir + rel if destdir else rel
    return os.path.join(prefix, rel)


def replace_tree(src, dst, skip=()):
    if os.path.lexists(dst):
        shutil.rmtree(dst)
    shutil.copytree(src, dst, symlinks=True,
                    ignore=lambda d, names: [n for n in names if n in skip])


def main():
    if len(sys.argv) != 2:
        fail("usage: install-data.py DATADIR/aura")
    src = os.environ.get("MESON_SOURCE_ROOT") or os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))
    root = target_root(sys.argv[1])
    dry = os.environ.get("MESON_INSTALL_DRY_RUN")
    quiet = os.environ.get("MESON_INSTALL_QUIET")

    dist = os.path.join(src, "ui", "dist")
    if not os.path.isfile(os.path.join(dist, "index.html")):
        fail(f"the browser lab is not built ({dist}/index.html is missing): run "
             "scripts/build-ui.sh, then meson install again")
    packages = []
    scen = os.path.join(src, "scenarios")
    for name in sorted(os.listdir(scen)):
        d = os.path.join(scen, name)
        if os.path.isdir(d) and not os.path.islink(d) and \
                os.path.isfile(os.path.join(d, "manifest.json")):
            packages.append(name)
    if not packages:
        fail(f"no scenario package under {scen}")
    if dry:
        return

    os.makedirs(root, exist_ok=True)
    replace_tree(dist, os.path.join(root, "ui"))
    out = os.path.join(root, "scenarios")
    if os.path.lexists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    os.chmod(out, 0o700)
    for name in packages:
        replace_tree(os.path.join(scen, name), os.path.join(out, name), skip=("package.sig.json",))
    if not quiet:
        print(f"Installing the browser lab to {os.path.join(root, 'ui')}")
        print(f"Installing {len(packages)} scenario packages to {out} (0700)")


if __name__ == "__main__":
    main()

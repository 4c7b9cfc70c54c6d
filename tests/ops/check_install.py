#!/usr/bin/env python3
"""`meson install` into a temporary DESTDIR, the installed tree then moved to another prefix
(an install is relocatable: aura finds its helpers, browser lab and packages relative to its own
location), and `aura serve` run from `/` on empty data and keys folders under a 0700 parent given
by absolute paths: the lab sets itself up from the installed packages (copied into DATA/packages
and signed there, never in the installed tree), answers health, serves the installed browser lab,
and runs Judge Mode for O2 on real worlds with the installed helpers (aura-holder, aura-runner,
aura-svcman, aura-app). Usage: check_install.py BUILD_DIR. E2e tier: root."""
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

from lab_proc import Cases, Proc, http

HELPERS = ["aura-runner", "aura-svcman", "aura-app", "aura-holder", "aura-snapshot"]
START_GUARD_S = 15 * 60  # first use sets the lab up: about a minute idle
JUDGE_GUARD_S = 20 * 60  # O2's bad and gold cases: about 15 s idle
STOP_GUARD_S = 120


def prefix_of(build):
    out = subprocess.run(["meson", "introspect", build, "--buildoptions"], capture_output=True,
                         text=True, check=True).stdout
    return next(o["value"] for o in json.loads(out) if o["name"] == "prefix")


def files_under(root, name):
    return [os.path.join(d, name) for d, _, fs in os.walk(root) if name in fs]


def main():
    if len(sys.argv) != 2:
        print("usage: check_install.py BUILD_DIR", file=sys.stderr)
        return 2
    build = os.path.abspath(sys.argv[1])
    if os.geteuid() != 0:
        print("check_install.py: the e2e tier runs as root", file=sys.stderr)
        return 2
    cases = Cases()
    dest = tempfile.mkdtemp(prefix="aura-destdir-")
    parent = tempfile.mkdtemp(prefix="aura-installed-lab-")  # 0700
    proc = None
    try:
        r = subprocess.run(["meson", "install", "-C", build, "--no-rebuild", "--destdir", dest],
                           capture_output=True, text=True)
        if not cases.check("meson install --destdir succeeds", r.returncode == 0,
                           r.stdout[-2000:] + r.stderr[-2000:]):
            return cases.finish()
        installed = dest + prefix_of(build)
        # Another prefix: the same tree moved, as --prefix /opt/lab would lay it out.
        prefix = os.path.join(dest, "opt", "lab")
        os.makedirs(os.path.dirname(prefix))
        os.rename(installed, prefix)
        share = os.path.join(prefix, "share", "aura")
        libexec = os.path.join(prefix, "libexec", "aura")
        aura = os.path.join(prefix, "bin", "aura")
        cases.check("aura is in bin/", os.access(aura, os.X_OK))
        missing = [h for h in HELPERS if not os.access(os.path.join(libexec, h), os.X_OK)]
        cases.check("the helpers are in libexec/aura/", not missing, f"missing {missing}")
        cases.check("the browser lab is in share/aura/ui/",
                    os.path.isfile(os.path.join(share, "ui", "index.html")))
        scen = os.path.join(share, "scenarios")
        packages = sorted(os.listdir(scen)) if os.path.isdir(scen) else []
        cases.check("the bundled packages are in share/aura/scenarios/",
                    len(packages) >= 3 and all(os.path.isfile(os.path.join(scen, p, "manifest.json"))
                                               for p in packages), f"{packages}")
        cases.check("the packages' folder is root's alone (0700)",
                    stat.S_IMODE(os.stat(scen).st_mode) == 0o700,
                    oct(stat.S_IMODE(os.stat(scen).st_mode)))
        cases.check("no machine's signature is installed", not files_under(share, "package.sig.json"))
        cases.check("the systemd units are in share/aura/systemd/",
                    os.path.isfile(os.path.join(share, "systemd", "aura-daemon.service")))

        env = {k: v for k, v in os.environ.items() if not k.startswith("AURA_")}
        data, keys = os.path.join(parent, "data"), os.path.join(parent, "keys")
        proc = Proc([aura, "serve", "--data", data, "--keys", keys, "--port", "0"], env=env,
                    cwd="/")
        url = proc.line_starting("AURA lab: ", START_GUARD_S)
        if not cases.check("the installed aura serve, run from /, prints its URL", url is not None,
                           f"exit status {proc.p.poll()}; output above"):
            return cases.finish()
        status, _, body = http(url + "api/v1/health")
        cases.check("health answers 200 (the data folder's parent is 0700)", status == 200,
                    f"{status} {body[:300]}")
        status, _, body = http(url)
        with open(os.path.join(share, "ui", "index.html"), "rb") as f:
            cases.check("/ is the installed browser lab", status == 200 and body == f.read(),
                        f"{status} {body[:200]}")
        status, _, body = http(url + "api/v1/scenarios")
        listed = json.loads(body).get("scenarios", []) if status == 200 else []
        cases.check("every installed package is loaded", len(listed) == len(packages),
                    f"{status} {body[:500]}")
        signed = [os.path.isfile(os.path.join(data, "packages", p, "package.sig.json"))
                  for p in packages]
        cases.check("set-up signed copies in DATA/packages", signed and all(signed), f"{signed}")
        cases.check("set-up wrote nothing into the installed tree",
                    not files_under(share, "package.sig.json"))

        status, _, body = http(url + "api/v1/judge", "POST", {"scenario": "O2"})
        run = json.loads(body).get("run") if status == 202 else None
        if cases.check("Judge Mode for O2 is queued", run is not None, f"{status} {body[:300]}"):
            deadline = time.monotonic() + JUDGE_GUARD_S
            state = {}
            while time.monotonic() < deadline:
                status, _, body = http(url + "api/v1/judge/" + run)
                state = json.loads(body) if status == 200 else {}
                if state.get("state") in ("done", "failed"):
                    break
                time.sleep(1)
            results = [(c.get("case"), c.get("verdict"), c.get("as_expected"))
                       for c in state.get("cases", [])]
            cases.check("O2's bad and gold fixes grade as expected on worlds the installed "
                        "helpers run",
                        state.get("state") == "done" and len(results) == 2 and
                        all(r[2] is True for r in results),
                        f"{state.get('state')} {state.get('error')} {results}")
        proc.stop(cases, signal.SIGTERM, "SIGTERM stops the lab with status 0", STOP_GUARD_S)
    finally:
        if proc is not None:
            proc.kill()
        shutil.rmtree(dest, ignore_errors=True)
        shutil.rmtree(parent, ignore_errors=True)
    return cases.finish()


if __name__ == "__main__":
    sys.exit(main())

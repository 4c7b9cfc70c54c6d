#!/usr/bin/env python3
"""The README's first command as a new machine meets it: `./scripts/start.sh` from the source
tree, with a front user the machine does not have (AURA_FRONT_USER names one made up here, removed
again afterwards) and empty data and keys folders under a 0700 parent given by absolute paths
(AURA_DATA, AURA_KEYS; mktemp -d makes such a parent, as /root is). It must install what is
missing, build, set the lab up, create the user, and print the URL of a lab that answers: health
200 and the browser lab at /, served by a front running as the new user. Ctrl-C (SIGINT to the
process group, as a terminal sends it) stops everything with status 0.

What a CI machine has and a new one lacks that this cannot take away: Debian packages (the same
install-deps.sh runs, and installs any that are missing) and a build folder (the same ninja
command runs). Usage: check_start.py SOURCE_ROOT BUILD_DIR. E2e tier: root."""
import os
import shutil
import signal
import sys
import tempfile

from lab_proc import Cases, Proc, fresh_user_name, http, proc_uids, remove_user, user_exists

# Hang guards, far above what each takes on an idle two-core machine (install-deps finding
# everything, ninja and the UI build with nothing to do: under a minute; first use: about one).
START_GUARD_S = 30 * 60
STOP_GUARD_S = 120


def main():
    if len(sys.argv) != 3:
        print("usage: check_start.py SOURCE_ROOT BUILD_DIR", file=sys.stderr)
        return 2
    src, build = (os.path.abspath(a) for a in sys.argv[1:])
    if os.geteuid() != 0:
        print("check_start.py: the e2e tier runs as root", file=sys.stderr)
        return 2
    cases = Cases()
    user = fresh_user_name()
    parent = tempfile.mkdtemp(prefix="aura-start-")  # 0700, as mktemp -d makes it
    proc = None
    try:
        cases.check("the front's user does not exist before the start", not user_exists(user))
        env = dict(os.environ, AURA_FRONT_USER=user, AURA_BUILD_DIR=build,
                   AURA_DATA=os.path.join(parent, "data"), AURA_KEYS=os.path.join(parent, "keys"))
        env.pop("AURA_TOOLS_DIR", None)
        proc = Proc([os.path.join(src, "scripts", "start.sh"), "--port", "0"], env=env, cwd=src)
        url = proc.line_starting("AURA lab: ", START_GUARD_S)
        if not cases.check("start.sh prints the lab's URL", url is not None,
                           f"exit status {proc.p.poll()}; output above"):
            return cases.finish()
        status, _, body = http(url + "api/v1/health")
        cases.check("health answers 200 at the printed URL", status == 200, f"{status} {body[:300]}")
        status, headers, body = http(url)
        cases.check("the browser lab is served at /",
                    status == 200 and b"<!doctype html" in body[:200].lower(),
                    f"{status} {headers.get('Content-Type')} {body[:200]}")
        cases.check("start.sh made the front's user", user_exists(user))
        if user_exists(user):
            import pwd
            uid = pwd.getpwnam(user).pw_uid
            uids = proc_uids(proc.p.pid)
            cases.check("the front runs as the new user", uids == [uid] * 4, f"Uid {uids}")
        proc.stop(cases, signal.SIGINT, "Ctrl-C stops the lab with status 0", STOP_GUARD_S)
    finally:
        if proc is not None:
            proc.kill()
        cases.check("the made-up user is removed again", remove_user(user))
        shutil.rmtree(parent, ignore_errors=True)
    return cases.finish()


if __name__ == "__main__":
    sys.exit(main())

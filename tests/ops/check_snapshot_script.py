#!/usr/bin/env python3
"""Checks scripts/systemd/aura-snapshot with stand-ins for `aura` and `systemctl` (no root, no
lab): nothing is stopped or started (while the lab runs, `aura log snapshot` goes through its
daemon); a snapshot that fails leaves nothing behind and
prunes nothing; one that does not restore is kept and prunes nothing; the newest N are kept and
nothing else in the folder is touched; bad settings are refused before anything is stopped.

Usage: check_snapshot_script.py scripts/systemd/aura-snapshot
"""

import os
import subprocess
import sys
import tempfile

SYSTEMCTL = """#!/bin/sh
echo "systemctl $*" >> "$STUB_LOG"
if [ "$1" = "-q" ] && [ "$2" = "is-active" ]; then
  case " $STUB_ACTIVE " in *" $3 "*) exit 0 ;; esac
  exit 3
fi
exit 0
"""

AURA = """#!/bin/sh
echo "aura $1 $2" >> "$STUB_LOG"
if [ "$2" = snapshot ]; then
  while [ $# -gt 0 ]; do [ "$1" = --out ] && out=$2; shift; done
  mkdir -p "$out" && echo partial > "$out/manifest.dsse.json"
  exit "${STUB_SNAPSHOT_EXIT:-0}"
fi
if [ "$2" = restore ]; then
  while [ $# -gt 0 ]; do [ "$1" = --data ] && data=$2; shift; done
  mkdir -p "$data"
  exit "${STUB_RESTORE_EXIT:-0}"
fi
exit 2
"""

OLD = ["20200101T000000Z", "20200102T000000Z", "20200103T000000Z", "20200104T000000Z"]


SCRATCH = tempfile.TemporaryDirectory(prefix="aura-snapshot-test-")


def run_case(script, active="", snapshot_exit=0, restore_exit=0, keep="3", verify="yes",
             make_backups=True):
    tmp = tempfile.mkdtemp(dir=SCRATCH.name)
    stubs = os.path.join(tmp, "bin")
    os.mkdir(stubs)
    for file, text in [("systemctl", SYSTEMCTL), ("aura", AURA)]:
        p = os.path.join(stubs, file)
        with open(p, "w") as f:
            f.write(text)
        os.chmod(p, 0o755)
    backups = os.path.join(tmp, "backups")
    if make_backups:
        os.mkdir(backups)
        for d in OLD + ["not-a-snapshot"]:
            os.mkdir(os.path.join(backups, d))
    log = os.path.join(tmp, "calls")
    open(log, "w").close()
    env = dict(os.environ, PATH=stubs + ":" + os.environ["PATH"],
               AURA_BIN=os.path.join(stubs, "aura"),
               AURA_BACKUP_DIR=backups, AURA_SNAPSHOT_KEEP=keep, AURA_SNAPSHOT_VERIFY=verify,
               STUB_LOG=log, STUB_ACTIVE=active, STUB_SNAPSHOT_EXIT=str(snapshot_exit),
               STUB_RESTORE_EXIT=str(restore_exit))
    r = subprocess.run(["sh", script], env=env, capture_output=True, text=True, timeout=60)
    with open(log) as f:
        calls = [l.strip() for l in f if l.strip()]
    left = sorted(os.listdir(backups)) if make_backups else []
    return r.returncode, calls, left, r.stderr


def main():
    script = sys.argv[1]
    failures = []

    def expect(case, ok, what, detail):
        if not ok:
            failures.append(f"{case}: {what}\n    {detail}")

    both = "aura-daemon.service aura-serve.service"
    code, calls, left, err = run_case(script, active=both)
    detail = f"calls {calls}, left {left}, stderr {err.strip()}"
    expect("lab running", code == 0, "exit 0", detail)
    expect("lab running", not any(c.startswith("systemctl") for c in calls),
           "nothing stopped or started: the snapshot goes through the daemon", detail)
    try:
        order = [calls.index("aura log snapshot"), calls.index("aura log restore")]
        expect("lab running", order == sorted(order), "the snapshot, then the restore check",
               detail)
    except ValueError:
        expect("lab running", False, "the snapshot, then the restore check", detail)
    snaps = [d for d in left if d[:1].isdigit()]
    expect("lab running", len(snaps) == 3 and OLD[0] not in snaps and OLD[1] not in snaps,
           "the newest 3 snapshots kept", detail)
    expect("lab running", "not-a-snapshot" in left, "other folders untouched", detail)
    expect("lab running", not any(d.startswith(".restore-") for d in left),
           "the scratch restore removed", detail)

    code, calls, left, err = run_case(script, active="")
    detail = f"calls {calls}, left {left}, stderr {err.strip()}"
    expect("nothing running", code == 0, "exit 0", detail)
    expect("nothing running", not any(c.startswith("systemctl") for c in calls),
           "nothing stopped or started", detail)

    code, calls, left, err = run_case(script, active=both, snapshot_exit=1)
    detail = f"calls {calls}, left {left}, stderr {err.strip()}"
    expect("snapshot fails", code == 1, "its status passed on", detail)
    expect("snapshot fails", not any(c.startswith("systemctl") for c in calls),
           "nothing stopped or started", detail)
    expect("snapshot fails", sorted(d for d in left if d[:1].isdigit()) == OLD,
           "the partial snapshot removed, nothing pruned", detail)

    code, calls, left, err = run_case(script, active=both, restore_exit=1)
    detail = f"calls {calls}, left {left}, stderr {err.strip()}"
    expect("restore fails", code == 1, "exit 1", detail)
    snaps = [d for d in left if d[:1].isdigit()]
    expect("restore fails", len(snaps) == len(OLD) + 1, "the new snapshot kept, nothing pruned",
           detail)
    expect("restore fails", "does not restore" in err, "says so", detail)

    code, calls, left, err = run_case(script, active="", verify="no")
    detail = f"calls {calls}, left {left}, stderr {err.strip()}"
    expect("no verify", code == 0 and "aura log restore" not in calls, "no restore check", detail)

    for keep in ["0", "x", "-1"]:
        code, calls, left, err = run_case(script, active=both, keep=keep)
        detail = f"calls {calls}, stderr {err.strip()}"
        expect(f"AURA_SNAPSHOT_KEEP={keep!r}", code == 2 and not calls,
               "refused before anything runs", detail)
    code, calls, left, err = run_case(script, active=both, verify="maybe")
    expect("AURA_SNAPSHOT_VERIFY=maybe", code == 2 and not calls, "refused before anything runs",
           f"calls {calls}, stderr {err.strip()}")
    code, calls, left, err = run_case(script, active=both, make_backups=False)
    expect("no backup folder", code == 1 and not calls and "does not exist" in err,
           "refused, naming the folder", f"calls {calls}, stderr {err.strip()}")

    for f in failures:
        print("FAILED " + f)
    print("ok: aura-snapshot" if not failures else f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Checks the systemd units and the environment file example of scripts/systemd/.

- `systemd-analyze verify` (offline: no running systemd needed) on every unit, copied to a scratch
  folder with each /usr/local/... program rewritten to one that exists here (the build's aura,
  the folder's own scripts); any line it prints about these units fails the check, and so does
  its exit status.
- aura-serve.service carries the hardening of issue 15 (docs/OPERATIONS.md, "The units"): the
  front starts and serves as its unprivileged user (User= is --user's, not root) with no
  capability (an empty bounding set, no ambient ones), no_new_privs,
  ProtectSystem=strict and the rest; it reaches the daemon the daemon unit serves, and never
  starts one.
- aura-daemon.service takes none of the settings that would install a seccomp filter under every
  world, stops with KillMode=mixed and a stop time-out long enough to reap worlds.
- aura.env.example names every flag of `aura daemon --help` and `aura serve --help`, and every
  variable the units and the snapshot script read, with the units' own defaults.

Usage: check_units.py --aura BUILD/aura --units scripts/systemd [--self-test]
--self-test plants broken copies (an unknown key, a bad value, a missing program, a misspelt
dependency, each weakened hardening setting, a flag missing from the example) and fails unless
each is caught, and unless the unbroken copy passes.
Exit status: 0 all well, 1 problems (each printed), 77 skipped (no systemd-analyze).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

UNITS = ["aura-daemon.service", "aura-serve.service", "aura-snapshot.service",
         "aura-snapshot.timer"]
ENV_EXAMPLE = "aura.env.example"
SNAPSHOT_SCRIPT = "aura-snapshot"

DATA = "/var/lib/aura/data"
KEYS = "/var/lib/aura/keys"
SOCKET = "/run/aura/daemon.sock"

# Settings that are, or install, a seccomp filter: inherited by every process the daemon starts,
# so they would sit under every world's own allowlist (scripts/systemd/aura-daemon.service).
DAEMON_FORBIDDEN = [
    "SystemCallFilter", "RestrictNamespaces", "RestrictAddressFamilies", "LockPersonality",
    "MemoryDenyWriteExecute", "SystemCallArchitectures", "RestrictSUIDSGID", "RestrictRealtime",
    "ProtectClock", "ProtectKernelModules", "ProtectKernelLogs", "PrivateDevices",
    "ProtectControlGroups", "ProtectKernelTunables",
    # Removed when the unit stops: it would take the supervisor's leak ledger with it.
    "RuntimeDirectory",
]

# Not settings: output and usage options of every command.
NOT_SETTINGS = {"json", "help"}

TRUE = {"yes", "true", "1", "on"}


class Unit:
    """A unit file as systemd reads it: sections of (key, value) in order, continuation lines
    joined, comments dropped."""

    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path)
        self.sections = {}
        section = None
        pending = ""
        with open(path, encoding="utf-8") as f:
            for raw in f:
                line = raw.rstrip("\n")
                stripped = line.strip()
                if pending and stripped.startswith(("#", ";")):
                    continue  # a comment inside a continued line
                if line.endswith("\\"):
                    pending += line[:-1] + " "
                    continue
                line = pending + line
                pending = ""
                stripped = line.strip()
                if not stripped or stripped.startswith(("#", ";")):
                    continue
                if stripped.startswith("[") and stripped.endswith("]"):
                    section = stripped[1:-1]
                    self.sections.setdefault(section, [])
                    continue
                if "=" not in stripped or section is None:
                    continue  # systemd-analyze verify names these
                key, value = stripped.split("=", 1)
                self.sections[section].append((key.strip(), value.strip()))

    def values(self, section, key):
        return [v for k, v in self.sections.get(section, []) if k == key]

    def last(self, section, key, default=None):
        v = self.values(section, key)
        return v[-1] if v else default

    def words(self, section, key):
        """A list setting: every assignment's words, an empty assignment resetting the list."""
        out = []
        for v in self.values(section, key):
            out = [] if v == "" else out + v.split()
        return out

    def environment(self):
        env = {}
        for v in self.values("Service", "Environment"):
            for m in re.finditer(r'(?:"([^"]*)"|(\S+))', v):
                item = m.group(1) if m.group(1) is not None else m.group(2)
                if "=" in item:
                    k, val = item.split("=", 1)
                    env[k] = val
        return env


def capability_set(unit, key):
    """CapabilityBoundingSet= as systemd computes it: None when never set (every capability)."""
    caps = None
    for v in unit.values("Service", key):
        if v == "":
            caps = set()
        elif v.startswith("~"):
            caps = ({"ALL"} if caps is None else caps) - set(v[1:].split())
        else:
            caps = (set() if caps is None else caps) | set(v.split())
    return caps


def exec_argv(unit, key="ExecStart"):
    v = unit.last("Service", key, "")
    return v.lstrip("-@:+!").split()


def flag_value(argv, flag):
    for i, a in enumerate(argv):
        if a == flag and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith(flag + "="):
            return a.split("=", 1)[1]
    return None


def expand(word, env):
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: env.get(m.group(1) or m.group(2), ""), word)


def duration_s(text):
    m = re.fullmatch(r"\s*(\d+)\s*(s|sec|min|m|h)?\s*", text or "")
    if not m:
        return None
    return int(m.group(1)) * {None: 1, "s": 1, "sec": 1, "min": 60, "m": 60, "h": 3600}[m.group(2)]


def read_file(units_dir, name, problems):
    """The file's text, or None with a problem saying it is missing."""
    path = os.path.join(units_dir, name)
    if not os.path.exists(path):
        problems.append(f"{name}: missing from {units_dir}")
        return None
    with open(path, encoding="utf-8") as f:
        return f.read()


# ---- systemd-analyze verify ----------------------------------------------------------------

def verify(units_dir, aura, problems):
    analyze = shutil.which("systemd-analyze")
    with tempfile.TemporaryDirectory(prefix="aura-units-") as tmp:
        for name in UNITS:
            text = read_file(units_dir, name, problems)
            if text is None:
                continue

            # Each program of the unit at a path that exists here.
            def local(m):
                base = os.path.basename(m.group(0))
                if base == "aura":
                    return os.path.abspath(aura)
                mine = os.path.join(units_dir, base)
                return os.path.abspath(mine) if os.path.exists(mine) else m.group(0)

            text = re.sub(r"/usr/local/(?:s?bin|libexec/aura)/[\w.-]+", local, text)
            with open(os.path.join(tmp, name), "w", encoding="utf-8") as f:
                f.write(text)
        files = [os.path.join(tmp, n) for n in UNITS if os.path.exists(os.path.join(tmp, n))]
        env = dict(os.environ, SYSTEMD_LOG_COLOR="0", SYSTEMD_PAGER="cat", LC_ALL="C")
        r = subprocess.run([analyze, "verify", "--man=no", "--generators=no"] + files,
                           capture_output=True, text=True, env=env, cwd=tmp, timeout=120)
        out = (r.stdout + r.stderr).replace(tmp + "/", "")
        ours = [l for l in out.splitlines() if l.strip() and any(n in l for n in UNITS)]
        others = [l for l in out.splitlines() if l.strip() and l not in ours]
        for line in ours:
            problems.append(f"systemd-analyze verify: {line}")
        for line in others:
            print(f"note: systemd-analyze verify (not about these units): {line}")
        if r.returncode != 0 and not ours:
            problems.append(f"systemd-analyze verify exited {r.returncode}: {out.strip()}")


# ---- the front -----------------------------------------------------------------------------

def check_serve(serve, daemon, problems):
    n = serve.name
    S = "Service"
    env = serve.environment()
    argv = [expand(a, env) for a in exec_argv(serve)]
    if argv[1:2] != ["serve"]:
        problems.append(f"{n}: ExecStart does not run `aura serve`: {' '.join(argv)}")
    if "--no-daemon" not in argv:
        problems.append(f"{n}: ExecStart lacks --no-daemon: under systemd the front must never "
                        "start a daemon of its own (aura-daemon.service is the daemon)")

    # Privileges. The front starts as its user (app/serve/serve.cc: as root it would bind and
    # drop to --user itself; started as --user it has nothing to drop), so User= is --user's and
    # no capability is ever held: the bounding set is empty.
    front_user = flag_value(argv, "--user")
    if not front_user or front_user in ("root", "0"):
        problems.append(f"{n}: the front must serve as an unprivileged user: --user is "
                        f"{front_user!r}")
    user = serve.last(S, "User", "root")
    if user in ("root", "0"):
        problems.append(f"{n}: User= is unset or root: the front starts as its unprivileged "
                        f"user (User={front_user or 'aura-web'})")
    elif user != front_user:
        problems.append(f"{n}: User={user} but --user {front_user}: aura serve refuses to start "
                        "as any user but root or --user")
    caps = capability_set(serve, "CapabilityBoundingSet")
    if caps is None or caps:
        shown = "every capability" if caps is None else " ".join(sorted(caps))
        problems.append(f"{n}: CapabilityBoundingSet must be empty (the front holds no "
                        f"capability; port 8080 needs none), not {shown}")
    ambient = capability_set(serve, "AmbientCapabilities")
    if ambient:
        problems.append(f"{n}: AmbientCapabilities must be empty, not {' '.join(sorted(ambient))}")
    if serve.last(S, "NoNewPrivileges", "").lower() not in TRUE:
        problems.append(f"{n}: NoNewPrivileges=yes is missing")
    if serve.last(S, "ProtectSystem") != "strict":
        problems.append(f"{n}: ProtectSystem must be strict, not {serve.last(S, 'ProtectSystem')}")
    for key in ["ProtectHome", "PrivateTmp", "PrivateDevices", "ProtectKernelTunables",
                "ProtectKernelModules", "ProtectKernelLogs", "ProtectControlGroups",
                "RestrictNamespaces", "LockPersonality", "MemoryDenyWriteExecute"]:
        if serve.last(S, key, "").lower() not in TRUE:
            problems.append(f"{n}: {key}=yes is missing")
    families = set(serve.words(S, "RestrictAddressFamilies"))
    if families != {"AF_UNIX", "AF_INET", "AF_INET6"}:
        problems.append(f"{n}: RestrictAddressFamilies must be AF_UNIX AF_INET AF_INET6, not "
                        f"{' '.join(sorted(families)) or '(unset)'}")
    calls = serve.words(S, "SystemCallFilter")
    if not calls or any(c.startswith("~") for c in calls) or "@system-service" not in calls:
        problems.append(f"{n}: SystemCallFilter must be the allowlist @system-service (+ seccomp), "
                        f"not {' '.join(calls) or '(unset)'}")
    if "seccomp" not in calls:
        problems.append(f"{n}: SystemCallFilter lacks seccomp: the front installs its own filter "
                        "and would die of SIGSYS before it serves")

    # The daemon's paths: the front talks to its socket and can see neither of its folders.
    dargv = exec_argv(daemon)
    for flag in ["--data", "--keys", "--socket"]:
        if flag_value(argv, flag) != flag_value(dargv, flag):
            problems.append(f"{n}: {flag} {flag_value(argv, flag)} is not the daemon's "
                            f"({flag_value(dargv, flag)})")
    hidden = [p.lstrip("-") for p in serve.words(S, "InaccessiblePaths")]
    for flag in ["--data", "--keys"]:
        path = flag_value(dargv, flag) or ""
        if not any(path == h or path.startswith(h.rstrip("/") + "/") for h in hidden):
            problems.append(f"{n}: InaccessiblePaths does not cover the daemon's {flag} {path}")
    for key in ["Requires", "After"]:
        if daemon.name not in serve.words("Unit", key):
            problems.append(f"{n}: {key}={daemon.name} is missing")


# ---- the daemon ----------------------------------------------------------------------------

def check_daemon(daemon, problems):
    n = daemon.name
    S = "Service"
    argv = exec_argv(daemon)
    if argv[1:2] != ["daemon"]:
        problems.append(f"{n}: ExecStart does not run `aura daemon`: {' '.join(argv)}")
    for flag, want in [("--data", DATA), ("--keys", KEYS), ("--socket", SOCKET)]:
        if flag_value(argv, flag) != want:
            problems.append(f"{n}: ExecStart {flag} is {flag_value(argv, flag)}, not {want} "
                            "(the units' file protections and the runbook name it)")
    user = daemon.last(S, "User", "root")
    if user not in ("root", "0"):
        problems.append(f"{n}: User={user}: the engine daemon runs as root")
    for key in DAEMON_FORBIDDEN:
        if daemon.values(S, key):
            problems.append(f"{n}: {key}= must not be set (see the unit's comment: a seccomp "
                            "filter is inherited by every world; RuntimeDirectory= would remove "
                            "the leak ledger; cgroups and sysctls are written)")
    if daemon.last(S, "NoNewPrivileges", "").lower() not in TRUE:
        problems.append(f"{n}: NoNewPrivileges=yes is missing")
    if daemon.last(S, "ProtectSystem", "").lower() not in ("full", "yes", "true"):
        problems.append(f"{n}: ProtectSystem must be full (or yes), not "
                        f"{daemon.last(S, 'ProtectSystem')}")
    if daemon.last(S, "KillMode") != "mixed":
        problems.append(f"{n}: KillMode must be mixed (SIGTERM to the daemon alone, which reaps "
                        f"its worlds), not {daemon.last(S, 'KillMode')}")
    stop = duration_s(daemon.last(S, "TimeoutStopSec"))
    if stop is None or stop < 300:
        problems.append(f"{n}: TimeoutStopSec must give the daemon at least 5 min to finish a "
                        f"judge run and reap its worlds, not {daemon.last(S, 'TimeoutStopSec')}")
    if daemon.last(S, "Delegate", "").lower() not in TRUE:
        problems.append(f"{n}: Delegate=yes is missing (run groups live under its own cgroup)")


def check_snapshot(service, timer, problems):
    S = "Service"
    if service.last(S, "Type") != "oneshot":
        problems.append(f"{service.name}: Type must be oneshot")
    if not timer.values("Timer", "OnCalendar"):
        problems.append(f"{timer.name}: OnCalendar= is missing")
    rw = service.words(S, "ReadWritePaths")
    for path in [DATA, "/var/backups/aura"]:
        if path not in rw:
            problems.append(f"{service.name}: ReadWritePaths lacks {path}")


# ---- the environment file example ----------------------------------------------------------

def help_flags(aura, command):
    """The flags of `aura COMMAND --help`, or None when the command does not exist."""
    r = subprocess.run([aura, command, "--help"], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        return None
    flags, in_options = [], False
    for line in r.stdout.splitlines():
        if line.strip() == "options:":
            in_options = True
            continue
        m = re.match(r"\s+--([a-z0-9][a-z0-9-]*)", line)
        if in_options and m:
            flags.append(m.group(1))
    return flags


def check_env_example(units_dir, units, aura, problems):
    text = read_file(units_dir, ENV_EXAMPLE, problems)
    if text is None:
        return
    named = {}
    for line in text.splitlines():
        m = re.match(r"#?([A-Z][A-Z0-9_]*)=(.*)$", line)
        if m:
            named[m.group(1)] = m.group(2).strip()

    for command in ["daemon", "serve"]:
        flags = help_flags(aura, command)
        if flags is None:
            print(f"note: `aura {command} --help` failed: its flags are not checked")
            continue
        if not flags:
            problems.append(f"`aura {command} --help` lists no flags: the help format changed?")
        for flag in flags:
            if flag in NOT_SETTINGS:
                continue
            if not re.search(r"(?<![\w-])--" + re.escape(flag) + r"(?![\w-])", text):
                problems.append(f"{ENV_EXAMPLE}: `aura {command}` flag --{flag} is not named")

    # Every variable a unit reads is in the example with the unit's default, and every variable
    # of the example is read by a unit or the snapshot script.
    read = {}
    for u in units.values():
        for k, v in u.environment().items():
            read[k] = v
        for key in ["ExecStart"]:
            for v in u.values("Service", key):
                for m in re.finditer(r"\$\{(\w+)\}|\$(\w+)", v):
                    read.setdefault(m.group(1) or m.group(2), None)
    for var, default in sorted(read.items()):
        if var not in named:
            problems.append(f"{ENV_EXAMPLE}: {var} (read by the units) is not listed")
        elif default is not None and named[var] != default:
            problems.append(f"{ENV_EXAMPLE}: {var} shows {named[var]!r} but the units' default is "
                            f"{default!r}")
    script = read_file(units_dir, SNAPSHOT_SCRIPT, problems) or ""
    for var in sorted(named):
        if var not in read and var not in script:
            problems.append(f"{ENV_EXAMPLE}: {var} is read by no unit and not by {SNAPSHOT_SCRIPT}")


def check(units_dir, aura):
    problems = []
    verify(units_dir, aura, problems)
    units = {n: Unit(os.path.join(units_dir, n)) for n in UNITS
             if os.path.exists(os.path.join(units_dir, n))}
    if len(units) == len(UNITS):
        check_serve(units["aura-serve.service"], units["aura-daemon.service"], problems)
        check_daemon(units["aura-daemon.service"], problems)
        check_snapshot(units["aura-snapshot.service"], units["aura-snapshot.timer"], problems)
        check_env_example(units_dir, units, aura, problems)
    return problems


# ---- self-test -----------------------------------------------------------------------------

def edit(path, old, new):
    """Replaces the first `old` that is not inside a comment line (the example's flags are named
    in comments, so there any line will do)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    comments_too = path.endswith(ENV_EXAMPLE)
    at = text.find(old)
    while at >= 0:
        line = text[text.rfind("\n", 0, at) + 1:at + 1]
        if comments_too or not line.lstrip().startswith(("#", ";")):
            break
        at = text.find(old, at + 1)
    if at < 0:
        raise AssertionError(f"self-test: {old!r} not in {path}: the plant needs updating")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text[:at] + new + text[at + len(old):])


# Each plant: (what, file, text replaced, replacement, a fragment the problem must contain).
PLANTS = [
    ("an unknown key", "aura-daemon.service", "KillMode=mixed", "KillMode=mixed\nKilMode=mixed",
     "Unknown key"),
    ("a value systemd cannot parse", "aura-daemon.service", "KillMode=mixed", "KillMode=gently",
     "kill mode"),
    ("a section name misspelt", "aura-snapshot.timer", "[Timer]", "[Timers]", "Unknown section"),
    ("a program that does not exist", "aura-snapshot.service",
     "/usr/local/libexec/aura/aura-snapshot", "/usr/local/libexec/aura/aura-snapshot-gone",
     "aura-snapshot-gone"),
    ("a misspelt dependency", "aura-serve.service", "Requires=aura-daemon.service",
     "Requires=aura-deamon.service", "aura-deamon.service"),
    ("the front started as root", "aura-serve.service", "User=aura-web\n", "User=root\n",
     "unset or root"),
    ("the front started as another user than --user", "aura-serve.service",
     "User=aura-web\n", "User=nobody\n", "User=nobody but --user aura-web"),
    ("the front told to serve as root", "aura-serve.service", "--user ${AURA_FRONT_USER}",
     "--user root", "--user is 'root'"),
    ("a capability for the front", "aura-serve.service", "CapabilityBoundingSet=\n",
     "CapabilityBoundingSet=CAP_SYS_ADMIN\n", "CAP_SYS_ADMIN"),
    ("no bounding set for the front", "aura-serve.service", "CapabilityBoundingSet=\n", "",
     "every capability"),
    ("ambient capabilities for the front", "aura-serve.service", "AmbientCapabilities=\n",
     "AmbientCapabilities=CAP_NET_ADMIN\n", "AmbientCapabilities"),
    ("no_new_privs off for the front", "aura-serve.service", "NoNewPrivileges=yes",
     "NoNewPrivileges=no", "NoNewPrivileges"),
    ("ProtectSystem weakened for the front", "aura-serve.service", "ProtectSystem=strict",
     "ProtectSystem=full", "ProtectSystem"),
    ("the front's filter without seccomp", "aura-serve.service",
     "SystemCallFilter=@system-service seccomp", "SystemCallFilter=@system-service", "SIGSYS"),
    ("the data folder visible to the front", "aura-serve.service",
     "InaccessiblePaths=-/var/lib/aura", "InaccessiblePaths=-/var/lib/aura/run", "--data"),
    ("the front allowed to start a daemon", "aura-serve.service", "serve --no-daemon", "serve",
     "--no-daemon"),
    ("the front on another socket", "aura-serve.service", "--socket /run/aura/daemon.sock",
     "--socket /run/aura/other.sock", "--socket"),
    ("a seccomp filter on the daemon", "aura-daemon.service", "ProtectSystem=full",
     "ProtectSystem=full\nRestrictNamespaces=yes", "RestrictNamespaces"),
    ("the daemon's worlds killed with it", "aura-daemon.service", "KillMode=mixed",
     "KillMode=control-group", "KillMode"),
    ("too short a stop for the daemon", "aura-daemon.service", "TimeoutStopSec=10min",
     "TimeoutStopSec=30s", "TimeoutStopSec"),
    ("a daemon flag missing from the example", ENV_EXAMPLE, "--judge-queue", "--judge-q",
     "--judge-queue"),
    ("a unit default the example misstates", ENV_EXAMPLE, "#AURA_PORT=8080", "#AURA_PORT=8081",
     "AURA_PORT"),
]


def self_test(units_dir, aura):
    failures = 0
    with tempfile.TemporaryDirectory(prefix="aura-units-self-") as tmp:
        clean = os.path.join(tmp, "clean")
        shutil.copytree(units_dir, clean)
        problems = check(clean, aura)
        if problems:
            print("self-test: the unbroken units fail:")
            for p in problems:
                print("  " + p)
            failures += 1
        for i, (what, name, old, new, expect) in enumerate(PLANTS):
            d = os.path.join(tmp, f"plant{i}")
            shutil.copytree(units_dir, d)
            edit(os.path.join(d, name), old, new)
            problems = check(d, aura)
            if any(expect in p for p in problems):
                print(f"caught: {what}")
            else:
                print(f"MISSED: {what} ({name}); problems were: {problems or 'none'}")
                failures += 1
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--aura", required=True, help="the build's aura binary")
    ap.add_argument("--units", required=True, help="scripts/systemd")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    a.aura = os.path.abspath(a.aura)
    if shutil.which("systemd-analyze") is None:
        print("skipped: systemd-analyze is not installed (apt-get install systemd)")
        return 77
    if a.self_test:
        failures = self_test(a.units, a.aura)
        print("self-test: " + ("every plant caught" if not failures else f"{failures} failed"))
        return 1 if failures else 0
    problems = check(a.units, a.aura)
    for p in problems:
        print(p)
    if not problems:
        print(f"ok: {', '.join(UNITS)} and {ENV_EXAMPLE}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

"""What the lab's end-to-end checks in this folder share: a fresh user name, a process whose
stdout is read line by line against a deadline, plain HTTP on loopback, and the cases counted
into the plain "N passed, N failed" line test.sh sums."""
import json
import os
import pwd
import secrets
import selectors
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request


class Cases:
    """Each check is one case; the last line printed is 'N passed, N failed'."""

    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, name, ok, detail=""):
        if ok:
            self.passed += 1
            print(f"ok   {name}", flush=True)
        else:
            self.failed += 1
            print(f"FAIL {name}" + (f": {detail}" if detail else ""), flush=True)
        return ok

    def finish(self):
        print(f"{self.passed} passed, {self.failed} failed", flush=True)
        return 1 if self.failed or not self.passed else 0


def fresh_user_name(prefix="aura-t-"):
    """A user name this machine does not have (useradd's rules: [a-z_][a-z0-9_-]{0,31})."""
    while True:
        name = prefix + secrets.token_hex(4)
        try:
            pwd.getpwnam(name)
        except KeyError:
            return name


def user_exists(name):
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def remove_user(name):
    """userdel (its own group goes with it); True when the user is gone afterwards."""
    if user_exists(name):
        subprocess.run(["userdel", name], check=False)
    return not user_exists(name)


class Proc:
    """A child in its own process group, stdout read as it comes (echoed to ours)."""

    def __init__(self, argv, env=None, cwd=None):
        self.p = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                  start_new_session=True)
        self.text = ""
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.p.stdout, selectors.EVENT_READ)

    def line_starting(self, prefix, guard_s):
        """The rest of the first line starting with `prefix`, or None at exit or the guard."""
        deadline = time.monotonic() + guard_s
        while True:
            for line in self.text.splitlines(keepends=True):
                if line.startswith(prefix) and line.endswith("\n"):
                    return line[len(prefix):].strip()
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            if not self.sel.select(timeout=min(left, 1.0)):
                continue
            chunk = os.read(self.p.stdout.fileno(), 65536)
            if not chunk:
                return None
            s = chunk.decode("utf-8", "replace")
            sys.stdout.write(s)
            sys.stdout.flush()
            self.text += s

    def drain(self):
        """Reads what is left (after an exit), echoed."""
        while True:
            try:
                chunk = os.read(self.p.stdout.fileno(), 65536)
            except OSError:
                return
            if not chunk:
                return
            s = chunk.decode("utf-8", "replace")
            sys.stdout.write(s)
            self.text += s

    def signal_group(self, sig):
        try:
            os.killpg(self.p.pid, sig)
        except ProcessLookupError:
            pass

    def wait(self, guard_s):
        """The exit status, or None past the guard (a hang guard, not a speed bar)."""
        try:
            code = self.p.wait(timeout=guard_s)
        except subprocess.TimeoutExpired:
            return None
        self.drain()
        return code

    def stop(self, cases, sig, name, guard_s=120):
        """Sends `sig` to the group and checks, as the case `name`, that it exits 0."""
        self.signal_group(sig)
        code = self.wait(guard_s)
        return cases.check(name, code == 0, f"status {code}")

    def kill(self):
        if self.p.poll() is None:
            self.signal_group(signal.SIGKILL)
            self.p.wait()


def http(url, method="GET", body=None, timeout=60):
    """(status, headers, body bytes); an HTTP error status is an answer, not an exception."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()
    except (urllib.error.URLError, OSError) as e:
        return 0, {}, str(e).encode()


def proc_uids(pid):
    """The Uid line of /proc/PID/status as four ints, or None."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("Uid:"):
                    return [int(x) for x in line.split()[1:]]
    except OSError:
        return None
    return None

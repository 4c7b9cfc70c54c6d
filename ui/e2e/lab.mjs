// A real lab for the end-to-end run: `aura serve` (which starts its own engine daemon and sets
// the lab up on first use) on a free loopback port, with a temporary data folder, keys folder
// and a copy of the bundled scenarios (set-up signs the packages in place), serving ui/dist.
import { spawn } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const kSetupGuardMs = 15 * 60 * 1000;  // first use sets the lab up; sized for a slow machine
const kStopGuardMs = 180 * 1000;

export async function startLab({ repo, bin, scenarios, log }) {
  const dir = mkdtempSync(path.join(tmpdir(), 'aura-ui-e2e-'));
  // mkdtemp makes it 0700; the front, once dropped to its user, must reach run/daemon.sock
  // beneath it (the daemon keeps the data and keys folders closed itself)
  chmodSync(dir, 0o755);
  cpSync(scenarios, path.join(dir, 'scenarios'), { recursive: true });
  const args = ['serve', '--data', path.join(dir, 'var'), '--keys', path.join(dir, 'keys'), '--port', '0',
    '--listen', '127.0.0.1', '--ui', path.join(repo, 'ui', 'dist')];
  // the embedded daemon sets the lab up with ./scenarios: run it from the temporary folder
  const child = spawn(bin, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  let out = '';
  const url = await new Promise((resolve, reject) => {
    const guard = setTimeout(() => reject(new Error(`aura serve printed no URL within ${kSetupGuardMs / 1000} s:\n${out.slice(-2000)}`)), kSetupGuardMs);
    const on = (chunk) => {
      out += chunk.toString();
      const m = /AURA lab: (http:\/\/127\.0\.0\.1:\d+)\//.exec(out);
      if (m) {
        clearTimeout(guard);
        resolve(m[1]);
      }
    };
    child.stdout.on('data', on);
    child.stderr.on('data', (c) => { if (log) log.write(c); on(c); });
    exited.then(({ code, signal }) => { clearTimeout(guard); reject(new Error(`aura serve exited (${code ?? signal}) before serving:\n${out.slice(-2000)}`)); });
  });
  // the front answers once the daemon does
  const deadline = Date.now() + kSetupGuardMs;
  for (;;) {
    try {
      const r = await fetch(`${url}/api/v1/health`);
      if (r.ok) break;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error('/api/v1/health never answered 200');
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`aura serve exited:\n${out.slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  return {
    url,
    dir,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), kStopGuardMs);
        await exited;
        clearTimeout(t);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

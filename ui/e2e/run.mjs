#!/usr/bin/env node
// End-to-end tests of the browser lab in Debian's Chromium (headless, driven by playwright-core)
// against a real `aura serve` on loopback. One line per case; exit status 1 when any fails.
//
//   node ui/e2e/run.mjs [--screenshots] [--base URL] [--case NAME]...
//
// Env: AURA_BIN (default build/aura), AURA_SCENARIOS (default scenarios/), CHROMIUM (default
// /usr/bin/chromium); paths are relative to the repository root. --screenshots writes each
// page at 1280x800 and 390x844 to docs/screenshots/. --base uses a lab already running there
// instead of starting one (for development).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { cases } from './cases.mjs';
import { startLab } from './lab.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const argv = process.argv.slice(2);
const flag = (name) => argv.includes(name);
const values = (name) => argv.flatMap((a, i) => (a === name && argv[i + 1] ? [argv[i + 1]] : []));
const screenshots = flag('--screenshots') ? path.join(repo, 'docs', 'screenshots') : null;
const only = values('--case');
const base = values('--base')[0];
const fromRepo = (p) => (path.isAbsolute(p) ? p : path.join(repo, p));

const kCaseGuardMs = 5 * 60 * 1000;  // a hang guard (the slowest case takes about 6 s here), not a speed bar

async function main() {
  let lab = null;
  let browser = null;
  const profile = mkdtempSync(path.join(tmpdir(), 'aura-ui-chromium-'));
  // Stopped from outside (Ctrl-C, a CI time-out): stop the lab and remove the folders first.
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.once(sig, async () => {
      console.log(`FAIL interrupted by ${sig}`);
      await browser?.close().catch(() => {});
      await lab?.stop().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
      process.exit(1);
    });
  }
  let failed = 0;
  let passed = 0;
  try {
    if (base) {
      lab = { url: base.replace(/\/$/, ''), stop: async () => {} };
    } else {
      lab = await startLab({
        repo,
        bin: fromRepo(process.env.AURA_BIN || 'build/aura'),
        scenarios: fromRepo(process.env.AURA_SCENARIOS || 'scenarios'),
        log: process.env.AURA_E2E_LOG ? (await import('node:fs')).createWriteStream(process.env.AURA_E2E_LOG) : null,
      });
    }
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync'],
      viewport: { width: 1280, height: 800 },
    });
    if (screenshots) mkdirSync(screenshots, { recursive: true });
    const ctx = { url: lab.url, browser, screenshots, shared: {} };
    for (const c of cases) {
      if (only.length > 0 && !only.includes(c.name)) continue;
      const started = Date.now();
      const page = await browser.newPage();
      const problems = [];
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      // Any CSP refusal fails the case, but one: the <style> elements CodeMirror and xterm.js
      // write are refused as expected and mirrored into adopted sheets (src/components/csp_styles.ts).
      page.on('console', (m) => {
        const t = m.text();
        if (m.type() === 'error' && /Content Security Policy|Refused to/.test(t) && !/^Applying inline style violates/.test(t)) problems.push(`CSP: ${t}`);
      });
      try {
        await Promise.race([
          c.run(page, ctx),
          new Promise((_, reject) => setTimeout(() => reject(new Error(`no result within ${kCaseGuardMs / 1000} s`)), kCaseGuardMs)),
        ]);
        if (problems.length > 0) throw new Error(problems.join('; '));
        passed++;
        console.log(`ok   ${c.name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
      } catch (e) {
        failed++;
        console.log(`FAIL ${c.name} (${((Date.now() - started) / 1000).toFixed(1)} s): ${e instanceof Error ? e.message.split('\n').slice(0, 6).join(' | ') : e}`);
      } finally {
        await page.close().catch(() => {});
      }
    }
  } catch (e) {
    failed++;
    console.log(`FAIL setup: ${e instanceof Error ? e.message : e}`);
  } finally {
    await browser?.close().catch(() => {});
    await lab?.stop().catch((e) => console.log(`FAIL stopping the lab: ${e.message}`));
    rmSync(profile, { recursive: true, force: true });
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed > 0 ? 1 : 0);
}

await main();

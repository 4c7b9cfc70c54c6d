// The end-to-end cases. Each drives the pages as a person would (clicks, typing, keys) and
// asserts what the page shows; the API is read directly only to know what to expect.
import path from 'node:path';

const kLong = 15 * 60 * 1000;  // a world build, a judge run or a gate: hang guard only

function assert(cond, message) {
  if (!cond) throw new Error(message);
}

// The page at both sizes, scrolled to `at` (a selector) when given, else to the top.
async function shot(page, ctx, name, at) {
  if (!ctx.screenshots) return;
  for (const [w, h] of [[1280, 800], [390, 844]]) {
    await page.setViewportSize({ width: w, height: h });
    await page.evaluate(() => window.scrollTo(0, 0));
    if (at) await page.locator(at).first().evaluate((e) => e.scrollIntoView({ block: 'start' }));
    await page.waitForTimeout(400);
    await page.screenshot({ path: path.join(ctx.screenshots, `${name}-${w}x${h}.png`) });
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

async function json(ctx, p) {
  const r = await fetch(`${ctx.url}/api/v1${p}`);
  assert(r.ok, `GET ${p}: HTTP ${r.status}`);
  return r.json();
}

// Only the current phase of the rail is enabled.
async function railIs(page, phase) {
  await page.locator(`[data-phase-panel="${phase}"]`).waitFor({ timeout: kLong });
  const enabled = await page.locator('.phase-rail button:not([disabled])').evaluateAll((bs) => bs.map((b) => b.dataset.phase));
  assert(phase === 'done' ? enabled.length === 0 : enabled.length === 1 && enabled[0] === phase, `rail: enabled ${JSON.stringify(enabled)} in phase ${phase}`);
  const next = (await page.locator('[data-next]').innerText()).trim();
  assert(next.startsWith('Next step:') && next.length > 'Next step:'.length + 5, `no next step shown in phase ${phase}`);
}

function tamperSignature(text) {
  const env = JSON.parse(text);
  const sig = Buffer.from(env.signatures[0].sig, 'base64');
  sig[7] ^= 0x20;
  env.signatures[0].sig = sig.toString('base64');
  return JSON.stringify(env);
}

function tamperPayload(text) {
  const env = JSON.parse(text);
  const payload = Buffer.from(env.payload, 'base64');
  const at = payload.indexOf('"verdict":"VERIFIED"');
  payload.write('"verdict":"VERIFIEE"', at);
  env.payload = payload.toString('base64');
  return JSON.stringify(env);
}

async function waitReceiptVerifies(page) {
  await page.locator('[data-receipt-ok="true"]').waitFor({ timeout: 60_000 });
  for (const f of ['signature', 'document', 'gate', 'events', 'checkpoint', 'inclusion_proofs']) {
    assert(await page.locator(`tr[data-field="${f}"][data-ok="true"]`).count() === 1, `receipt check ${f} is not ok`);
  }
  await page.locator('tr[data-field="latest proofs"][data-ok="true"]').waitFor({ timeout: 60_000 });
  await page.locator('[data-server="replay"][data-ok="true"]').waitFor({ timeout: kLong });
}

export const cases = [
  {
    name: 'judge-o2-to-receipt',
    async run(page, ctx) {
      await page.goto(`${ctx.url}/`);
      await page.getByLabel(/o2-service-chain/).check();
      await page.getByRole('button', { name: 'Run Judge Mode' }).click();
      await page.waitForURL(/#\/judge\/[0-9a-f]{16}$/);
      const bad = page.locator('[data-case="bad"]');
      await bad.locator('[data-verdict="RECOVERED_UNPROVEN"]').first().waitFor({ timeout: kLong });
      await bad.locator('[data-no-receipt]').waitFor({ timeout: kLong });
      assert(await bad.locator('a[data-receipt]').count() === 0, 'the bad case shows a receipt link');
      const badFailed = await bad.locator('tr[data-property][data-status="fail"]').count();
      assert(badFailed >= 1, 'the bad case shows no failing property');
      const gold = page.locator('[data-case="gold"]');
      await gold.locator('[data-verdict="VERIFIED"]').first().waitFor({ timeout: kLong });
      const statuses = await gold.locator('tr[data-property]').evaluateAll((rs) => rs.map((r) => `${r.dataset.property}=${r.dataset.status}`));
      assert(statuses.join(',') === 'primary=pass,twin=pass,control=pass,repeat=pass,reversal=pass', `gold properties: ${statuses}`);
      const worlds = await gold.locator('tr[data-property] td:nth-child(3)').allInnerTexts();
      assert(worlds.every((w) => w && w !== '–'), `a gold property shows no world: ${worlds}`);
      const link = gold.locator('a[data-receipt]');
      await link.waitFor({ timeout: kLong });
      const sha = await link.getAttribute('data-receipt');
      await shot(page, ctx, 'judge', '.run');
      await link.click();
      await page.waitForURL(new RegExp(`#/receipt/${sha}$`));
      await waitReceiptVerifies(page);
      await shot(page, ctx, 'receipt');

      // a tampered copy chosen as a file: the signature fails, here and at the lab
      const text = await (await fetch(`${ctx.url}/api/v1/receipts/${sha}`)).text();
      await page.locator('#receipt-file').setInputFiles({ name: 'tampered-sig.receipt.json', mimeType: 'application/json', buffer: Buffer.from(tamperSignature(text)) });
      await page.locator('[data-receipt-ok="false"]').waitFor({ timeout: 30_000 });
      assert(await page.locator('tr[data-field="signature"][data-ok="false"]').count() === 1, 'a flipped signature byte did not fail the signature check');
      await page.locator('[data-server="offline"][data-ok="false"]').waitFor({ timeout: 60_000 });
      // a tampered copy dropped on the page: one payload byte changed
      const dt = await page.evaluateHandle((t) => {
        const d = new DataTransfer();
        d.items.add(new File([t], 'tampered-payload.receipt.json', { type: 'application/json' }));
        return d;
      }, tamperPayload(text));
      await page.dispatchEvent('[data-dropzone]', 'drop', { dataTransfer: dt });
      await page.getByText('tampered-payload.receipt.json').first().waitFor({ timeout: 30_000 });
      await page.locator('[data-receipt-ok="false"]').waitFor({ timeout: 30_000 });
      const summary = await page.locator('[data-summary]').innerText();
      assert(/check signature failed/.test(summary), `dropped payload tamper: ${summary}`);
      ctx.shared.receipt = sha;
    },
  },
  {
    name: 'learner-t0-every-phase',
    async run(page, ctx) {
      await page.goto(`${ctx.url}/#/scenarios`);
      const card = page.locator('[data-scenario="t0-config-drift"]');
      await card.getByLabel('Your name (optional)').fill('e2e');
      await card.getByRole('button', { name: 'Start an attempt' }).click();
      await page.waitForURL(/#\/attempt\/[0-9a-f]{16}$/, { timeout: kLong });
      await railIs(page, 'observe');
      // the briefing names web2; the learner's prediction
      const briefing = await page.locator('.briefing').first().innerText();
      assert(/web2/.test(briefing) && /host_vars/.test(briefing), 'the briefing is not shown');
      await page.getByLabel(/^stale-override/).check();
      await page.getByLabel('What do you expect a probe to show?').fill("web2's host vars set app_root to an old release");
      await page.getByRole('button', { name: 'Record my prediction' }).click();
      await railIs(page, 'inspect');

      // a probe with a path the catalog refuses is checked in the page and costs nothing
      const budget = async () => Number(await page.locator('[data-remaining]').getAttribute('data-remaining'));
      const before = await budget();
      await page.locator('#probe-name').selectOption('file.read');
      await page.locator('#param-path').fill('/fleet/../etc/passwd');
      await page.getByRole('button', { name: /^Run file\.read/ }).click();
      const err = await page.locator('#param-path-error').innerText();
      assert(/normalised/.test(err), `no inline error for a bad path: "${err}"`);
      assert(await budget() === before, 'a refused probe cost budget');
      // the briefing says where the overrides live
      await page.locator('#param-path').fill('/fleet/host_vars/web2.conf');
      await page.getByRole('button', { name: /^Run file\.read/ }).click();
      const ev1 = page.locator('[data-evidence="ev-1"]');
      await ev1.locator('[data-transcript]').waitFor({ state: 'attached', timeout: kLong });
      const out1 = await ev1.locator('[data-transcript]').textContent();
      assert(/app_root=/.test(out1), `ev-1 transcript: ${out1}`);
      await ev1.locator('.xterm-rows').waitFor({ timeout: 10_000 });
      // the styles xterm.js and CodeMirror write at run time apply under the CSP (mirrored)
      const termColor = await ev1.locator('.xterm-rows').evaluate((e) => getComputedStyle(e).color);
      assert(termColor === 'rgb(230, 230, 230)', `xterm's theme is not applied (colour ${termColor})`);
      const cmDisplay = await page.locator('[data-testid="ir-editor"] .cm-editor').evaluate((e) => getComputedStyle(e).display);
      assert(cmDisplay === 'flex', `CodeMirror's base theme is not applied (display ${cmDisplay})`);
      assert(await budget() === before - 1, 'the probe did not cost 1');
      await page.locator('#probe-name').selectOption('fleet.diff');
      await page.getByRole('button', { name: /^Run fleet\.diff/ }).click();
      await page.locator('[data-evidence="ev-2"] [data-transcript]').waitFor({ state: 'attached', timeout: kLong });

      // the learner reads the catalog: of the selectors (one for each hypothesis), the one that
      // names nodes by what their host vars set app_root to; the checks
      const terms = await page.locator('tr[data-term]').evaluateAll((rs) => rs.map((r) => ({ name: r.dataset.term, text: r.innerText })));
      const selector = terms.find((t) => /selector/.test(t.text) && /host vars set app_root/.test(t.text))?.name;
      assert(selector, `no selector for app_root among the target terms: ${JSON.stringify(terms)}`);
      const checks = await page.locator('li[data-check]').evaluateAll((ls) => ls.map((l) => ({ id: l.dataset.check, text: l.innerText })));
      const post = checks.filter((c) => /\(postcondition\)/.test(c.text)).map((c) => c.id);
      const inv = checks.filter((c) => /\(invariant\)/.test(c.text) && /render|converged/.test(c.text)).map((c) => c.id);
      assert(post.length > 0, 'no postcondition listed');
      const role = terms.find((t) => /role/.test(t.text))?.name;
      const ir = (sel) => JSON.stringify({
        v: 1,
        hypothesis: 'stale-override',
        claim: "web2's host vars override app_root with a release folder that is gone; the renderer copied it into web2's config",
        evidence: ['ev-1', 'ev-2'],
        falsifier: 'web2 has no app_root override in its host vars',
        actions: [
          { call: 'vars.unset', params: { node: { selector: sel }, key: 'app_root' } },
          { call: 'fleet.converge', params: { node: { role } } },
        ],
        postconditions: post,
        invariants: inv,
        rollback: [{ call: 'journal.undo' }],
      }, null, 2);
      const editor = page.locator('[data-testid="ir-editor"] .cm-content');
      // as a person pastes a document into the editor: select all, paste
      const type = async (text) => {
        await editor.focus();
        await page.keyboard.press('Control+a');
        await page.keyboard.press('Delete');
        await editor.evaluate((el, t) => {
          const d = new DataTransfer();
          d.setData('text/plain', t);
          el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: d, bubbles: true, cancelable: true }));
        }, text);
      };
      // a syntax error: shown with its line and column as it is typed
      await type(ir(selector).replace('"v": 1,', '"v": 1'));
      await page.locator('[data-ir-syntax]').filter({ hasText: /line 3, column 3/ }).waitFor({ timeout: 10_000 });
      await page.locator('.cm-lintRange-error').first().waitFor({ timeout: 10_000 });
      // a misspelt selector: the lab refuses it at its path, the editor marks it there
      await type(ir(selector.slice(0, -1)));
      await page.getByRole('button', { name: 'Check with the lab' }).click();
      const errors = page.locator('[data-ir-errors]');
      await errors.waitFor({ timeout: 30_000 });
      const shown = await errors.innerText();
      assert(shown.includes('$.actions[0].params.node'), `the refusal shows no path: ${shown}`);
      await page.locator('.cm-lintRange-error').first().waitFor({ timeout: 10_000 });
      const marked = await page.locator('.cm-lintRange-error').first().innerText();
      assert(/node|stale/.test(marked), `the mark is not on the node: "${marked}"`);
      await shot(page, ctx, 'attempt', '#ir-title');
      // fixed
      await type(ir(selector));
      await page.getByRole('button', { name: 'Check with the lab' }).click();
      await page.getByText('The lab accepts this IR as it is.').waitFor({ timeout: 30_000 });
      await page.getByRole('button', { name: 'Submit the IR' }).click();
      await railIs(page, 'contract');

      await page.getByRole('button', { name: /^Apply revision 1/ }).click();
      await railIs(page, 'ack');
      // The apply ended with the supervisor's readback: it is shown before anything is
      // acknowledged, and the button acknowledges that one.
      await page.locator('.readback[data-as-requested="true"]').waitFor({ timeout: 10_000 });
      await page.getByRole('button', { name: 'Acknowledge this readback' }).click();
      await railIs(page, 'verify');
      assert(await page.locator('.readback[data-as-requested="true"]').count() === 1, 'the readback is not shown as requested');
      await page.getByRole('button', { name: 'Verify the live world' }).click();
      await railIs(page, 'transfer_gate');
      const held = await page.locator('table.facts tr[data-ok="true"]').count();
      assert(held > 0 && (await page.locator('table.facts tr[data-ok="false"]').count()) === 0, 'verify facts are not all held');
      await page.getByRole('button', { name: 'Run the transfer gate' }).click();
      await page.locator('.gate-section [data-verdict="VERIFIED"]').waitFor({ timeout: kLong });
      await page.locator('.gate-section .source-live').waitFor({ timeout: 5_000 });
      const gate = await page.locator('.gate-section tr[data-property]').evaluateAll((rs) => rs.map((r) => r.dataset.status));
      assert(gate.join() === 'pass,pass,pass,pass,pass', `gate: ${gate}`);
      await railIs(page, 'receipt');
      await shot(page, ctx, 'attempt-gate', '.gate-section');
      await page.getByRole('button', { name: 'Issue the receipt' }).click();
      await railIs(page, 'reflect');
      await page.getByLabel(/What did you learn/).fill('The source of truth held the stale override; a selector fixes it wherever it is.');
      await page.getByRole('button', { name: 'Record my reflection' }).click();
      await railIs(page, 'done');
      await page.locator('a[data-receipt]').first().click();
      await page.waitForURL(/#\/receipt\/attempt\/[0-9a-f]{16}$/);
      await waitReceiptVerifies(page);
    },
  },
  {
    name: 'o2-catalog-change-surface',
    async run(page, ctx) {
      // the catalog shows what the gate will judge beyond the checks: what a fix may change
      await page.goto(`${ctx.url}/#/scenarios`);
      const card = page.locator('[data-scenario="o2-service-chain"]');
      await card.getByRole('button', { name: 'Start an attempt' }).click();
      await page.waitForURL(/#\/attempt\/[0-9a-f]{16}$/, { timeout: kLong });
      const scenario = await json(ctx, '/scenarios/o2-service-chain');
      assert(scenario.changes && scenario.changes.fix.length > 0, 'the API shows no change surface for O2');
      const surface = page.getByText('Change surface');
      await surface.click();
      for (const r of scenario.changes.fix) {
        const text = await page.locator(`li[data-surface="${r.name}"]`).innerText();
        assert(text.includes(r.paths[0]) && text.includes(r.what.join(', ')), `fix rule ${r.name} is not shown as the API has it: ${text}`);
      }
      for (const r of scenario.changes.runtime) {
        assert(await page.locator(`li[data-runtime="${r.name}"]`).count() === 1, `runtime rule ${r.name} is not shown`);
      }
      // and the policies its checks read, each stated once
      assert(scenario.policies && scenario.policies.length > 0, 'the API shows no policies for O2');
      await page.getByText(`Policies (${scenario.policies.length})`).click();
      for (const p of scenario.policies) {
        const text = await page.locator(`li[data-policy="${p.name}"]`).innerText();
        assert(text.includes(p.description), `policy ${p.name} is not shown as the API has it: ${text}`);
      }
      const checks = page.locator('summary', { hasText: `Checks (${scenario.checks.length})` });
      if (!(await checks.locator('xpath=..').getAttribute('open'))) await checks.click();
      for (const c of scenario.checks.filter((c) => c.policies && c.policies.length > 0)) {
        const text = await page.locator(`li[data-check="${c.id}"]`).innerText();
        assert(text.includes(`reads ${c.policies.join(', ')}`), `check ${c.id} does not say which policies it reads: ${text}`);
      }
      await shot(page, ctx, 'o2-change-surface');
      await page.getByLabel('Reason').fill('e2e: the catalog was read');
      await page.getByRole('button', { name: 'Abandon…' }).click();
      await page.getByRole('button', { name: 'Yes, abandon this attempt' }).click();
      await railIs(page, 'done');
    },
  },
  {
    name: 'capability-panel',
    async run(page, ctx) {
      const panel = await json(ctx, '/capabilities');
      await page.goto(`${ctx.url}/#/capabilities`);
      await page.locator('[data-lab]').first().waitFor();
      for (const lab of panel.labs) {
        const card = page.locator(`[data-lab="${lab.scenario}"]`);
        assert(await card.getAttribute('data-available') === String(lab.available), `lab ${lab.scenario}: availability differs from the API`);
        const startable = await card.getByRole('button', { name: 'Start an attempt' }).count();
        if (lab.available) assert(startable === 1, `available lab ${lab.scenario} cannot be started`);
        else {
          const reason = (lab.missing ?? []).join('; ') || lab.reason;
          assert(startable === 0, `unavailable lab ${lab.scenario} can be started`);
          assert((await card.innerText()).includes(reason), `unavailable lab ${lab.scenario} does not show its reason "${reason}"`);
        }
      }
      for (const c of panel.capabilities) {
        const row = page.locator(`tr[data-capability="${c.id}"]`);
        assert(await row.getAttribute('data-available') === String(c.available), `capability ${c.id}: availability differs from the API`);
        assert((await row.innerText()).includes(c.detail), `capability ${c.id} does not show what was measured`);
      }
      const unavailable = panel.capabilities.filter((c) => !c.available).map((c) => c.id);
      const labsUnavailable = panel.labs.filter((l) => !l.available).map((l) => l.scenario);
      ctx.shared.capabilityNote = `unavailable here: capabilities [${unavailable.join(', ')}], labs [${labsUnavailable.join(', ')}]`;
      await shot(page, ctx, 'capabilities');
      await page.goto(`${ctx.url}/#/scenarios`);
      await page.locator('[data-scenario]').first().waitFor();
      await shot(page, ctx, 'scenarios');
    },
  },
  {
    name: 'keyboard-only-judge',
    async run(page, ctx) {
      await page.goto(`${ctx.url}/`);
      await page.locator('input[name="scenario"]').first().waitFor();
      const active = () => page.evaluate(() => {
        const a = document.activeElement;
        const cs = a ? getComputedStyle(a) : null;
        return { tag: a?.tagName, cls: a?.className ?? '', name: a?.getAttribute('name'), value: a?.value, text: a?.textContent?.trim().slice(0, 60), receipt: a?.dataset?.receipt, outline: cs ? `${cs.outlineStyle} ${cs.outlineWidth}` : '' };
      });
      await page.keyboard.press('Tab');
      let a = await active();
      assert(String(a.cls).includes('skip-link'), `first Tab is not the skip link: ${JSON.stringify(a)}`);
      for (let i = 0; i < 20 && a.name !== 'scenario'; i++) {
        await page.keyboard.press('Tab');
        a = await active();
        assert(!a.outline.startsWith('none'), `focus is not visible on ${JSON.stringify(a)}`);
      }
      assert(a.name === 'scenario', 'Tab never reached the scenario choice');
      for (let i = 0; i < 5 && a.value !== 'o2-service-chain'; i++) {
        await page.keyboard.press('ArrowDown');
        a = await active();
      }
      assert(a.value === 'o2-service-chain', 'arrow keys did not choose O2');
      await page.keyboard.press('Tab');
      a = await active();
      assert(a.tag === 'BUTTON' && /Run Judge Mode/.test(a.text), `Tab after the choice is not the run button: ${JSON.stringify(a)}`);
      await page.keyboard.press('Enter');
      await page.waitForURL(/#\/judge\/[0-9a-f]{16}$/);
      await page.locator('[data-case="gold"] a[data-receipt]').waitFor({ timeout: kLong });
      for (let i = 0; i < 300 && !a.receipt; i++) {
        await page.keyboard.press('Tab');
        a = await active();
      }
      assert(a.receipt, 'Tab never reached the receipt link');
      await page.keyboard.press('Enter');
      await page.waitForURL(/#\/receipt\/[0-9a-f]{64}$/);
      await waitReceiptVerifies(page);
    },
  },
  {
    name: 'proof-page',
    async run(page, ctx) {
      const proof = await json(ctx, '/proof');
      await page.goto(`${ctx.url}/#/proof`);
      const head = page.locator('[data-head-seq]');
      await head.waitFor();
      assert(Number(await head.getAttribute('data-head-seq')) >= proof.head.seq, 'the head shown is behind the API');
      if (proof.checkpoint) await page.getByText(/Opened in this page with the lab's key/).waitFor({ timeout: 10_000 });
      await page.locator('[data-last-verify]').waitFor();
      await page.getByText('aura_front_daemon_up').first().waitFor();
      await shot(page, ctx, 'proof');
    },
  },
];

#!/usr/bin/env node
// The live demo page (web/demo/, docs/DEMO.md) in a real browser:
//   1. passive standby on the default network, `aggregate` (the primary) killed at 2 s virtual:
//      a takeover follows, and 1 s of virtual time after it the output strip shows 0 missing;
//   1c. a live switch of the aggregate from passive to active standby from the page's control (a
//      refused choice explained first), told in the story and marked on the timeline, then a
//      kill: the output stays precise to the end;
//   2. the same with amnesia (killed with the node's Kill button): missing > 0;
//   3. both side by side (one kill hits each side's aggregate primary), then a rewind to 1.5 s
//      that replays the recorded kill, and single steps;
//   4. the guided tour of passive standby, sped up, told from the events; then hybrid standby's
//      (a stall makes the standby active before the crash) and global checkpoints' (checkpoints
//      complete, the crash, the coordinator's rollback, the spare restored).
// Any console error fails. Prints the measured frame rate of the live view (not asserted) and
// keeps screenshots.
//
//   node tests/browser/demo_test.mjs http://127.0.0.1:PORT/   (a running `hapair demo`)
//   node tests/browser/demo_test.mjs file:///.../build-wasm/demo/index.html   (the static WebAssembly page)
//   options: --shots DIR (default $TMPDIR), --headful-size WxH
import os from 'node:os';
import path from 'node:path';
import { launch, openPage, waitForHook, assertNoErrors, screenshot, TestFailure } from './lib.mjs';

const args = process.argv.slice(2);
const shotsAt = args.indexOf('--shots');
const shots = shotsAt >= 0 ? args[shotsAt + 1] : (process.env.TMPDIR || os.tmpdir());
const base = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--shots');
if (!base) {
  console.error('usage: node demo_test.mjs BASE_URL  [--shots DIR]');
  process.exit(2);
}


const log = (s) => console.log(`demo_test: ${s}`);
async function poll(page, what, fn, arg, timeoutMs) {
  const t0 = Date.now();
  for (;;) {
    const v = await page.evaluate(fn, arg);
    if (v) return v;
    assertNoErrors(page, what);
    if (Date.now() - t0 > timeoutMs) {
      const st = await page.evaluate(() => window.hapairDemo.state());
      throw new TestFailure(`${what}: not within ${timeoutMs / 1000} s (now ${st.now_us} µs, running ${st.running}, ended ${st.ended})`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
const summary = (page) => page.evaluate(() => window.hapairDemo.summary());
const narration = (page, pane) => page.evaluate((p) => window.hapairDemo.narration(p), pane || 0);

// Runs until the takeover of the aggregate fragment, then 1 s of virtual time past it (or the
// end); returns the takeover's time.
async function settleAfterTakeover(page, what, pane) {
  const tk = await poll(page, `${what}: waiting for the takeover marker`, (p) => {
    const s = window.hapairDemo.summary()[p];
    if (!s || !(s.markers.takeover >= 1)) return null;
    const t = window.hapairDemo.narration(p).find((it) => it.kind === 'takeover');
    return t ? t.t : null;
  }, pane || 0, 60000);
  await page.evaluate((t) => window.hapairDemo.runTo(t), tk + 1000000);
  return tk;
}

const browser = await launch({ width: 1600, height: 1000 });
let failed = null;
const fps = [];
try {
  const url = base;
  // openPage records console errors from the start.
  const pg = await openPage(browser, url);
  await waitForHook(pg, 'hapairDemo', 30000);
  const backend = await pg.evaluate(() => window.hapairDemo.backend);
  log(`page ready (backend ${backend})`);
  // A file:// page is the static WebAssembly build (scripts/build_wasm.sh); a page served over
  // HTTP by hapair demo must talk to the server.
  const wantBackend = url.startsWith('file:') ? 'wasm' : 'http';
  if (backend !== wantBackend) throw new TestFailure(`the page at ${url} chose the ${backend} backend, not ${wantBackend}`);

  // ---- 1. passive standby: kill aggregate at 2 s, nothing missing ----
  await pg.evaluate(() => window.hapairDemo.start({ network: 'default', approach: 'passive', compare: '', seed: 1, duration_s: 6, speed: 1, running: false }));
  await pg.evaluate(() => window.hapairDemo.runTo(1500000));
  fps.push(await pg.evaluate(() => window.hapairDemo.fps));
  await pg.evaluate(() => window.hapairDemo.setSpeed(0.2));
  await pg.evaluate(() => window.hapairDemo.runTo(2000000));
  const primary = await pg.evaluate(() => window.hapairDemo.currentPrimary('aggregate'));
  if (primary !== 'aggregate') throw new TestFailure(`passive: the aggregate fragment's primary at 2 s is ${primary}, not aggregate`);
  await pg.evaluate(() => window.hapairDemo.kill('aggregate'));
  await pg.evaluate(() => { window.hapairDemo.setSpeed(1); window.hapairDemo.play(); });
  const tkP = await settleAfterTakeover(pg, 'passive');
  fps.push(await pg.evaluate(() => window.hapairDemo.fps));
  const sP = (await summary(pg))[0];
  log(`passive: takeover at ${tkP} µs; strip ${JSON.stringify(sP.strip)}; markers ${JSON.stringify(sP.markers)}`);
  if (sP.strip.missing !== 0) throw new TestFailure(`passive standby: ${sP.strip.missing} missing tuples 1 s after the takeover (expected 0)`);
  if (!(sP.strip.exact > 0)) throw new TestFailure('passive standby: no output delivered');
  if (!(sP.markers.failure >= 1) || !(sP.markers.detection >= 1)) throw new TestFailure(`passive standby: no failure/detection marker: ${JSON.stringify(sP.markers)}`);
  const nP = await narration(pg);
  log(`passive narration:\n    ${nP.map((it) => `${(it.t / 1e6).toFixed(6)} ${it.text}`).join('\n    ')}`);
  if (!nP.some((it) => it.kind === 'detection') || !nP.some((it) => it.kind === 'takeover')) throw new TestFailure('passive: the narration tells no detection or takeover');
  const stP = await pg.evaluate(() => window.hapairDemo.status(0));
  if (!/installs checkpoint \d+/.test(stP.checkpoint || '')) throw new TestFailure(`passive: no checkpoint told in normal operation: ${JSON.stringify(stP)}`);
  assertNoErrors(pg, 'passive standby');
  await screenshot(pg, path.join(shots, 'hapair-demo-passive.png'));

  // ---- 1b. the buttons on the nodes: pause, cut, kill, restart (passive standby) ----
  await pg.evaluate(() => window.hapairDemo.start({ approach: 'passive', compare: '', seed: 1, duration_s: 6, speed: 1, running: false }));
  const req0 = await pg.evaluate(() => window.hapairDemo.requests());
  await pg.evaluate(() => window.hapairDemo.runTo(1000000));
  const req1 = await pg.evaluate(() => window.hapairDemo.requests());
  const perSecond = (req1.advance || 0) - (req0.advance || 0);
  await pg.evaluate(() => window.hapairDemo.setSpeed(0.01));
  await pg.evaluate(() => window.hapairDemo.play());
  await new Promise((res) => setTimeout(res, 1000));
  await pg.evaluate(() => window.hapairDemo.pause());
  const req2 = await pg.evaluate(() => window.hapairDemo.requests());
  const slowPerSecond = (req2.advance || 0) - (req1.advance || 0);
  log(`requests: ${perSecond} advance calls for 1 s of virtual time at real speed; ${slowPerSecond} in 1 s of real time at 1/100`);
  const clickMenu = async (act, node, choice) => {
    await pg.click(`button[data-act="${act}"][data-node="${node}"]`);
    await pg.waitForSelector('.nv-menu:not([hidden])', { timeout: 5000 });
    await pg.click(`.nv-menu:not([hidden]) ${choice}`);
  };
  await clickMenu('pause', 'aggregate.backup', 'button[data-us="300000"]');
  await clickMenu('partition', 'filter', 'button[data-peer="aggregate"]');
  await pg.evaluate(() => window.hapairDemo.setSpeed(1));
  await pg.evaluate((t) => window.hapairDemo.runTo(t), 1400000);
  await pg.click('button[data-act="crash"][data-node="aggregate"]');
  await poll(pg, 'buttons: aggregate dead', () => { const n = window.hapairDemo.state().nodes[0].find((x) => x.name === 'aggregate'); return n && !n.alive; }, null, 10000);
  await pg.evaluate((t) => window.hapairDemo.runTo(t), 1700000);
  await pg.waitForSelector('button[data-act="restart"][data-node="aggregate"]:not([hidden])', { timeout: 10000 });
  await pg.click('button[data-act="restart"][data-node="aggregate"]');
  const restartAt = await poll(pg, 'buttons: the restart recorded', () => {
    const f = window.hapairDemo.state().faults[0].find((x) => x.kind === 'restart');
    return f ? f.at_us : null;
  }, null, 10000);
  await pg.evaluate(() => window.hapairDemo.play());
  await poll(pg, 'buttons: the pair restored after the restart',
    (t) => window.hapairDemo.narration(0).some((it) => it.kind === 'pair_restored' && it.t >= t) || null, restartAt, 30000);
  await pg.evaluate(() => window.hapairDemo.pause());
  const fb = (await pg.evaluate(() => window.hapairDemo.state().faults))[0].map((f) => `${f.kind} ${f.node}${f.peer ? `-${f.peer}` : ''}${f.duration_us ? ` ${f.duration_us}us` : ''}`);
  log(`buttons: ${fb.join(', ')}`);
  const want = ['pause aggregate.backup 300000us', 'partition filter-aggregate 300000us', 'crash aggregate', 'restart aggregate'];
  if (JSON.stringify(fb) !== JSON.stringify(want)) throw new TestFailure(`buttons: recorded faults ${JSON.stringify(fb)}, expected ${JSON.stringify(want)}`);
  assertNoErrors(pg, 'node buttons');

  // ---- 1c. a live switch from the page: the aggregate from passive to active standby at 1 s
  //          (a refused choice first, explained), then a kill at 2 s; the output stays precise ----
  await pg.evaluate(() => window.hapairDemo.start({ network: 'default', approach: 'passive', compare: '', seed: 1, duration_s: 6, speed: 1, running: false }));
  await pg.evaluate(() => window.hapairDemo.runTo(1000000));
  await pg.select('select[data-fragment="aggregate"]', 'amnesia');
  await pg.click('button[data-act="switch"][data-fragment="aggregate"]');
  const refusal = await poll(pg, 'switch: the refusal shown on the page', () => {
    const n = document.querySelector('.pane-switch .switch-note');
    return n && n.textContent ? n.textContent : null;
  }, null, 10000);
  if (!/amnesia.*cannot be switched to live; allowed: upstream, passive, active, hybrid/.test(refusal)) throw new TestFailure(`switch: the refusal of amnesia does not explain the valid choices: "${refusal}"`);
  if ((await pg.evaluate(() => window.hapairDemo.state().switches[0])).length !== 0) throw new TestFailure('switch: a refused switch was recorded');
  await pg.select('select[data-fragment="aggregate"]', 'active');
  await pg.click('button[data-act="switch"][data-fragment="aggregate"]');
  const made = await poll(pg, 'switch: recorded', () => { const w = window.hapairDemo.state().switches[0]; return w.length ? w : null; }, null, 10000);
  if (made.length !== 1 || made[0].fragment !== 'aggregate' || made[0].to !== 'active' || Math.abs(made[0].at_us - 1000000) > 1000)
    throw new TestFailure(`switch: recorded ${JSON.stringify(made)}`);
  await pg.evaluate(() => window.hapairDemo.runTo(1300000));
  const nSw = await narration(pg);
  const switchTold = nSw.filter((it) => it.kind === 'approach_switch');
  log(`switch: ${switchTold.map((it) => `${(it.t / 1e6).toFixed(6)} ${it.text}`).join(' | ')}`);
  if (switchTold.length < 2 || !switchTold.some((it) => /aggregate switches its fragment/.test(it.text)) || !switchTold.some((it) => /aggregate\.backup follows/.test(it.text)))
    throw new TestFailure(`switch: the story does not tell the primary's switch and its standby following: ${JSON.stringify(switchTold)}`);
  const nowShown = await pg.evaluate(() => document.querySelector('.pane-switch .switch-now[data-fragment="aggregate"]').textContent);
  if (!/active/i.test(nowShown)) throw new TestFailure(`switch: the page shows the aggregate's approach as "${nowShown}"`);
  const sSw = (await summary(pg))[0];
  if (!(sSw.markers.approach_switch >= 2)) throw new TestFailure(`switch: no switch marks on the timeline: ${JSON.stringify(sSw.markers)}`);
  await pg.evaluate(() => window.hapairDemo.runTo(2000000));
  await pg.evaluate(() => window.hapairDemo.kill('aggregate'));
  await pg.evaluate(() => window.hapairDemo.runTo(8000000));
  await poll(pg, 'switch: the run ends', () => window.hapairDemo.state().ended || null, null, 60000);
  const endSw = (await summary(pg))[0];
  log(`switch then kill: strip ${JSON.stringify(endSw.strip)}; markers ${JSON.stringify(endSw.markers)}`);
  if (!(endSw.markers.takeover >= 1)) throw new TestFailure(`switch: no takeover after the kill: ${JSON.stringify(endSw.markers)}`);
  if (endSw.strip.missing !== 0 || endSw.strip.duplicate !== 0 || endSw.strip.differing !== 0 || !(endSw.strip.exact > 0))
    throw new TestFailure(`switch: the output is not precise after a live switch and a kill: ${JSON.stringify(endSw.strip)}`);
  assertNoErrors(pg, 'live switch');
  await screenshot(pg, path.join(shots, 'hapair-demo-switch.png'));

  // ---- 2. amnesia: kill with the node's own button, tuples go missing ----
  await pg.evaluate(() => window.hapairDemo.start({ approach: 'amnesia', compare: '', seed: 1, duration_s: 6, speed: 1, running: false }));
  await pg.evaluate(() => window.hapairDemo.runTo(2000000));
  const btn = await pg.$('button[data-act="crash"][data-node="aggregate"]');
  if (!btn) throw new TestFailure('amnesia: no Kill button on aggregate');
  await btn.click();
  await poll(pg, 'amnesia: the kill button killed aggregate', () => {
    const n = window.hapairDemo.state().nodes[0].find((x) => x.name === 'aggregate');
    return n && !n.alive;
  }, null, 10000);
  await pg.evaluate(() => window.hapairDemo.play());
  const tkA = await settleAfterTakeover(pg, 'amnesia');
  const sA = (await summary(pg))[0];
  log(`amnesia: takeover at ${tkA} µs; strip ${JSON.stringify(sA.strip)}`);
  if (!(sA.strip.missing > 0)) throw new TestFailure(`amnesia: ${sA.strip.missing} missing tuples 1 s after the takeover (expected > 0)`);
  assertNoErrors(pg, 'amnesia');

  // ---- 3. side by side, rewind, step ----
  await pg.evaluate(() => window.hapairDemo.start({ approach: 'passive', compare: 'amnesia', seed: 1, duration_s: 6, speed: 1, running: false }));
  await pg.evaluate(() => window.hapairDemo.runTo(2000000));
  await pg.evaluate(() => window.hapairDemo.kill('aggregate', 0));
  const f2 = await pg.evaluate(() => window.hapairDemo.state().faults);
  if (f2.length !== 2 || f2[0].length !== 1 || f2[1].length !== 1 || f2[0][0].node !== 'aggregate' || f2[1][0].node !== 'aggregate')
    throw new TestFailure(`side by side: one kill should hit each side's aggregate: ${JSON.stringify(f2)}`);
  await pg.evaluate(() => window.hapairDemo.play());
  await settleAfterTakeover(pg, 'side by side (passive)', 0);
  await settleAfterTakeover(pg, 'side by side (amnesia)', 1);
  const s2 = await summary(pg);
  log(`side by side: ${s2.map((s) => `${s.approach} ${JSON.stringify(s.strip)}`).join(' | ')}`);
  if (s2[0].strip.missing !== 0 || !(s2[1].strip.missing > 0)) throw new TestFailure('side by side: expected 0 missing for passive, > 0 for amnesia');
  fps.push(await pg.evaluate(() => window.hapairDemo.fps));
  await pg.evaluate(() => window.scrollTo(0, 0));
  await screenshot(pg, path.join(shots, 'hapair-demo-side-by-side.png'));

  // Rewind to 1.5 s: new sessions replaying the kill.
  const before = await pg.evaluate(() => window.hapairDemo.state().sessions);
  await pg.evaluate(() => window.hapairDemo.seek(1500000));
  const r = await pg.evaluate(() => window.hapairDemo.state());
  if (Math.abs(r.now_us - 1500000) > 1000) throw new TestFailure(`rewind: now is ${r.now_us} µs, not 1.5 s`);
  if (r.sessions.some((s, i) => s === before[i])) throw new TestFailure('rewind: the sessions were not replaced');
  const s3 = await summary(pg);
  if (s3.some((s) => s.markers.takeover)) throw new TestFailure('rewind: a takeover before 1.5 s?');
  let last = r.now_us;
  for (let i = 0; i < 5; i++) {
    await pg.evaluate(() => window.hapairDemo.step());
    const t = await pg.evaluate(() => window.hapairDemo.state().now_us);
    if (t < last) throw new TestFailure(`step went back in time: ${last} → ${t}`);
    last = t;
  }
  await pg.evaluate(() => window.hapairDemo.setSpeed(1));
  await pg.evaluate(() => window.hapairDemo.runTo(2600000));
  const s4 = await summary(pg);
  if (!s4.every((s) => s.markers.takeover >= 1)) throw new TestFailure(`rewind: the recorded kill was not replayed: ${JSON.stringify(s4.map((s) => s.markers))}`);
  log(`rewind to 1.5 s and replay: takeovers ${s4.map((s) => s.markers.takeover).join(', ')}`);
  assertNoErrors(pg, 'side by side');

  // ---- 4. the guided tour (sped up 40×, each step shown briefly) ----
  await pg.evaluate(() => window.hapairDemo.tour('passive', { auto: true, dwellMs: 150, speedScale: 40 }));
  await poll(pg, 'the tour reaches its last step', () => {
    const t = window.hapairDemo.state().tour;
    return t && t.step === t.steps - 1 && t.waiting;
  }, null, 120000);
  const nT = await narration(pg);
  const tourText = nT.map((it) => it.text).join('\n');
  for (const kind of ['failure', 'detection', 'takeover', 'replay_request', 'pair_restored'])
    if (!nT.some((it) => it.kind === kind)) throw new TestFailure(`tour: nothing told about ${kind}:\n${tourText}`);
  log(`tour told ${nT.length} moments, e.g. "${(nT.find((it) => /re-sends/.test(it.text)) || nT.find((it) => it.kind === 'takeover')).text}"`);
  await pg.evaluate(() => window.hapairDemo.endTour());
  assertNoErrors(pg, 'tour');

  // ---- 4b. the guided tour of a hybrid switch: a stall makes the standby active, then the crash ----
  await pg.evaluate(() => window.hapairDemo.tour('hybrid', { auto: true, dwellMs: 150, speedScale: 40 }));
  await poll(pg, 'the hybrid tour reaches its last step', () => {
    const t = window.hapairDemo.state().tour;
    return t && t.step === t.steps - 1 && t.waiting;
  }, null, 120000);
  const nH = await narration(pg);
  const hybridText = nH.map((it) => it.text).join('\n');
  const switched = nH.findIndex((it) => it.kind === 'hybrid_switch' && / active \(/.test(it.text));
  const killed = nH.findIndex((it) => it.kind === 'failure' && /KILL|killed|crash/i.test(it.text));
  if (switched < 0) {
    const st = await pg.evaluate(() => JSON.stringify(window.hapairDemo.state()).slice(0, 3000));
    throw new TestFailure(`hybrid tour: no switch to active told (${nH.length} moments):\n${hybridText}\nstate: ${st}`);
  }
  if (killed >= 0 && killed < switched) throw new TestFailure(`hybrid tour: the crash came before the switch:\n${hybridText}`);
  for (const kind of ['failure', 'detection', 'takeover'])
    if (!nH.some((it) => it.kind === kind)) throw new TestFailure(`hybrid tour: nothing told about ${kind}:\n${hybridText}`);
  log(`hybrid tour: "${nH[switched].text}"`);
  await pg.evaluate(() => window.hapairDemo.endTour());
  assertNoErrors(pg, 'hybrid tour');

  // ---- 4c. the guided tour of global checkpoints: checkpoints complete, the crash, the rollback ----
  await pg.evaluate(() => window.hapairDemo.tour('checkpoint', { auto: true, dwellMs: 150, speedScale: 40 }));
  await poll(pg, 'the global checkpoints tour reaches its last step', () => {
    const t = window.hapairDemo.state().tour;
    return t && t.step === t.steps - 1 && t.waiting;
  }, null, 120000);
  const nC = await narration(pg);
  const ckText = nC.map((it) => it.text).join('\n');
  for (const kind of ['checkpoint_rollback', 'takeover', 'checkpoint_restore'])
    if (!nC.some((it) => it.kind === kind)) throw new TestFailure(`global checkpoints tour: nothing told about ${kind}:\n${ckText}`);
  const stC = await pg.evaluate(() => window.hapairDemo.status());
  if (!/declares global checkpoint \d+ complete/.test(stC.checkpoint || '')) throw new TestFailure(`global checkpoints tour: no completed checkpoint in the status: ${JSON.stringify(stC)}`);
  log(`global checkpoints tour: "${nC.find((it) => it.kind === 'checkpoint_rollback').text}"`);
  await pg.evaluate(() => window.hapairDemo.endTour());
  assertNoErrors(pg, 'global checkpoints tour');

  // ---- 5. real processes (served by hapair demo only): start, SIGKILL aggregate, its timeline ----
  if (backend === 'http' && !args.includes('--no-real')) {
    await pg.evaluate(() => { document.getElementById('approach').value = 'passive'; document.getElementById('duration').value = '4'; });
    await pg.click('#real-open');
    await pg.click('#real-start');
    await poll(pg, 'real run: a Kill button on aggregate', () => document.querySelector('#real-nodes button[data-node="aggregate"]') ? true : null, null, 30000);
    await new Promise((res) => setTimeout(res, 800));
    await pg.click('#real-nodes button[data-node="aggregate"]');
    await poll(pg, 'real run: aggregate shown dead', () => [...document.querySelectorAll('#real-nodes .real-node.dead b')].some((b) => b.textContent === 'aggregate') || null, null, 20000);
    await poll(pg, 'real run: done, its timeline embedded', () => document.querySelector('#real-timeline iframe') ? true : null, null, 90000);
    const frame = await poll(pg, 'real run: the timeline page', () => {
      const f = document.querySelector('#real-timeline iframe');
      const w = f && f.contentWindow;
      return w && w.hapairTimeline && w.hapairTimeline.ready ? w.hapairTimeline.summary() : null;
    }, null, 30000);
    log(`real run: aggregate SIGKILLed; its timeline shows ${JSON.stringify(frame.strip)}, markers ${JSON.stringify(frame.markers)}`);
    if (!(frame.markers.failure >= 1)) throw new TestFailure('real run: the timeline shows no failure');
    assertNoErrors(pg, 'real processes');
  }

  const good = fps.filter((f) => f > 0);
  log(`live view: ${good.map((f) => f.toFixed(1)).join(', ')} frames per second (measured by the page over 3 s)`);
  log(`screenshots: ${path.join(shots, 'hapair-demo-passive.png')}, ${path.join(shots, 'hapair-demo-side-by-side.png')}`);
  log('ok');
} catch (err) {
  failed = err;
} finally {
  await browser.close();
}
if (failed) {
  console.error(`demo_test: FAILED: ${failed instanceof TestFailure ? failed.message : failed.stack || failed}`);
  process.exit(1);
}

#!/usr/bin/env node
// Checks a run folder's timeline.html against the run's own files (docs/TIMELINE.md):
//
//   node tests/browser/timeline_test.mjs RUN_DIR [--screenshot PATH]
//
// Opens RUN_DIR/timeline.html in headless Chromium, waits for window.hapairTimeline.ready and
// checks: the lanes are the run's nodes (trace.jsonl and the embedded nodes), the output strip's
// counts are summary.json's semantics (lost, duplicates, differing; exact = reference - lost),
// one takeover marker per takeover event and one detection marker per detection event in
// trace.jsonl, one shaded fault per failure event, the embedded events are trace.jsonl's;
// then clicks a strip cell (the lineage panel must show it), zooms and pans. Any console or
// page error fails the test. Prints renderMs (time to the first full render; not asserted).
// Exit 0 when every check holds, 1 on a mismatch or a page error, 2 on bad usage.
import fs from 'node:fs';
import path from 'node:path';
import { launch, openPage, waitForHook, assertNoErrors, screenshot, TestFailure } from './lib.mjs';

function usage(msg) {
  if (msg) console.error(`timeline_test: ${msg}`);
  console.error('usage: node timeline_test.mjs RUN_DIR [--screenshot PATH]');
  process.exit(2);
}

const argv = process.argv.slice(2);
let runDir = null;
let shot = null;
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--screenshot') shot = argv[++i] || usage('--screenshot needs a path');
  else if (argv[i].startsWith('-')) usage(`unknown option ${argv[i]}`);
  else if (runDir === null) runDir = argv[i];
  else usage('one RUN_DIR');
}
if (!runDir) usage();

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new TestFailure(`cannot read ${file}: ${err.message}`);
  }
}
function readTrace(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new TestFailure(`cannot read ${file}: ${err.message}`);
  }
  return text.split('\n').filter((l) => l.trim()).map((l, i) => {
    try {
      return JSON.parse(l);
    } catch (err) {
      throw new TestFailure(`${file}:${i + 1}: not JSON: ${err.message}`);
    }
  });
}

const failures = [];
const check = (ok, what) => {
  if (!ok) failures.push(what);
  return ok;
};
const sameSet = (a, b) => a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');

async function main() {
  const page_ = path.join(runDir, 'timeline.html');
  if (!fs.existsSync(page_)) throw new TestFailure(`no ${page_}`);
  const summary = readJson(path.join(runDir, 'summary.json'));
  const trace = readTrace(path.join(runDir, 'trace.jsonl'));
  const sem = summary.semantics;
  if (!sem) throw new TestFailure('summary.json has no semantics');
  const countKind = (k) => trace.filter((e) => e.kind === k).length;

  const browser = await launch({ width: 1600, height: 1000 });
  try {
    const page = await openPage(browser, page_);
    const hook = await waitForHook(page, 'hapairTimeline');
    const got = await page.evaluate(() => window.hapairTimeline.summary());
    const embedded = await page.evaluate(() => {
      const d = JSON.parse(document.getElementById('hapair-run').textContent);
      return { nodes: (d.nodes || []).map((n) => n.name), events: (d.events || []).length,
               kinds: (d.events || []).map((e) => e.kind).join(','), format: d.format };
    });
    assertNoErrors(page, 'after the first render');
    if (!got) throw new TestFailure('hapairTimeline.summary() returned nothing (the page carries no run?)');

    // Lanes: every node of the run, once.
    const traceNodes = [...new Set(trace.map((e) => e.node).filter((n) => n !== 'launcher'))];
    const nodes = [...new Set([...embedded.nodes, ...traceNodes])];
    check(sameSet(got.lanes, nodes), `lanes ${JSON.stringify(got.lanes)} != the run's nodes ${JSON.stringify(nodes)}`);
    check(new Set(got.lanes).size === got.lanes.length, `a node has two lanes: ${JSON.stringify(got.lanes)}`);
    check(sameSet(embedded.nodes, traceNodes),
          `the page's nodes[] ${JSON.stringify(embedded.nodes)} are not the nodes of trace.jsonl ${JSON.stringify(traceNodes)}`);
    // The embedded events are trace.jsonl's.
    check(embedded.events === trace.length, `the page carries ${embedded.events} events, trace.jsonl has ${trace.length}`);
    check(embedded.kinds === trace.map((e) => e.kind).join(','), 'the embedded events are not trace.jsonl\'s (kinds or order differ)');
    check(embedded.format === 'hapair-timeline/1', `format ${embedded.format}, expected hapair-timeline/1`);

    // Strip counts against the checker.
    const s = got.strip;
    check(s.missing === sem.lost, `strip missing ${s.missing} != semantics.lost ${sem.lost}`);
    check(s.duplicate === sem.duplicates, `strip duplicate ${s.duplicate} != semantics.duplicates ${sem.duplicates}`);
    check(s.differing === sem.differing, `strip differing ${s.differing} != semantics.differing ${sem.differing}`);
    check(s.exact === sem.reference_tuples - sem.lost,
          `strip exact ${s.exact} != reference_tuples - lost = ${sem.reference_tuples} - ${sem.lost}`);
    if (sem.delivered_tuples !== undefined)
      check(got.outputs === sem.delivered_tuples, `outputs ${got.outputs} != semantics.delivered_tuples ${sem.delivered_tuples}`);

    // Markers and faults against the trace: every event of the kinds docs/TIMELINE.md lists
    // has its marker (a node's, not the launcher's).
    const MARKED = ['takeover', 'detection', 'replay_request', 'replay_start', 'replay_end', 'checkpoint',
                    'checkpoint_installed', 'pair_restored', 'fenced', 'standby_lost', 'held_output_released',
                    // global checkpoints: barriers from the coordinator, snapshots, completion, rollback, restore
                    'checkpoint_triggered', 'checkpoint_snapshot', 'checkpoint_completed', 'checkpoint_rollback',
                    'checkpoint_restore'];
    for (const kind of MARKED) {
      const want = trace.filter((e) => e.kind === kind && e.node !== 'launcher').length;
      const have = got.markers[kind] || 0;
      check(have === want, `${kind} markers drawn ${have} != ${kind} events in trace.jsonl ${want}`);
    }
    check(got.faults === countKind('failure'), `fault shadings ${got.faults} != failure events in trace.jsonl ${countKind('failure')}`);

    // Interaction: click a strip cell (a duplicate, differing or missing one when there is one).
    const status = ['duplicate', 'differing', 'missing', 'exact'].find((k) => s[k] > 0);
    if (status) {
      const pos = await page.evaluate((st) => {
        const v = window.hapairTimeline.view;
        const p = v.stripCellPosition(st, 0);
        return p && { x: p.x, y: p.y + window.scrollY };
      }, status);
      if (check(pos, `no position for the first ${status} cell`)) {
        await page.evaluate((y) => window.scrollTo(0, Math.max(0, y - 500)), pos.y);
        const sy = await page.evaluate(() => window.scrollY);
        await page.mouse.move(pos.x, pos.y - sy);
        await page.mouse.click(pos.x, pos.y - sy);
        const details = await page.evaluate(() => document.getElementById('details').innerText);
        check(details.includes('lineage') && new RegExp(status, 'i').test(details),
              `clicking the first ${status} cell did not show its lineage; the panel says: ${details.slice(0, 200)}`);
        await page.evaluate(() => window.scrollTo(0, 0));
      }
    }
    if (shot) {
      await screenshot(page, shot);
      console.log(`screenshot: ${shot}`);
    }
    // Zoom (wheel and buttons) and pan (drag) must not raise errors.
    const box = await page.evaluate(() => {
      const r = window.hapairTimeline.view.over.getBoundingClientRect();
      return { x: r.left + r.width * 0.6, y: r.top + 60 };
    });
    await page.mouse.move(box.x, box.y);
    await page.mouse.wheel({ deltaY: -400 });
    await page.mouse.down();
    await page.mouse.move(box.x - 200, box.y, { steps: 5 });
    await page.mouse.up();
    await page.click('#zoom-failure');
    await page.click('#zoom-in');
    await page.click('#latency-scale');
    await page.click('#zoom-all');
    await new Promise((r) => setTimeout(r, 150));
    assertNoErrors(page, 'after zooming and panning');

    console.log(`renderMs: ${hook.renderMs} (${got.outputs} outputs, ${trace.length} events, ${got.lanes.length} lanes)`);
    console.log(`lanes: ${got.lanes.join(', ')}`);
    console.log(`strip: exact ${s.exact}, duplicate ${s.duplicate}, differing ${s.differing}, missing ${s.missing}; ` +
                `markers: ${Object.entries(got.markers).map(([k, v]) => `${k} ${v}`).join(', ')}; faults ${got.faults}`);
  } finally {
    await browser.close();
  }
}

main().then(
  () => {
    if (failures.length) {
      console.error(`timeline_test: FAILED for ${runDir}:\n  ${failures.join('\n  ')}`);
      process.exit(1);
    }
    console.log(`timeline_test: ok (${runDir})`);
  },
  (err) => {
    const all = failures.length ? `\n  ${failures.join('\n  ')}` : '';
    console.error(`timeline_test: FAILED for ${runDir}: ${err instanceof TestFailure ? err.message : err.stack || err}${all}`);
    process.exit(1);
  },
);

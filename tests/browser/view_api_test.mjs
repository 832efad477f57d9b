#!/usr/bin/env node
// The view's incremental API, as a live page would use it (docs of web/common/timeline_view.js):
// feeds a run's data to a second view piece by piece, in time order, moving the "now" cursor,
// and checks that it ends with what the one-shot page shows (lanes, role segments, markers,
// faults, strip counts, messages); then feeds the events out of order and checks the same.
//
//   node tests/browser/view_api_test.mjs [RUN_DIR]    (default: fixtures/passive_crash)
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, openPage, waitForHook, assertNoErrors, TestFailure } from './lib.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const runDir = process.argv[2] || path.join(here, 'fixtures', 'passive_crash');

const browser = await launch({ width: 1400, height: 900 });
let failed = null;
try {
  const page = await openPage(browser, path.join(runDir, 'timeline.html'));
  await waitForHook(page, 'hapairTimeline');
  const result = await page.evaluate(async () => {
    const H = window.Hapair;
    const data = JSON.parse(document.getElementById('hapair-run').textContent);
    const state = (v) => ({
      summary: v.summary(),
      segments: v.model.lanes.map((l) => [l.name, l.segments.map((s) => [s.t0, s.t1, s.state])]),
      faults: v.model.faults.map((f) => [f.kind, f.node, f.at_us, f.until_us]),
      messages: v.model.messages.map((m) => [m.kind, m.from, m.to, m.t0, m.t1]),
      replays: v.model.replays.map((r) => [r.lane, r.t0, r.t1]),
    });
    const oneShot = state(window.hapairTimeline.view);

    // Live: the meta without faults (derived from the events as they come), then slices of
    // 100 ms of events and outputs, each followed by setNow and a render.
    const box = document.createElement('div');
    box.style.width = '1200px';
    document.body.append(box);
    const live = new H.TimelineView(box);
    const meta = Object.assign({}, data);
    delete meta.events;
    delete meta.outputs;
    delete meta.missing;
    delete meta.faults;
    live.setRun(meta);
    live.setFollow(true);
    const end = Math.max(data.run.end_us, ...data.events.map((e) => e.t_us), ...data.outputs.map((o) => o.at_us));
    let ei = 0, oi = 0;
    const times = [];
    for (let now = 0; now <= end + 100000; now += 100000) {
      const evs = [], outs = [];
      while (ei < data.events.length && data.events[ei].t_us <= now) evs.push(data.events[ei++]);
      while (oi < data.outputs.length && data.outputs[oi].at_us <= now) outs.push(data.outputs[oi++]);
      live.addEvents(evs);
      live.addOutputs(outs);
      live.setNow(now);
      const a = performance.now();
      live.renderNow();
      times.push(performance.now() - a);
    }
    live.addMissing(data.missing);
    live.setNow(null);
    live.renderNow();
    const incremental = state(live);

    // Out of order: the events in two halves, the later half first.
    const box2 = document.createElement('div');
    document.body.append(box2);
    const shuffled = new H.TimelineView(box2);
    shuffled.setRun(meta);
    const half = Math.floor(data.events.length / 2);
    shuffled.addEvents(data.events.slice(half));
    shuffled.addEvents(data.events.slice(0, half));
    shuffled.addOutputs(data.outputs);
    shuffled.addMissing(data.missing);
    shuffled.renderNow();
    const outOfOrder = state(shuffled);
    return { oneShot, incremental, outOfOrder, maxFrameMs: Math.max(...times), frames: times.length };
  });
  assertNoErrors(page, 'feeding the view');
  const problems = [];
  for (const name of ['incremental', 'outOfOrder']) {
    for (const key of Object.keys(result.oneShot)) {
      const a = JSON.stringify(result.oneShot[key]);
      const b = JSON.stringify(result[name][key]);
      if (a !== b) problems.push(`${name}: ${key} differs from the one-shot page:\n      one-shot ${a.slice(0, 300)}\n      ${name} ${b.slice(0, 300)}`);
    }
  }
  if (problems.length) throw new TestFailure(problems.join('\n  '));
  console.log(`view_api_test: ok (${result.frames} live frames, slowest ${result.maxFrameMs.toFixed(1)} ms)`);
} catch (err) {
  failed = err;
} finally {
  await browser.close();
}
if (failed) {
  console.error(`view_api_test: FAILED: ${failed instanceof TestFailure ? failed.message : failed.stack || failed}`);
  process.exit(1);
}

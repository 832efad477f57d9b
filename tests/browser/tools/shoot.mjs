#!/usr/bin/env node
// Screenshots of a timeline page in a few states, for looking at it by eye:
//   node tools/shoot.mjs PAGE.html OUT_PREFIX [--width 1600] [--height 1000]
// writes OUT_PREFIX-run.png (whole run), -failover.png ("Show the failover") and
// -zoom.png (zoomed in further around the failover, where message lines appear).
import { launch, openPage, waitForHook, assertNoErrors, screenshot } from '../lib.mjs';

const [page_, prefix, ...rest] = process.argv.slice(2);
if (!page_ || !prefix) {
  console.error('usage: node tools/shoot.mjs PAGE.html OUT_PREFIX [--width W] [--height H]');
  process.exit(2);
}
const opt = (name, dflt) => { const i = rest.indexOf(name); return i >= 0 ? Number(rest[i + 1]) : dflt; };
const browser = await launch({ width: opt('--width', 1600), height: opt('--height', 1000) });
try {
  const page = await openPage(browser, page_);
  const hook = await waitForHook(page, 'hapairTimeline');
  console.log(`renderMs ${hook.renderMs}`);
  await screenshot(page, `${prefix}-run.png`);
  const t = async (label, fn) => {
    const ms = await page.evaluate(fn);
    console.log(`${label}: ${ms.toFixed(1)} ms`);
  };
  await t('focusFailure + render', () => { const v = window.hapairTimeline.view; const a = performance.now(); v.focusFailure(); v.renderNow(); return performance.now() - a; });
  await screenshot(page, `${prefix}-failover.png`);
  await t('zoom x0.25 + render', () => { const v = window.hapairTimeline.view; const a = performance.now(); v.zoom(0.25, v.model.firstFailureUs ?? undefined); v.renderNow(); return performance.now() - a; });
  await screenshot(page, `${prefix}-zoom.png`);
  await t('whole run render', () => { const v = window.hapairTimeline.view; const a = performance.now(); v.fit(); v.renderNow(); return performance.now() - a; });
  assertNoErrors(page);
} finally {
  await browser.close();
}

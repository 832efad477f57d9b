#!/usr/bin/env node
// web/inline.mjs follows its rules (which hapair's C++ writer mirrors): only whole lines of the
// two exact forms are inlined, relative to the template's folder; "</script" / "</style" in an
// inlined file and every "</" in the data are escaped; the placeholder must appear exactly once;
// "$&"-like text in the data is kept as it is. Then the assembled page is opened in Chromium and
// the embedded JSON must read back exactly.
//   node tests/browser/inline_test.mjs
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { launch, openPage, assertNoErrors } from './lib.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const inline = path.join(here, '..', '..', 'web', 'inline.mjs');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hapair-inline-'));
const w = (p, text) => { fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true }); fs.writeFileSync(path.join(dir, p), text); };

try {
  w('lib/a.js', 'window.A = "</script><b>";\nconsole.log("a loaded");');
  w('lib/s.css', 'body::after { content: "</style>"; }');
  w('page/b.js', 'window.B = JSON.parse(document.getElementById("hapair-run").textContent);');
  w('page/t.html', [
    '<!DOCTYPE html><html><head>',
    '  <link rel="stylesheet" href="../lib/s.css">',
    '<link rel="stylesheet" href="../lib/s.css" media="print">',
    '</head><body>',
    '<script id="hapair-run" type="application/json">/*HAPAIR_RUN_JSON*/</script>',
    '\t<script src="../lib/a.js"></script>',
    '<script src="b.js"></script> <!-- kept: not alone on its line -->',
    '<script src="b.js"></script>',
    '</body></html>',
  ].join('\n'));
  const data = { title: 'a </script> and <!-- <script> and $& and $1 and \u2028 and é', n: [1, 2.5, -3], nested: { s: '</SCRIPT>' } };
  w('data.json', JSON.stringify(data, null, 1));
  execFileSync('node', [inline, path.join(dir, 'page/t.html'), path.join(dir, 'data.json'), path.join(dir, 'out.html')]);
  const out = fs.readFileSync(path.join(dir, 'out.html'), 'utf8');

  assert.ok(out.includes('<style>\nbody::after { content: "<\\/style>"; }\n</style>'), 'the stylesheet line is inlined, "</style" escaped');
  assert.ok(out.includes('<link rel="stylesheet" href="../lib/s.css" media="print">'), 'another form of link is kept');
  assert.ok(out.includes('<script>\nwindow.A = "<\\/script><b>";'), 'an indented script line is inlined, "</script" escaped');
  assert.ok(out.includes('<script src="b.js"></script> <!-- kept'), 'a script line with more on it is kept');
  assert.equal((out.match(/<script>\nwindow\.B/g) || []).length, 1, 'the exact script line is inlined once');
  assert.ok(!out.includes('/*HAPAIR_RUN_JSON*/'), 'the placeholder is replaced');
  assert.ok(out.includes('$& and $1'), '"$&" in the data is kept');
  const start = out.indexOf('<script id="hapair-run" type="application/json">') + '<script id="hapair-run" type="application/json">'.length;
  const embedded = out.slice(start, out.indexOf('</script>', start));
  assert.ok(!embedded.includes('</') && !embedded.includes('<!--'), 'no "</" or "<!--" inside the embedded JSON');
  assert.deepEqual(JSON.parse(embedded), data, 'the embedded JSON reads back');

  // Failures: no placeholder, two placeholders, a missing file, bad JSON.
  const fails = (template, json, what) => {
    w('x.html', template);
    w('x.json', json);
    let code = 0;
    try {
      execFileSync('node', [inline, path.join(dir, 'x.html'), path.join(dir, 'x.json'), path.join(dir, 'x.out')], { stdio: 'pipe' });
    } catch (err) {
      code = err.status;
    }
    assert.equal(code, 1, `${what}: exit 1`);
  };
  fails('<p>no placeholder</p>', '{}', 'no placeholder');
  fails('/*HAPAIR_RUN_JSON*/ /*HAPAIR_RUN_JSON*/', '{}', 'two placeholders');
  fails('<script src="nope.js"></script>\n/*HAPAIR_RUN_JSON*/', '{}', 'a missing file');
  fails('/*HAPAIR_RUN_JSON*/', '{"a":', 'bad JSON');

  // The browser reads the data back and runs both scripts (a template without the kept lines,
  // which point to files beside the template, not beside the page).
  w('page/t2.html', fs.readFileSync(path.join(dir, 'page/t.html'), 'utf8').split('\n')
    .filter((l) => !l.includes('media="print"') && !l.includes('kept')).join('\n'));
  execFileSync('node', [inline, path.join(dir, 'page/t2.html'), path.join(dir, 'data.json'), path.join(dir, 'out2.html')]);
  const browser = await launch();
  try {
    const page = await openPage(browser, path.join(dir, 'out2.html'));
    const got = await page.evaluate(() => ({ a: window.A, b: window.B }));
    assertNoErrors(page, 'the assembled page');
    assert.equal(got.a, '</script><b>');
    assert.deepEqual(got.b, data);
    // The template itself, opened as it is (its scripts by relative path), says it has no run.
    const raw = await openPage(browser, path.join(here, '..', '..', 'web', 'timeline', 'timeline.html'));
    await raw.waitForFunction(() => window.hapairTimeline && window.hapairTimeline.ready, { timeout: 10000 });
    assert.equal(await raw.evaluate(() => window.hapairTimeline.empty), true, 'the bare template knows it carries no run');
    assertNoErrors(raw, 'the bare template');
  } finally {
    await browser.close();
  }
  console.log('inline_test: ok');
} catch (err) {
  console.error(`inline_test: FAILED: ${err.message}`);
  process.exitCode = 1;
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}

// Browser test kit for hapair's pages: the system Chromium driven by puppeteer-core (no
// browser is ever downloaded), a fresh profile per launch, and a page that fails the test on
// any console error, page error, failed request or request to the network (the pages must be
// self-contained: no CDN).
//
//   const b = await launch();
//   const page = await openPage(b, 'file:///…/timeline.html');   // or http://…
//   … page.evaluate(…) …
//   page.hapairErrors   // [] or the messages collected so far
//   await screenshot(page, '/tmp/shot.png');
//   await b.close();   // also removes the profile
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import puppeteer from 'puppeteer-core';

export const CHROMIUM = process.env.HAPAIR_CHROMIUM || '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

export class TestFailure extends Error {}

export async function launch({ width = 1600, height = 1000, deviceScaleFactor = 1 } = {}) {
  if (!fs.existsSync(CHROMIUM)) throw new TestFailure(`no Chromium at ${CHROMIUM} (set HAPAIR_CHROMIUM)`);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'hapair-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [...CHROMIUM_ARGS, `--user-data-dir=${profile}`],
    defaultViewport: { width, height, deviceScaleFactor },
  });
  const close = browser.close.bind(browser);
  browser.close = async () => {
    try {
      await close();
    } finally {
      fs.rmSync(profile, { recursive: true, force: true });
    }
  };
  return browser;
}

// A path or URL to a URL: files become file:// URLs.
export function toUrl(target) {
  if (/^(file|https?):\/\//.test(target)) return target;
  return pathToFileURL(path.resolve(target)).href;
}

// Opens the URL in a new page that records every console error, page error and failed
// request in page.hapairErrors. For a file:// page any http(s) request is an error as well.
export async function openPage(browser, target, { timeoutMs = 30000 } = {}) {
  const url = toUrl(target);
  const page = await browser.newPage();
  const errors = [];
  page.hapairErrors = errors;
  const local = url.startsWith('file://');
  page.on('console', (msg) => {
    if (msg.type() === 'error') {
      const loc = msg.location();
      errors.push(`console error: ${msg.text()}${loc && loc.url ? ` (${loc.url}:${loc.lineNumber})` : ''}`);
    }
  });
  page.on('pageerror', (err) => errors.push(`page error: ${err && err.stack ? err.stack : err}`));
  page.on('requestfailed', (req) => errors.push(`request failed: ${req.url()} (${req.failure() ? req.failure().errorText : '?'})`));
  page.on('request', (req) => {
    const u = req.url();
    if (local && /^(https?|wss?):/.test(u)) errors.push(`network request from a self-contained page: ${u}`);
  });
  await page.goto(url, { waitUntil: 'load', timeout: timeoutMs });
  return page;
}

// Fails (throws TestFailure) when the page recorded an error.
export function assertNoErrors(page, when) {
  if (page.hapairErrors.length)
    throw new TestFailure(`${when ? `${when}: ` : ''}the page reported errors:\n  ${page.hapairErrors.join('\n  ')}`);
}

export async function screenshot(page, file) {
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

// Waits until window[name].ready (or .error) is set; returns the hook's plain fields.
export async function waitForHook(page, name, timeoutMs = 30000) {
  try {
    await page.waitForFunction((n) => window[n] && (window[n].ready || window[n].error), { timeout: timeoutMs, polling: 50 }, name);
  } catch (err) {
    assertNoErrors(page, `waiting for window.${name}`);
    throw new TestFailure(`window.${name}.ready was not set within ${timeoutMs} ms`);
  }
  const hook = await page.evaluate((n) => ({ ready: window[n].ready, error: window[n].error || null, renderMs: window[n].renderMs }), name);
  if (hook.error) throw new TestFailure(`the page failed: ${hook.error}\n  ${page.hapairErrors.join('\n  ')}`);
  return hook;
}

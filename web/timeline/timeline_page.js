// timeline.html: reads the run embedded in the page (docs/TIMELINE.md), draws it with the
// shared view (web/common) and sets the test hook window.hapairTimeline. Errors go to the
// console (tests fail on any) and to a box on the page.
(function () {
  'use strict';
  const H = window.Hapair;
  const $ = (id) => document.getElementById(id);

  function fail(err) {
    console.error('hapair timeline:', err);
    const box = document.createElement('div');
    box.className = 'error-box';
    box.textContent = `This timeline could not be drawn: ${err && err.message ? err.message : err}`;
    $('timeline').before(box);
    window.hapairTimeline = { ready: false, error: String(err && err.message ? err.message : err) };
  }

  function readRun() {
    const el = $('hapair-run');
    const text = el ? el.textContent.trim() : '';
    // The template's placeholder (written in two parts: this file is inlined into the page
    // before the placeholder is replaced, and it must not contain it).
    if (!text || text === '/*HAPAIR_' + 'RUN_JSON*/') return null;
    const data = JSON.parse(text);
    if (!data || typeof data !== 'object') throw new Error('the embedded run is not a JSON object');
    if (data.format && !/^hapair-timeline\/1$/.test(data.format)) console.warn(`hapair timeline: unknown format ${data.format}`);
    return data;
  }

  function main() {
    const data = readRun();
    if (!data) {
      $('header').innerHTML = '<h1>hapair timeline</h1><p>This is the page template: it carries no run. ' +
        'hapair writes a filled-in timeline.html beside every run (or: node web/inline.mjs TEMPLATE DATA.json OUT.html).</p>';
      window.hapairTimeline = { ready: true, renderMs: performance.now(), empty: true, summary: () => null };
      return;
    }
    const view = new H.TimelineView($('timeline'));
    view.setRun(data);
    view.addEvents(data.events || []);
    view.addOutputs(data.outputs || []);
    view.addMissing(data.missing || []);
    view.fit();
    view.renderNow();

    H.renderHeader($('header'), view.model);
    H.renderLegend($('legend'), view.model);
    H.renderMoments($('moments'), view.model, view);
    new H.DetailsPanel($('details'), view);
    document.title = `${data.title || 'run'} — hapair timeline`;

    const range = $('range');
    const showRange = () => {
      range.textContent = `${H.fmtTime(Math.max(0, view.t0), H.niceStep((view.t1 - view.t0) / 10))} – ` +
                          `${H.fmtTime(view.t1, H.niceStep((view.t1 - view.t0) / 10))} (${H.fmtDuration(view.t1 - view.t0)})`;
    };
    view.on('range', showRange);
    showRange();
    $('zoom-in').addEventListener('click', () => view.zoom(0.5));
    $('zoom-out').addEventListener('click', () => view.zoom(2));
    $('zoom-all').addEventListener('click', () => view.fit());
    const failureButton = $('zoom-failure');
    if (view.model.firstFailureUs === null) failureButton.disabled = true;
    failureButton.addEventListener('click', () => view.focusFailure());
    const scale = $('latency-scale');
    scale.addEventListener('click', () => {
      view.setLatencyScale(view.latencyScale === 'log' ? 'linear' : 'log');
      scale.textContent = `Latency: ${view.latencyScale === 'log' ? 'log' : 'linear'}`;
    });

    // The layout above the view may have moved it: draw once more, synchronously, then measure.
    view.renderNow();
    const renderMs = performance.now();
    window.hapairTimeline = {
      ready: true,
      renderMs: Math.round(renderMs * 10) / 10,
      summary: () => view.summary(),
      view,
    };
  }

  try {
    main();
  } catch (err) {
    fail(err);
  }
})();

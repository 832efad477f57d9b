// hapair web views: the panels around the timeline: the header (title, verdict, counts, run
// facts), the legend (only what the run contains, plus the output statuses) and the list of
// key moments (the failover story, each a link that zooms the view to it).
(function () {
  'use strict';
  const H = window.Hapair;
  const E = (s) => H.escapeHtml(s);

  H.renderHeader = function (el, model) {
    const r = model.run || {};
    const c = model.counts();
    const v = H.VERDICTS[r.verdict] || { label: String(r.verdict || 'not judged').toUpperCase(), color: '#777', text: '#fff', words: '' };
    const facts = [
      ['driver', r.driver === 'sim' ? 'simulator' : r.driver === 'real' ? 'real processes' : r.driver],
      ['HA', r.ha !== undefined ? H.haWords(r.ha) : undefined],
      ['network', r.network],
      ['seed', r.seed],
      ['sources ran', r.duration_us !== undefined ? H.fmtDuration(r.duration_us) : undefined],
      ['run ended at', r.end_us !== undefined ? H.fmtTime(r.end_us, 1000) : undefined],
      ['completed', r.completed === undefined ? undefined : r.completed ? 'yes' : 'NO'],
      ['trace level', r.trace_level],
      ['compared', r.multiset_compare === undefined ? undefined : r.multiset_compare ? 'as multisets' : 'as multisets and in order'],
      ['version', r.version],
    ].filter((f) => f[1] !== undefined && f[1] !== null);
    const mismatch = (name, shown, claimed) =>
      claimed !== undefined && claimed !== shown ? ` <span class="hp-warn" title="the run says ${E(claimed)}, the page counts ${E(shown)}">(run says ${E(claimed)})</span>` : '';
    const count = (label, n, claimed, status) =>
      `<span class="hp-count${n ? ' hp-count-bad' : ''}"><span class="hp-chip" style="background:${H.STATUSES[status].color}"></span>${E(label)} <b>${H.fmtNumber(n)}</b>${mismatch(label, n, claimed)}</span>`;
    el.innerHTML =
      `<h1>${E(model.title || 'hapair run')}</h1>` +
      `<div class="hp-verdict-row">` +
      `<span class="hp-verdict" style="background:${v.color};color:${v.text}">${E(v.label)}</span>` +
      `<span class="hp-verdict-words">${E(v.words)}</span>` +
      count('lost', c.missing, r.lost, 'missing') +
      count('duplicates', c.duplicate, r.duplicates, 'duplicate') +
      count('differing', c.differing, r.differing, 'differing') +
      `<span class="hp-count">reference <b>${H.fmtNumber(r.reference_tuples !== undefined ? r.reference_tuples : c.exact + c.missing)}</b> · delivered <b>${H.fmtNumber(model.outputs.length)}</b></span>` +
      `</div>` +
      `<div class="hp-facts">${facts.map(([k, val]) => `<span><span class="hp-muted">${E(k)}</span> ${E(val)}</span>`).join('')}</div>`;
  };

  function glyphCanvas(shape, color, size) {
    const c = document.createElement('canvas');
    const dpr = window.devicePixelRatio || 1;
    c.width = 26 * dpr;
    c.height = 26 * dpr;
    c.style.width = '26px';
    c.style.height = '26px';
    const ctx = c.getContext('2d');
    ctx.scale(dpr, dpr);
    H.drawGlyph(ctx, shape, 13, 13, Math.max(6, Math.min(9, H.SIZES[size] || 8)), color);
    return c;
  }

  function item(content, text) {
    const span = document.createElement('span');
    span.className = 'hp-legend-item';
    span.append(content);
    const t = document.createElement('span');
    t.textContent = text;
    span.append(t);
    return span;
  }
  function swatch(fill, extraClass) {
    const s = document.createElement('span');
    s.className = `hp-swatch ${extraClass || ''}`;
    s.style.background = fill;
    return s;
  }
  function group(title) {
    const g = document.createElement('div');
    g.className = 'hp-legend-group';
    const h = document.createElement('span');
    h.className = 'hp-legend-title';
    h.textContent = title;
    g.append(h);
    return g;
  }

  H.renderLegend = function (el, model) {
    el.textContent = '';
    const states = new Set();
    for (const l of model.lanes) for (const s of l.segments) states.add(s.state);
    const roles = group('Lanes');
    for (const name of Object.keys(H.STATES)) {
      if (!states.has(name)) continue;
      const st = H.STATES[name];
      roles.append(item(swatch(st.fill, st.hatch ? 'hp-swatch-hatch' : ''), name === 'dead' ? 'dead (crashed)' : st.label));
    }
    el.append(roles);

    const faultKinds = new Set(model.faults.map((f) => f.kind));
    if (faultKinds.size) {
      const g = group('Faults (shaded)');
      for (const k of faultKinds) g.append(item(swatch(H.hexAlpha(H.faultOf(k).color, 0.45), 'hp-swatch-hatch'), `${H.faultOf(k).label}: ${H.faultOf(k).words}`));
      el.append(g);
    }

    const kinds = Object.keys(model.markerCounts);
    const marks = group('Markers (hover or click one)');
    const shown = new Set();
    const order = Object.keys(H.MARKERS);
    kinds.sort((a, b) => order.indexOf(a) - order.indexOf(b));
    for (const k of kinds) {
      const st = H.MARKERS[k];
      if (!st || shown.has(k)) continue;
      shown.add(k);
      if (k === 'failure') {
        for (const f of faultKinds) {
          const s = H.markerStyle({ kind: 'failure', fault: f });
          marks.append(item(glyphCanvas(s.shape, s.color, 'major'), `${H.faultOf(f).label} begins`));
        }
        continue;
      }
      marks.append(item(glyphCanvas(st.shape, st.color, st.size), st.legend || k.replace(/_/g, ' ')));
    }
    if (model.replays.length) marks.append(item(swatch(H.OI.blue, 'hp-swatch-thin'), 'replayed tuples arriving'));
    el.append(marks);

    const msgKinds = new Set(model.messages.map((m) => m.kind));
    if (msgKinds.size) {
      const g = group('Messages (zoom in)');
      for (const k of Object.keys(H.MESSAGES)) {
        if (!msgKinds.has(k)) continue;
        const st = H.MESSAGES[k];
        const line = swatch(st.color, st.dash.length ? 'hp-swatch-line hp-swatch-dashed' : 'hp-swatch-line');
        line.style.borderColor = st.color;
        line.style.background = 'transparent';
        g.append(item(line, st.label));
      }
      el.append(g);
    }

    const out = group('Output tuples');
    for (const s of H.STATUS_ORDER) {
      const it = item(swatch(H.STATUSES[s].color), H.STATUSES[s].label);
      it.title = H.STATUSES[s].words;
      out.append(it);
    }
    el.append(out);
  };

  const MOMENT_KINDS = new Set(['failure', 'resume', 'restart', 'heal', 'detection', 'takeover', 'replay_start',
                                'replay_end', 'replay_gap', 'pair_restored', 'fenced', 'standby_lost',
                                'held_output_released', 'rebased', 'fatal', 'exited', 'rejoined', 'end_of_output']);

  // The failover story: the key events in time order, each zooming the view to it.
  H.renderMoments = function (el, model, view, limit) {
    const max = limit || 60;
    const list = model.markers.filter((mk) => MOMENT_KINDS.has(mk.e.kind));
    el.textContent = '';
    const h = document.createElement('h2');
    h.textContent = 'Key moments';
    el.append(h);
    if (!list.length) {
      const p = document.createElement('p');
      p.className = 'hp-muted';
      p.textContent = 'No fault, detection or takeover in this run.';
      el.append(p);
      return;
    }
    const ol = document.createElement('ol');
    ol.className = 'hp-moments';
    for (const mk of list.slice(0, max)) {
      const li = document.createElement('li');
      const a = document.createElement('a');
      a.href = '#';
      const f = model.faultBefore(mk.t);
      const since = f && mk.t !== f.at_us && mk.e.kind !== 'end_of_output' ? `+${H.fmtDuration(mk.t - f.at_us)} after the ${H.faultOf(f.kind).label}` : '';
      const glyph = glyphCanvas(mk.style.shape, mk.style.color, mk.style.size);
      const time = document.createElement('span');
      time.className = 'hp-moment-time';
      time.textContent = H.fmtTime(mk.t);
      if (since) {
        const d = document.createElement('small');
        d.textContent = since;
        time.append(d);
      }
      const text = document.createElement('span');
      text.textContent = H.describeEvent(mk.e);
      a.append(glyph, time, text);
      a.addEventListener('click', (ev) => {
        ev.preventDefault();
        view.focus(mk.t, Math.max(40000, (view.t1 - view.t0 < 400000 ? view.t1 - view.t0 : 100000)));
        view.select({ kind: 'marker', marker: mk });
      });
      li.append(a);
      ol.append(li);
    }
    el.append(ol);
    if (list.length > max) {
      const p = document.createElement('p');
      p.className = 'hp-muted';
      p.textContent = `and ${list.length - max} more on the timeline`;
      el.append(p);
    }
  };
})();

// hapair demo: the live page. Picks a network and an approach (or two, side by side), runs the
// simulator paced (real time down to 1/100), pauses, steps event by event, rewinds (a new session
// replaying the user's faults: the simulator is deterministic), injects faults from the buttons on
// each node, tells the story from the trace events, runs a guided tour per approach, and, served
// by `hapair demo`, starts real processes and kills them.
//
// Pacing: one animation frame moves virtual time by (real ms × speed); the page asks the
// simulator to `advance` only when an event lies before the new time (next_event_us), at most one
// request at a time, so a slow backend makes the page lag, never pile up requests. The network
// view draws every frame; the timeline views are fed and redrawn ~8 times a second.
//
// Test hook: window.hapairDemo (see the end of this file).
(function () {
  'use strict';
  const H = window.Hapair;
  const $ = (id) => document.getElementById(id);
  const E = (s) => H.escapeHtml(s);

  const SPEEDS = [[1, '1'], [0.5, '1/2'], [0.2, '1/5'], [0.1, '1/10'], [0.05, '1/20'], [0.02, '1/50'], [0.01, '1/100']];
  const TIMELINE_EVERY_MS = 125;
  const SEEK_CHUNK_US = 1000000;
  const STORY_LINES = 5;

  const app = {
    backend: null, networks: [], approaches: [], switchable: [],
    panes: [], running: false, speed: 1, now: 0, ended: false, busy: 0,
    pendingUs: 0, stopAt: null, stopWaiters: [], lastFrame: null, frameTimes: [], fps: 0,
    config: null, tour: null, lastFlush: 0, real: null, scrubbing: false, toastTimer: 0,
    calls: {},
  };

  // ---- one request at a time ----
  let chain = Promise.resolve();
  function exclusive(fn) {
    app.busy++;
    const run = chain.then(fn).finally(() => { app.busy--; });
    chain = run.catch(() => {});
    return run;
  }
  async function call(req) {
    app.calls[req.op] = (app.calls[req.op] || 0) + 1;
    const r = await app.backend.call(req);
    if (!r || typeof r !== 'object') throw new Error(`${req.op}: no answer`);
    return r;
  }
  function fail(err) {
    const msg = err && err.message ? err.message : String(err);
    const box = $('error');
    setRunning(false);
    if (!box.hidden && box.textContent === msg) return;  // once, not every frame
    box.hidden = false;
    box.textContent = msg;
    console.error('hapair demo:', msg);
  }
  function toast(text) {
    let t = document.querySelector('.toast');
    if (!t) { t = document.createElement('div'); t.className = 'toast'; t.setAttribute('role', 'status'); document.body.append(t); }
    t.textContent = text;
    t.hidden = false;
    clearTimeout(app.toastTimer);
    app.toastTimer = setTimeout(() => { t.hidden = true; }, 3500);
  }

  // ---- a pane: one session of one approach (its network view, story and timeline) ----
  class Pane {
    constructor(index) {
      this.index = index;
      this.el = document.createElement('section');
      this.el.className = 'pane';
      this.el.innerHTML =
        '<div class="pane-head"><h2></h2><span class="counts"></span><span class="pane-faults"></span></div>' +
        '<div class="pane-switch"></div>' +
        '<div class="net"></div>' +
        '<div class="story" aria-live="polite"><ol></ol></div>' +
        '<div class="status-line"></div>' +
        '<div class="timeline-wrap"></div>' +
        '<div class="below"><section class="hp-details"></section><section class="hp-moments-panel"></section></div>';
      $('panes').append(this.el);
      this.title = this.el.querySelector('h2');
      this.countsEl = this.el.querySelector('.counts');
      this.faultsEl = this.el.querySelector('.pane-faults');
      this.switchEl = this.el.querySelector('.pane-switch');
      this.storyEl = this.el.querySelector('.story ol');
      this.statusEl = this.el.querySelector('.status-line');
      this.net = new H.NetworkView(this.el.querySelector('.net'), { onAction: (a) => nodeAction(this.index, a) });
      this.view = new H.TimelineView(this.el.querySelector('.timeline-wrap'), { laneHeight: 40, chartHeight: 64, stripRowHeight: 22, gutter: 200 });
      this.view.setFollow(true);
      this.details = new H.DetailsPanel(this.el.querySelector('.hp-details'), this.view);
      this.momentsEl = this.el.querySelector('.hp-moments-panel');
      this.session = null;
      this.faults = [];
      this.switches = [];  // live switches made ({fragment, to, at_us}), replayed by a rewind like the faults
      this.switchNote = '';  // why the last switch was refused
      this.buf = { events: [], outputs: [], missing: [] };
      this.narrator = new H.Narrator({}, {});
      this.meta = { nodes: [], fragments: [], streams: [] };
      this.now = 0;
      this.next = null;
      this.ended = false;
    }

    destroy() { this.el.remove(); }

    async create(cfg, approach, faults, switches) {
      if (this.session !== null) {
        const old = this.session;
        this.session = null;
        await call({ op: 'close', session: old }).catch(() => {});
      }
      const req = { op: 'create', network: cfg.network, ha: approach, seed: cfg.seed, duration_s: cfg.duration_s };
      if (faults && faults.length) req.faults = faults.map((f) => Object.assign({}, f));
      if (switches && switches.length) req.switches = switches.map((w) => Object.assign({}, w));
      const r = await call(req);
      if (r.error) throw new Error(`create (${approach}): ${r.error}`);
      this.approach = approach;
      this.session = r.session;
      this.meta = r.meta;
      this.faults = (faults || []).slice();
      this.switches = (switches || []).slice();
      this.switchNote = '';
      this.now = 0;
      this.next = 0;
      this.ended = false;
      this.buf = { events: [], outputs: [], missing: [] };
      this.dirtyView = true;
      this.storyDirty = true;
      this.markerCount = -1;
      this.title.textContent = H.haWords(approach);
      this.narrator = new H.Narrator(this.meta, { onItem: () => { this.storyDirty = true; } });
      this.net.setRun(this.meta);
      this.net.setSpeed(app.speed);
      if (this.view.clear) this.view.clear();
      this.view.setRun(this.meta);
      this.view.setNow(0);
      this.view.select(null);
      this.setSpan(true);
      this.renderFaults();
      this.renderSwitches();
    }

    durationUs() { return (this.meta && this.meta.run && this.meta.run.duration_us) || 6e6; }

    // The timeline's visible span follows the speed: the whole run at real time, 250 ms at 1/100.
    setSpan(fromStart) {
      const span = Math.max(40000, Math.min(this.durationUs() * 1.06, app.speed * 25e6));
      const now = app.now;
      if (fromStart || now < span * 0.8) this.view.setRange(-span * 0.01, span * 0.99);
      else this.view.setRange(now - span * 0.8, now + span * 0.2);
    }

    ingest(ans, opts) {
      if (ans.error) throw new Error(`${this.approach}: ${ans.error}`);
      this.now = ans.now_us;
      this.next = ans.next_event_us === undefined ? null : ans.next_event_us;
      this.ended = !!ans.ended;
      const b = this.buf;
      if (ans.events && ans.events.length) for (const e of ans.events) b.events.push(e);
      if (ans.outputs && ans.outputs.length) for (const o of ans.outputs) b.outputs.push(o);
      if (ans.missing && ans.missing.length) for (const m of ans.missing) b.missing.push(m);
      this.net.update(ans, opts);
      this.narrator.feed(ans);
      if (app.tour) tourWatch(this, ans);
      this.dirtyView = true;
    }

    flush() {
      const b = this.buf;
      if (b.events.length) { this.view.addEvents(b.events); b.events = []; }
      if (b.outputs.length) { this.view.addOutputs(b.outputs); b.outputs = []; }
      if (b.missing.length) { this.view.addMissing(b.missing); b.missing = []; }
      this.view.setNow(app.now);
      this.dirtyView = false;
      const c = this.view.model.counts();
      const chip = (status, n) => `<span class="${n && status !== 'exact' ? 'bad' : ''}"><span class="hp-chip" style="background:${H.STATUSES[status].color}"></span>${E(H.STATUSES[status].label)} <b>${H.fmtNumber(n)}</b></span>`;
      const html = H.STATUS_ORDER.map((s) => chip(s, c[s])).join('');
      if (html !== this.countsHtml) { this.countsEl.innerHTML = html; this.countsHtml = html; }
      const mk = this.view.model.markers.length;
      if (mk !== this.markerCount) {
        this.markerCount = mk;
        H.renderMoments(this.momentsEl, this.view.model, this.view, 40);
      }
    }

    renderStory(realNow) {
      if (!this.storyDirty) return;
      this.storyDirty = false;
      const items = this.narrator.latest(STORY_LINES, 'major');
      const fresh = this.narrator.seq - 3;
      this.storyEl.innerHTML = items.length
        ? items.map((it) => `<li class="${it.updated > fresh && app.running ? 'new' : ''}"><span class="t">${E(H.fmtTime(it.t, 1))}</span> ${E(it.text)}${it.since ? `<span class="since"> (${E(it.since)})</span>` : ''}</li>`).join('')
        : '<li class="muted">Nothing has gone wrong yet. Use the buttons on a node to kill, pause or cut it off.</li>';
      const st = this.narrator.status;
      this.statusEl.textContent = [st.snapshot, st.checkpoint, st.trim].filter(Boolean).join('  ·  ');
    }

    renderFaults() {
      this.faultsEl.textContent = this.faults.length
        ? `faults: ${this.faults.map((f) => `${f.kind} ${f.node}${f.peer ? `–${f.peer}` : ''} at ${H.fmtTime(f.at_us, 1000)}${f.duration_us ? ` for ${H.fmtDuration(f.duration_us)}` : ''}`).join('; ')}`
        : '';
    }

    // The approach fragment `frag` runs now: its last live switch's, else the plan's.
    approachOf(frag) {
      let a = (this.fragment(frag) || {}).ha || this.approach;
      for (const w of this.switches) if (w.fragment === frag) a = w.to;
      return a;
    }

    // Live switching (docs/DEMO.md): per operator fragment its approach now, a choice of every
    // approach (those that cannot switch live say so; choosing one is refused by the simulator
    // with the valid choices, shown here) and a Switch button; then the switches made so far.
    renderSwitches() {
      const el = this.switchEl;
      el.textContent = '';
      const frags = (this.meta.fragments || []).filter((f) => f.kind === 'operators');
      if (!frags.length) return;
      const title = document.createElement('span');
      title.className = 'switch-title';
      title.textContent = 'Switch live:';
      el.append(title);
      for (const f of frags) {
        const now = this.approachOf(f.name);
        const wrap = document.createElement('span');
        wrap.className = 'switch-frag';
        const cur = document.createElement('span');
        cur.className = 'switch-now';
        cur.dataset.fragment = f.name;
        cur.textContent = `${f.name} (${H.haWords(now)}) to`;
        const sel = document.createElement('select');
        sel.dataset.fragment = f.name;
        sel.setAttribute('aria-label', `the approach to switch ${f.name} to`);
        for (const a of app.approaches) {
          const o = new Option(H.haWords(a) + (app.switchable.includes(a) ? '' : ' (cannot switch live)'), a);
          if (a === now) o.disabled = true;
          sel.append(o);
        }
        const pick = app.switchable.find((a) => a !== now);
        if (pick) sel.value = pick;
        const b = document.createElement('button');
        b.type = 'button';
        b.dataset.act = 'switch';
        b.dataset.fragment = f.name;
        b.textContent = 'Switch';
        b.title = `switch ${f.name}'s approach now, while the query runs (allowed: ${app.switchable.map((a) => H.haWords(a)).join(', ')})`;
        b.addEventListener('click', () => switchAction(this.index, f.name, sel.value));
        wrap.append(cur, sel, b);
        el.append(wrap);
      }
      const made = document.createElement('span');
      made.className = 'switch-made';
      made.textContent = this.switches.length
        ? `switches: ${this.switches.map((w) => `${w.fragment} to ${H.haWords(w.to)} at ${H.fmtTime(w.at_us, 1000)}`).join('; ')}`
        : '';
      el.append(made);
      const note = document.createElement('span');
      note.className = 'switch-note';
      note.setAttribute('role', 'status');
      note.textContent = this.switchNote ? `refused: ${this.switchNote}` : '';
      el.append(note);
    }

    fragmentOf(node) { const n = (this.meta.nodes || []).find((x) => x.name === node); return n ? n.fragment : null; }
    fragment(name) { return (this.meta.fragments || []).find((f) => f.name === name) || null; }
    nodesOf(frag) { return (this.meta.nodes || []).filter((n) => n.fragment === frag).map((n) => n.name); }
    currentPrimary(frag) { const f = this.fragment(frag); return f ? this.net.currentPrimary(f) : null; }
    nodeState(name) { return this.net.nodeState.get(name) || null; }
  }

  // A node of one pane, in another pane: the fragment's current primary if it is the primary,
  // else the other node of that fragment (the standby or spare; for a restart, a dead one).
  function mapNode(src, node, dst, kind) {
    if (src === dst) return node;
    const frag = src.fragmentOf(node);
    if (!frag) return null;
    const names = dst.nodesOf(frag);
    if (!names.length) return null;
    if (names.length === 1 && src.nodesOf(frag).length === 1) return names[0];
    const srcCur = src.currentPrimary(frag), dstCur = dst.currentPrimary(frag);
    const planned = ((src.meta.nodes || []).find((n) => n.name === node) || {}).planned;
    const rank = (name) => {
      const s = dst.nodeState(name);
      const p = ((dst.meta.nodes || []).find((n) => n.name === name) || {}).planned;
      let r = p === planned ? 1 : 0;
      if (kind === 'restart') r += s && !s.alive ? 4 : 0; else r += s && s.alive ? 2 : 0;
      return r;
    };
    if (kind === 'restart') return names.filter((n) => { const s = dst.nodeState(n); return s && !s.alive; }).sort((a, b) => rank(b) - rank(a))[0] || null;
    if (node === srcCur) return dstCur;
    const others = names.filter((n) => n !== dstCur).sort((a, b) => rank(b) - rank(a));
    return others[0] || null;
  }

  // ---- running the sessions in lock-step ----
  function minNext() {
    let m = null;
    for (const p of app.panes) if (!p.ended && p.next !== null && p.next !== undefined && (m === null || p.next < m)) m = p.next;
    return m;
  }
  function allEnded() { return app.panes.length > 0 && app.panes.every((p) => p.ended); }

  async function advanceAll(to, opts) {
    const t = Math.max(0, Math.round(to));
    const answers = await Promise.all(app.panes.map((p) => (p.ended && p.now >= t ? null : call({ op: 'advance', session: p.session, to_us: t }))));
    const realNow = performance.now();
    answers.forEach((a, i) => { if (a) app.panes[i].ingest(a, Object.assign({ realNow }, opts || {})); });
    app.now = Math.max(app.now, Math.min(t, Math.max(...app.panes.map((p) => p.now))));
    afterAnswers();
  }

  async function stepAll() {
    const t = minNext();
    if (t === null) { await advanceAll(app.now + 1000); return; }
    const answers = await Promise.all(app.panes.map((p) => {
      if (p.ended) return null;
      if (p.next === t) return call({ op: 'step', session: p.session });
      return call({ op: 'advance', session: p.session, to_us: t });
    }));
    const realNow = performance.now();
    answers.forEach((a, i) => { if (a) app.panes[i].ingest(a, { realNow }); });
    app.now = Math.max(app.now, ...app.panes.map((p) => p.now));
    afterAnswers();
  }

  function afterAnswers() {
    for (const p of app.panes) p.net.setNow(app.now);
    if (allEnded() && !app.ended) {
      app.ended = true;
      setRunning(false);
      toast('The run ended.');
      reachedStop();
      return;
    }
    if (app.stopAt !== null && app.now >= app.stopAt) reachedStop();
  }

  function reachedStop() {
    app.stopAt = null;
    setRunning(false);
    flushAll();
    const w = app.stopWaiters;
    app.stopWaiters = [];
    for (const fn of w) fn(app.now);
  }

  // Everything before app.now reaches the sessions: a fault happens at the moment shown.
  async function syncSessions() {
    if (app.panes.some((p) => !p.ended && p.now < app.now)) await advanceAll(app.now, { animate: true });
  }

  function flushAll() {
    for (const p of app.panes) p.flush();
    app.lastFlush = performance.now();
    renderLegend();
  }

  // ---- the frame loop ----
  function frame(ts) {
    requestAnimationFrame(frame);
    const dt = app.lastFrame === null ? 0 : Math.min(100, ts - app.lastFrame);
    app.lastFrame = ts;
    let drew = false;
    try {
      if (app.running && app.panes.length && !app.ended) {
        const maxLag = Math.max(2000, app.speed * 250000);
        app.pendingUs = Math.min(app.pendingUs + dt * 1000 * app.speed, maxLag);
        if (!app.busy) {
          let target = app.now + app.pendingUs;
          if (app.stopAt !== null) target = Math.min(target, app.stopAt);
          const next = minNext();
          if (target > app.now) {
            app.pendingUs = 0;
            if (next !== null && target < next) {
              // Nothing happens before the next event: time moves on the page alone.
              app.now = target;
              for (const p of app.panes) p.net.setNow(target);
              if (app.stopAt !== null && app.now >= app.stopAt) reachedStop();
            } else {
              exclusive(() => advanceAll(target, { animate: true })).catch(fail);
            }
          } else if (app.stopAt !== null && app.now >= app.stopAt) reachedStop();
        }
      }
      // The network views draw while anything moves; a paused, still picture is not redrawn.
      for (const p of app.panes) {
        p.net.setPaused(!app.running);
        if (app.running || p.animating || p.net.dirty) {
          p.animating = p.net.draw(ts);
          drew = app.running;
        }
        p.renderStory(ts);
      }
      const dirty = app.panes.some((p) => p.dirtyView);
      if (dirty && (ts - app.lastFlush >= TIMELINE_EVERY_MS || !app.running)) flushAll();
      renderClock();
      if (app.tour) renderTour(false);
    } catch (err) {
      fail(err);
    }
    // The live view's frame rate: frames drawn while the run plays, over the last 3 s.
    if (drew) {
      const ft = app.frameTimes;
      ft.push(ts);
      while (ft.length && ts - ft[0] > 3000) ft.shift();
      app.fps = ft.length > 1 ? Math.round(((ft.length - 1) * 1000) / (ft[ft.length - 1] - ft[0]) * 10) / 10 : 0;
    }
  }

  // ---- controls ----
  function setRunning(on) {
    const was = app.running;
    app.running = !!on && !app.ended && app.panes.length > 0;
    if (app.running && !was) app.frameTimes = [];
    app.pendingUs = 0;
    const b = $('play');
    b.textContent = app.running ? '❚❚ Pause' : app.ended ? '⟲ Ended' : '▶ Play';
    b.disabled = !app.panes.length || app.ended;
    $('step').disabled = !app.panes.length || app.ended || app.running;
    if (!app.running) flushAll();
  }

  function setSpeed(s) {
    app.speed = s;
    for (const b of $('speeds').children) b.classList.toggle('on', Number(b.dataset.speed) === s);
    for (const p of app.panes) { p.net.setSpeed(s); p.setSpan(false); }
  }

  function renderClock() {
    const t = app.now;
    const sp = SPEEDS.find(([v]) => v === app.speed);
    const text = app.panes.length ? `t = ${H.fmtTime(t, 1)}` : 't = –';
    const small = app.panes.length ? (app.ended ? ' ended' : app.running ? ` ×${sp ? sp[1] : app.speed}` : ' paused') : '';
    const html = `${E(text)}<small>${E(small)}</small>`;
    const el = $('clock');
    if (el.dataset.html !== html) { el.innerHTML = html; el.dataset.html = html; }
    const sc = $('scrub');
    if (!app.scrubbing && app.panes.length) {
      const max = Math.max(Number(sc.max), t);
      if (max !== Number(sc.max)) sc.max = String(max);
      if (Math.abs(Number(sc.value) - t) >= 1000) sc.value = String(Math.round(t));
    }
  }

  function readSetup() {
    return {
      network: $('network').value || 'default',
      approach: $('approach').value || 'passive',
      compare: $('compare').value || '',
      seed: Math.max(0, Math.floor(Number($('seed').value) || 0)),
      duration_s: Number($('duration').value) || 6,
    };
  }
  function writeSetup(cfg) {
    const setIf = (id, v) => { if (v === undefined || v === null) return; const el = $(id); if ([...(el.options || [])].some((o) => o.value === String(v)) || el.tagName === 'INPUT') el.value = String(v); };
    setIf('network', cfg.network);
    setIf('approach', cfg.approach);
    setIf('compare', cfg.compare || '');
    setIf('seed', cfg.seed);
    if (cfg.duration_s !== undefined) {
      const d = $('duration');
      if (![...d.options].some((o) => Number(o.value) === Number(cfg.duration_s))) d.append(new Option(`${cfg.duration_s} s`, String(cfg.duration_s)));
      d.value = String(cfg.duration_s);
    }
    const net = app.networks.find((n) => n.name === $('network').value);
    $('network-words').textContent = net ? `${net.title || net.name}${net.description ? ` — ${net.description}` : ''}` : '';
  }

  async function start(opts) {
    const o = opts || {};
    writeSetup(o);
    const cfg = Object.assign(readSetup(), o);
    if (cfg.compare === cfg.approach) cfg.compare = '';
    if (!o.keepTour) endTour();
    $('error').hidden = true;
    await exclusive(async () => {
      app.running = false;
      app.ended = false;
      app.stopAt = null;
      app.now = 0;
      app.pendingUs = 0;
      const approaches = [cfg.approach].concat(cfg.compare ? [cfg.compare] : []);
      while (app.panes.length > approaches.length) app.panes.pop().destroy();
      for (const p of app.panes) {
        if (p.session !== null) { await call({ op: 'close', session: p.session }).catch(() => {}); p.session = null; }
      }
      while (app.panes.length < approaches.length) app.panes.push(new Pane(app.panes.length));
      $('panes').className = `panes${approaches.length > 1 ? ' two' : ''}`;
      app.config = cfg;
      for (let i = 0; i < approaches.length; i++) await app.panes[i].create(cfg, approaches[i], []);
      $('scrub').max = String(Math.round(app.panes[0].durationUs() * 1.25));
      $('scrub').value = '0';
      $('scrub').disabled = false;
      await advanceAll(0, { animate: true });
    });
    if (o.speed !== undefined) setSpeed(o.speed); else setSpeed(app.speed);
    setRunning(o.running !== false);
    flushAll();
  }

  async function nodeAction(paneIndex, action) {
    if (!app.panes.length) return;
    const src = app.panes[paneIndex];
    const notes = [];
    await exclusive(async () => {
      await syncSessions();
      for (const p of app.panes) {
        const node = mapNode(src, action.node, p, action.kind);
        if (!node) { notes.push(`${H.haWords(p.approach)}: no such node to ${action.kind}`); continue; }
        const req = { op: 'fault', session: p.session, kind: action.kind, node };
        if (action.duration_us) req.duration_us = action.duration_us;
        if (action.peer) {
          const peer = mapNode(src, action.peer, p, 'peer');
          if (!peer) { notes.push(`${H.haWords(p.approach)}: no peer like ${action.peer}`); continue; }
          req.peer = peer;
        }
        const r = await call(req);
        if (r.error) throw new Error(`fault on ${node} (${p.approach}): ${r.error}`);
        const f = Object.assign({ kind: action.kind, node, at_us: p.now }, r.fault || {});
        if (req.peer && !f.peer) f.peer = req.peer;
        if (req.duration_us && !f.duration_us) f.duration_us = req.duration_us;
        p.faults.push(f);
        p.renderFaults();
        notes.push(`${action.kind} ${node}${req.peer ? `–${req.peer}` : ''}${app.panes.length > 1 ? ` (${H.haWords(p.approach)})` : ''}`);
      }
      // The fault takes effect at the next microsecond: show it at once.
      await advanceAll(app.now + 1, { animate: true });
    }).catch(fail);
    toast(`${notes.join(' · ')} at ${H.fmtTime(app.now, 1)}`);
  }

  // A live switch of one pane's fragment (only that pane: side by side, the other approach runs
  // on). The simulator replays the run so far with the switch scheduled at the next microsecond.
  async function switchAction(paneIndex, fragment, to) {
    const p = app.panes[paneIndex];
    if (!p) return;
    let note = '';
    await exclusive(async () => {
      await syncSessions();
      const r = await call({ op: 'switch', session: p.session, fragment, to });
      if (r.error) {
        p.switchNote = r.error;
        note = `switch of ${fragment} to ${H.haWords(to)} refused: ${r.error}`;
      } else {
        p.switchNote = '';
        p.switches.push(r.switch);
        note = `${fragment} switches to ${H.haWords(to)}`;
      }
      p.renderSwitches();
      if (!r.error) await advanceAll(app.now + 1, { animate: true });
    }).catch(fail);
    toast(`${note} at ${H.fmtTime(app.now, 1)}`);
  }

  function step() {
    if (!app.panes.length || app.ended) return Promise.resolve();
    setRunning(false);
    return exclusive(() => stepAll()).then(() => flushAll()).catch(fail);
  }

  // Rewind (earlier) or jump ahead (later): a rewind replays the recorded faults in a new session.
  async function seek(t) {
    if (!app.panes.length) return;
    const target = Math.max(0, Math.round(t));
    if (app.tour) endTour();
    const wasRunning = app.running;
    await exclusive(async () => {
      app.running = false;
      app.stopAt = null;
      if (target < app.now) {
        const keep = $('keep-faults').checked;
        app.now = 0;
        app.ended = false;
        for (const p of app.panes) {
          const faults = keep ? p.faults : p.faults.filter((f) => f.at_us <= target);
          const switches = keep ? p.switches : p.switches.filter((w) => w.at_us <= target);
          await p.create(app.config, p.approach, faults, switches);
        }
        await advanceAll(0, { animate: false });
      }
      while (app.now < target && !allEnded()) await advanceAll(Math.min(target, app.now + SEEK_CHUNK_US), { animate: false });
      for (const p of app.panes) p.setSpan(false);
    }).catch(fail);
    flushAll();
    setRunning(wasRunning && !app.ended);
  }

  // Runs until t (or the end) and resolves there, paused.
  function runTo(t) {
    return new Promise((resolve) => {
      if (app.now >= t || app.ended) { resolve(app.now); return; }
      app.stopAt = t;
      app.stopWaiters.push(resolve);
      setRunning(true);
      if (!app.running) { app.stopAt = null; app.stopWaiters = []; resolve(app.now); }
    });
  }

  // ---- the guided tour ----
  function tourFragment(meta) {
    const frags = (meta.fragments || []).filter((f) => f.kind === 'operators');
    const agg = frags.filter((f) => (f.operators || []).some((o) => o.kind === 'aggregate'));
    return (agg.length ? agg[agg.length - 1] : frags[frags.length - 1] || {}).name || 'aggregate';
  }

  async function startTour(ha, opts) {
    endTour();
    const o = Object.assign({ auto: false, dwellMs: 4000, speedScale: 1 }, opts || {});
    const approach = ha || $('approach').value || 'passive';
    await start({ approach, compare: '', running: false, keepTour: true, speed: 1 });
    const p = app.panes[0];
    const steps = H.tourFor(approach, { fragment: tourFragment(p.meta), killAt: 2000000, restartAt: 2500000 });
    app.tour = { approach, steps, i: -1, o, waiting: false, autoTimer: 0, seen: [], cursor: 0, hit: null };
    $('tour-box').hidden = false;
    tourStep(0);
  }

  function endTour() {
    if (!app.tour) return;
    clearTimeout(app.tour.autoTimer);
    app.tour = null;
    app.stopAt = null;
    $('tour-box').hidden = true;
  }

  function tourStep(i) {
    const T = app.tour;
    if (!T) return;
    clearTimeout(T.autoTimer);
    if (i >= T.steps.length) { endTour(); return; }
    T.i = i;
    const s = T.steps[i];
    const p = app.panes[0];
    T.itemStart = p.narrator.items.length;
    T.waiting = false;
    T.hit = null;
    setSpeed(s.speed * T.o.speedScale);
    const u = s.until || {};
    app.stopAt = null;
    if (u.t_us !== undefined) app.stopAt = Math.max(app.now, u.t_us);
    else if (u.orT !== undefined) app.stopAt = Math.max(app.now, u.orT);
    renderTour(true);
    // Nothing more can happen after the end: the step is done as it stands.
    if (app.ended) { tourStepDone(i); return; }
    app.stopWaiters.push(() => tourStepDone(i));
    tourCheck(app.now);
    if (app.stopAt !== null && app.now >= app.stopAt) { reachedStop(); return; }
    setRunning(true);
  }

  // Watches the answers for the running step's condition (an event, missing tuples). Events are
  // kept from the tour's start: a step may be satisfied by an event that came in the same answer
  // as the previous step's (detection and takeover often share a microsecond).
  function tourWatch(pane, ans) {
    const T = app.tour;
    if (!T || pane !== app.panes[0]) return;
    for (const e of ans.events || []) T.seen.push(e);
    tourCheck(ans.now_us);
  }

  function tourCheck(now) {
    const T = app.tour;
    if (!T || T.waiting || T.i < 0 || T.hit !== null) return;
    const u = T.steps[T.i].until || {};
    let at = null;
    if (u.event) {
      for (; T.cursor < T.seen.length; T.cursor++) {
        const e = T.seen[T.cursor];
        if (u.event(e)) { at = e.t_us; T.cursor++; break; }
      }
    } else {
      T.cursor = T.seen.length;
    }
    if (u.missing && app.panes[0].narrator.counts.missing >= u.missing) at = now;
    if (at !== null) {
      T.hit = at;
      const stop = Math.max(at + (u.settleUs || 0), app.now);
      app.stopAt = app.stopAt === null ? stop : Math.max(app.now, Math.min(app.stopAt, stop));
    }
  }

  async function tourStepDone(i) {
    const T = app.tour;
    if (!T || T.i !== i) return;
    const s = T.steps[i];
    if (s.until && s.until.end && !app.ended) { app.stopWaiters.push(() => tourStepDone(i)); setRunning(true); return; }
    if (s.action) {
      const p = app.panes[0];
      const frag = s.action.fragment;
      const node = s.action.kind === 'restart'
        ? p.nodesOf(frag).find((n) => { const st = p.nodeState(n); return st && !st.alive; })
        : p.currentPrimary(frag);
      if (node) await nodeAction(0, { kind: s.action.kind, node, duration_us: s.action.duration_us });
    }
    T.waiting = true;
    renderTour(true);
    if (T.o.auto && i < T.steps.length - 1) T.autoTimer = setTimeout(() => tourStep(i + 1), T.o.dwellMs);
  }

  function renderTour(force) {
    const T = app.tour;
    if (!T || T.i < 0) return;
    const p = app.panes[0];
    const s = T.steps[T.i];
    const key = `${T.i}|${T.waiting}|${p.narrator.seq}`;
    if (!force && key === T.renderKey) return;
    T.renderKey = key;
    $('tour-count').textContent = `${H.haWords(T.approach)} · step ${T.i + 1} of ${T.steps.length}`;
    $('tour-title').textContent = s.title;
    $('tour-text').textContent = s.text;
    const items = p.narrator.items.slice(T.itemStart).filter((it) => it.level === 'major').slice(-6);
    const lines = items.map((it) => `<li><span class="t">${E(H.fmtTime(it.t, 1))}</span> ${E(it.text)}</li>`);
    if (s.showStatus) {
      const st = p.narrator.status;
      for (const x of [st.snapshot, st.checkpoint, st.ack, st.trim]) if (x) lines.push(`<li class="status">${E(x)}</li>`);
    }
    if (s.summary && app.ended) {
      const c = p.view.model.counts();
      lines.push(`<li><b>Result:</b> ${H.fmtNumber(c.exact)} exact, ${H.fmtNumber(c.duplicate)} duplicate, ${H.fmtNumber(c.differing)} differing, ${H.fmtNumber(c.missing)} missing tuples against the failure-free run.</li>`);
    }
    $('tour-said').innerHTML = lines.join('') || (T.waiting ? '' : '<li class="status">running…</li>');
    const next = $('tour-next');
    next.disabled = !T.waiting;
    next.textContent = T.i === T.steps.length - 1 ? 'Finish' : 'Next ›';
  }

  // ---- real processes (hapair demo server only) ----
  async function realStart() {
    const cfg = readSetup();
    const r = await call({ op: 'real_start', network: cfg.network, ha: cfg.approach, duration_s: cfg.duration_s }).catch((e) => ({ error: e.message }));
    if (r.error) { fail(new Error(`real_start: ${r.error}`)); return; }
    if (app.real && app.real.timer) clearInterval(app.real.timer);
    app.real = { run: r.run, cfg, status: null, timer: 0 };
    $('real-what').textContent = `run ${r.run}: ${H.haWords(cfg.approach)} on ${cfg.network}, ${cfg.duration_s} s`;
    $('real-timeline').textContent = '';
    $('real-progress').hidden = false;
    const poll = async () => {
      const R = app.real;
      if (!R || R.run !== r.run) return;
      const st = await call({ op: 'real_status', run: r.run }).catch((e) => ({ error: e.message }));
      if (st.error) { clearInterval(R.timer); fail(new Error(`real_status: ${st.error}`)); return; }
      R.status = st;
      renderReal();
      if (st.state !== 'running') clearInterval(R.timer);
    };
    app.real.timer = setInterval(poll, 500);
    poll();
  }

  function renderReal() {
    const R = app.real;
    const st = R && R.status;
    if (!st) return;
    const frac = st.duration_s ? Math.min(1, (st.elapsed_s || 0) / st.duration_s) : 0;
    $('real-fill').style.width = `${Math.round(frac * 100)}%`;
    $('real-state').textContent = `${st.state}${st.elapsed_s !== undefined ? ` · ${Number(st.elapsed_s).toFixed(1)} s of ${st.duration_s} s` : ''}`;
    const box = $('real-nodes');
    const key = JSON.stringify([st.state, st.nodes]);
    if (box.dataset.key !== key) {
      box.dataset.key = key;
      box.textContent = '';
      for (const n of st.nodes || []) {
        const d = document.createElement('span');
        d.className = `real-node${n.alive ? '' : ' dead'}`;
        const name = document.createElement('b');
        name.textContent = n.name;
        const state = document.createElement('span');
        state.textContent = n.alive ? 'running' : 'dead';
        d.append(name, state);
        if (n.alive && st.state === 'running') {
          const b = document.createElement('button');
          b.type = 'button';
          b.className = 'nv-btn nv-crash';
          b.textContent = 'Kill (SIGKILL)';
          b.dataset.node = n.name;
          b.addEventListener('click', async () => {
            b.disabled = true;
            const r = await call({ op: 'real_kill', run: R.run, node: n.name }).catch((e) => ({ error: e.message }));
            if (r.error) fail(new Error(`real_kill: ${r.error}`)); else toast(`SIGKILL sent to ${n.name}'s process`);
          });
          d.append(b);
        }
        box.append(d);
      }
    }
    if (st.state === 'done' && st.timeline && !$('real-timeline').dataset.src) {
      const wrap = $('real-timeline');
      wrap.dataset.src = st.timeline;
      const a = document.createElement('a');
      a.href = st.timeline;
      a.target = '_blank';
      a.rel = 'noopener';
      a.textContent = 'Open the run\'s timeline in a new tab';
      const f = document.createElement('iframe');
      f.src = st.timeline;
      f.title = 'timeline of the real run';
      wrap.append(a, f);
    }
    if (st.state === 'failed') $('real-state').textContent = `failed${st.error ? `: ${st.error}` : ''}`;
  }

  // ---- legend ----
  function renderLegend() {
    const el = $('legend');
    const p = app.panes[0];
    const model = p ? p.view.model : null;
    const key = model ? `${model.lanes.map((l) => l.segments.length).join(',')}|${Object.keys(model.markerCounts).join(',')}|${model.faults.length}` : '-';
    if (el.dataset.key === key) return;
    el.dataset.key = key;
    el.textContent = '';
    const g = (title) => { const d = document.createElement('div'); d.className = 'hp-legend-group'; const h = document.createElement('span'); h.className = 'hp-legend-title'; h.textContent = title; d.append(h); el.append(d); return d; };
    const item = (grp, node, text) => { const s = document.createElement('span'); s.className = 'hp-legend-item'; const t = document.createElement('span'); t.textContent = text; s.append(node, t); grp.append(s); };
    const dot = (st, r) => {
      const c = document.createElement('canvas');
      const dpr = window.devicePixelRatio || 1;
      c.width = 26 * dpr; c.height = 18 * dpr; c.className = 'legend-dot';
      const ctx = c.getContext('2d');
      ctx.scale(dpr, dpr);
      H.NetworkView.drawDot(ctx, st, 13, 9, r || st.r);
      return c;
    };
    const nodes = g('Network: nodes');
    for (const k of ['primary', 'passive_backup', 'active_backup', 'spare', 'rejoining', 'fenced', 'dead']) {
      const s = document.createElement('span');
      s.className = `hp-swatch${k === 'dead' ? ' hp-swatch-hatch' : ''}`;
      s.style.background = H.STATES[k].fill;
      item(nodes, s, k === 'dead' ? 'dead (crashed)' : H.STATES[k].label);
    }
    const paused = document.createElement('span');
    paused.className = 'hp-swatch hp-swatch-hatch';
    paused.style.background = H.hexAlpha(H.OI.orange, 0.5);
    item(nodes, paused, 'paused');
    const q = document.createElement('span');
    q.className = 'hp-swatch';
    q.style.background = `linear-gradient(90deg, #eef0f2 0 40%, #111 40% 46%, ${H.hexAlpha(H.OI.blue, 0.55)} 46%)`;
    item(nodes, q, 'output queue: ids after the trim mark');
    const msgs = g('Network: messages in flight');
    for (const k of ['tuples', 'replay', 'level0_ack', 'level1_ack', 'checkpoint', 'heartbeat', 'takeover', 'replay_request']) item(msgs, dot(H.PACKETS[k]), H.PACKETS[k].label);
    if (model) {
      const tl = document.createElement('div');
      tl.className = 'hp-legend';
      H.renderLegend(tl, model);
      for (const child of [...tl.children]) {
        const t = child.querySelector('.hp-legend-title');
        if (t) t.textContent = `Timeline: ${t.textContent.toLowerCase()}`;
        el.append(child);
      }
    }
  }

  // ---- wiring ----
  function bind() {
    const sp = $('speeds');
    for (const [v, label] of SPEEDS) {
      const b = document.createElement('button');
      b.type = 'button';
      b.textContent = label;
      b.dataset.speed = String(v);
      b.title = v === 1 ? 'real time' : `${label} of real time`;
      b.addEventListener('click', () => setSpeed(v));
      sp.append(b);
    }
    setSpeed(1);
    $('setup').addEventListener('submit', (ev) => { ev.preventDefault(); start({}).catch(fail); });
    $('network').addEventListener('change', () => writeSetup({}));
    $('play').addEventListener('click', () => setRunning(!app.running));
    $('step').addEventListener('click', () => step());
    $('tour').addEventListener('click', () => startTour($('approach').value).catch(fail));
    $('tour-next').addEventListener('click', () => { if (app.tour && app.tour.waiting) tourStep(app.tour.i + 1); });
    $('tour-end').addEventListener('click', () => { endTour(); setRunning(false); });
    const sc = $('scrub');
    sc.addEventListener('pointerdown', () => { app.scrubbing = true; });
    sc.addEventListener('input', () => { app.scrubbing = true; $('clock').innerHTML = `t → ${E(H.fmtTime(Number(sc.value), 1000))}`; $('clock').dataset.html = ''; });
    sc.addEventListener('change', () => { app.scrubbing = false; seek(Number(sc.value)); });
    $('real-open').addEventListener('click', () => { const b = $('real-box'); b.hidden = !b.hidden; if (!b.hidden) b.scrollIntoView({ behavior: 'smooth' }); });
    $('real-start').addEventListener('click', () => realStart());
    // Leaving the page closes its sessions on the server (they are bounded anyway).
    window.addEventListener('pagehide', () => {
      if (!app.backend || app.backend.kind !== 'http' || !navigator.sendBeacon) return;
      for (const p of app.panes) if (p.session !== null) navigator.sendBeacon(app.backend.url, JSON.stringify({ op: 'close', session: p.session }));
    });
    document.addEventListener('keydown', (ev) => {
      const tag = ev.target && ev.target.tagName;
      if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA' || ev.ctrlKey || ev.metaKey || ev.altKey) return;
      if (ev.key === ' ' && tag !== 'BUTTON') { ev.preventDefault(); if (app.panes.length) setRunning(!app.running); }
      else if (ev.key === 'ArrowRight' && !(ev.target.closest && ev.target.closest('.hp-view'))) { ev.preventDefault(); step(); }
      else if (ev.key === 'n' && app.tour && app.tour.waiting) tourStep(app.tour.i + 1);
    });
  }

  async function init() {
    bind();
    renderLegend();
    requestAnimationFrame(frame);
    app.backend = await H.chooseBackend();
    const kindWords = { http: 'simulator on the hapair demo server', wasm: 'simulator in this page (WebAssembly)' };
    $('backend-kind').textContent = kindWords[app.backend.kind] || `simulator: ${app.backend.kind}`;
    const nets = await call({ op: 'networks' });
    if (nets.error) throw new Error(`networks: ${nets.error}`);
    app.networks = nets.networks || [];
    app.approaches = nets.approaches || [];
    app.switchable = nets.switchable || [];
    const net = $('network'), ap = $('approach'), cmp = $('compare');
    for (const n of app.networks) net.append(new Option(n.title && n.title !== n.name ? `${n.name} — ${n.title}` : n.name, n.name));
    for (const a of app.approaches) { ap.append(new Option(H.haWords(a), a)); cmp.append(new Option(H.haWords(a), a)); }
    if (app.approaches.includes('passive')) ap.value = 'passive';
    writeSetup({});
    if (app.backend.real) $('real-open').hidden = false;
    hook.ready = true;
    hook.backend = app.backend.kind;
    const q = new URLSearchParams(location.search);
    if (q.get('approach') || q.get('start')) {
      const opts = {};
      for (const k of ['network', 'approach', 'compare']) if (q.get(k)) opts[k] = q.get(k);
      if (q.get('seed')) opts.seed = Number(q.get('seed'));
      if (q.get('duration')) opts.duration_s = Number(q.get('duration'));
      if (q.get('tour')) startTour(opts.approach).catch(fail); else start(opts).catch(fail);
    }
  }

  // ---- the test hook ----
  const hook = {
    ready: false,
    error: null,
    backend: null,
    get fps() { return app.fps; },
    state: () => ({
      now_us: app.now, running: app.running, ended: app.ended, speed: app.speed, busy: app.busy > 0,
      approach: app.panes[0] ? app.panes[0].approach : null, approaches: app.panes.map((p) => p.approach),
      session: app.panes[0] ? app.panes[0].session : null, sessions: app.panes.map((p) => p.session),
      faults: app.panes.map((p) => p.faults.slice()),
      switches: app.panes.map((p) => p.switches.slice()),
      switchNotes: app.panes.map((p) => p.switchNote),
      nodes: app.panes.map((p) => [...p.net.nodeState.values()].map((n) => ({ name: n.name, alive: n.alive, paused: n.paused, role: n.role }))),
      tour: app.tour ? { approach: app.tour.approach, step: app.tour.i, steps: app.tour.steps.length, title: app.tour.steps[app.tour.i] ? app.tour.steps[app.tour.i].title : null, waiting: app.tour.waiting } : null,
    }),
    requests: () => Object.assign({}, app.calls),
    summary: () => { flushAll(); return app.panes.map((p) => Object.assign({ approach: p.approach, session: p.session }, p.view.summary())); },
    narration: (pane) => { const p = app.panes[pane || 0]; return p ? p.narrator.items.map((it) => ({ t: it.t, kind: it.kind, text: it.text })) : []; },
    status: (pane) => { const p = app.panes[pane || 0]; return p ? Object.assign({}, p.narrator.status) : null; },
    start: (opts) => start(opts || {}),
    play: () => setRunning(true),
    pause: () => setRunning(false),
    step: () => step(),
    setSpeed: (s) => setSpeed(s),
    seek: (t) => seek(t),
    runTo: (t) => runTo(t),
    kill: (node, pane) => nodeAction(pane || 0, { kind: 'crash', node }),
    fault: (action, pane) => nodeAction(pane || 0, action),
    switchTo: (fragment, to, pane) => switchAction(pane || 0, fragment, to),
    currentPrimary: (fragment, pane) => { const p = app.panes[pane || 0]; return p ? p.currentPrimary(fragment) : null; },
    tour: (ha, opts) => startTour(ha, opts),
    tourNext: () => { if (app.tour && app.tour.waiting) tourStep(app.tour.i + 1); },
    endTour: () => endTour(),
  };
  window.hapairDemo = hook;

  init().catch((err) => {
    hook.error = err && err.message ? err.message : String(err);
    fail(err);
  });
})();

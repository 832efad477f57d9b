// hapair web views: the timeline of a run on canvas, one shared, zoomable time axis for
//   - lanes, one per node, grouped by fragment: the role over time, fault shading, markers
//     (detection, takeover, replay, checkpoints, ...), replay ranges and, zoomed in, messages;
//   - the sink's output rate and the latency of every delivered tuple;
//   - the output strip: every output tuple against the reference (exact, duplicate,
//     differing, missing), one row per status.
// Two stacked canvases: the base one is redrawn when the data or the time range changes, the
// overlay one (cursor, hover, "now", selection) on every mouse move, so hovering stays cheap
// with tens of thousands of tuples. Drawing cost is bounded by what is in view (binary search on
// time-sorted lists) and by pixels (dense rows are drawn per pixel column).
//
// API (all times in µs since the run's start):
//   const view = new Hapair.TimelineView(containerElement, options?)
//   view.setRun(meta)          the JSON's description (title, run, fragments, nodes, streams, faults?)
//   view.addEvents(list)       trace events, in time order (appending later ones is cheap)
//   view.addOutputs(list)      sink deliveries, in delivery order
//   view.addMissing(list)      reference tuples never delivered
//   view.clear()               forgets the run (a live page starting over: setRun again)
//   view.setNow(t | null)      the "now" cursor of a live page; setFollow(true) keeps it in view
//   view.setRange(t0, t1), view.fit(), view.zoom(factor, aroundT?), view.pan(dt),
//   view.focus(t, span?), view.focusFailure()
//   view.setLatencyScale('linear' | 'log')
//   view.render()              draws at the next animation frame; renderNow() draws at once
//   view.on('select', fn)      fn({kind: 'output'|'missing'|'marker'|null, index?, item?, marker?})
//   view.on('range', fn)       fn({t0, t1})
//   view.select(sel)           selects an output {kind:'output', index} (or missing, or null)
//   view.summary()             {lanes, markers, faults, strip, outputs} (the test hook)
//   view.stripCellPosition(status, k)   client {x, y} of the k-th cell of a strip row (tests)
(function () {
  'use strict';
  const H = window.Hapair;

  const DEFAULTS = {
    gutter: 220,       // px, left labels
    rightPad: 18,
    laneHeight: 50,
    groupGap: 12,
    axisHeight: 34,
    chartHeight: 120,
    stripRowHeight: 24,
    font: 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif',
    fontSize: 15,
    minSpanUs: 50,
    messageLimit: 3000,
  };
  const STRIP_ROWS = H.STATUS_ORDER;

  class TimelineView {
    constructor(container, options) {
      this.opts = Object.assign({}, DEFAULTS, options || {});
      this.model = this.opts.model || new H.RunModel();
      this.container = container;
      this.root = document.createElement('div');
      this.root.className = 'hp-view';
      this.root.tabIndex = 0;
      this.base = document.createElement('canvas');
      this.base.className = 'hp-view-base';
      this.over = document.createElement('canvas');
      this.over.className = 'hp-view-overlay';
      this.tip = document.createElement('div');
      this.tip.className = 'hp-tip';
      this.tip.hidden = true;
      this.root.append(this.base, this.over, this.tip);
      container.appendChild(this.root);

      this.t0 = 0;
      this.t1 = 1e6;
      this.fitted = false;
      this.now = null;
      this.follow = false;
      this.selected = null;
      this.mouse = null;
      this.drag = null;
      this.latencyScale = 'linear';
      this.listeners = { select: [], range: [] };
      this.hits = [];
      this.layout = null;
      this.baseDirty = true;
      this.frame = 0;
      this.lastRenderMs = 0;
      this.msgHint = '';
      this.dpr = window.devicePixelRatio || 1;

      this.bindInput();
      if (window.ResizeObserver) {
        this.resizeObserver = new ResizeObserver(() => this.onResize());
        this.resizeObserver.observe(this.root);
      }
      window.addEventListener('resize', () => this.onResize());
    }

    // ---- data ----
    setRun(meta) { this.model.setRun(meta); this.invalidate(); }
    // Forgets the run (a live page rewinding to a new session); setRun and add* start over.
    clear() {
      this.model.reset();
      this.selected = null;
      this.hoverHit = null;
      this.now = null;
      this.fitted = false;
      this.tip.hidden = true;
      this.invalidate();
    }
    addEvents(list) { this.model.addEvents(list); this.invalidate(); }
    addOutputs(list) { this.model.addOutputs(list); this.invalidate(); }
    addMissing(list) { this.model.addMissing(list); this.invalidate(); }
    setNow(t) {
      this.now = t === null || t === undefined ? null : t;
      if (this.follow && this.now !== null) {
        const span = this.t1 - this.t0;
        if (this.now > this.t1 - span * 0.05 || this.now < this.t0) this.setRange(this.now - span * 0.8, this.now + span * 0.2);
      }
      this.invalidate();
    }
    setFollow(on) { this.follow = !!on; if (on && this.now !== null) this.setNow(this.now); }
    setLatencyScale(s) { this.latencyScale = s === 'log' ? 'log' : 'linear'; this.invalidate(); }
    on(name, fn) { (this.listeners[name] || (this.listeners[name] = [])).push(fn); return this; }
    emit(name, arg) { for (const fn of this.listeners[name] || []) fn(arg); }
    invalidate() { this.baseDirty = true; this.layout = null; this.render(); }

    // ---- time range ----
    extent() {
      const end = Math.max(this.model.endUs(), this.now || 0, 1000);
      return [0, end];
    }
    setRange(t0, t1) {
      const [e0, e1] = this.extent();
      const full = e1 - e0;
      let span = Math.max(this.opts.minSpanUs, Math.min(t1 - t0, full * 1.1));
      let a = t0;
      if (!(span > 0)) span = full;
      // Keep a little of the run in view: never pan entirely past its start or end.
      const margin = span * 0.05;
      if (a < e0 - margin) a = e0 - margin;
      if (a + span > e1 + margin) a = e1 + margin - span;
      if (a < e0 - margin) a = e0 - margin;
      if (a === this.t0 && a + span === this.t1) return;
      this.t0 = a;
      this.t1 = a + span;
      this.fitted = true;
      this.baseDirty = true;
      this.render();
      this.emit('range', { t0: this.t0, t1: this.t1 });
    }
    fit() {
      const [e0, e1] = this.extent();
      const pad = (e1 - e0) * 0.01;
      this.setRange(e0 - pad, e1 + pad);
    }
    zoom(factor, around) {
      const c = around === undefined ? (this.t0 + this.t1) / 2 : around;
      this.setRange(c - (c - this.t0) * factor, c + (this.t1 - c) * factor);
    }
    pan(dt) { this.setRange(this.t0 + dt, this.t1 + dt); }
    focus(t, span) {
      const s = span || Math.max(20000, Math.min(this.t1 - this.t0, 200000));
      this.setRange(t - s * 0.3, t + s * 0.7);
    }
    // Zoom to the first failure and what followed it: detection, takeover, replay.
    focusFailure() {
      const m = this.model;
      const f = m.firstFailureUs;
      if (f === null) return false;
      let last = f;
      const seen = new Set();
      for (const mk of m.markers) {
        if (mk.t < f) continue;
        if (mk.t > f + 2e6) break;
        const k = mk.e.kind;
        if ((k === 'detection' || k === 'takeover' || k === 'replay_end' || k === 'standby_lost' || k === 'fenced') && !seen.has(k)) {
          seen.add(k);
          last = Math.max(last, mk.t);
        }
      }
      const span = Math.max(50000, (last - f) * 1.6);
      this.setRange(f - span * 0.15, f + span * 0.85);
      return true;
    }

    // ---- layout ----
    onResize() {
      this.layout = null;
      this.baseDirty = true;
      this.render();
    }

    computeLayout() {
      const o = this.opts;
      const width = Math.max(600, this.root.clientWidth || 1200);
      const L = { width, x0: o.gutter, x1: width - o.rightPad };
      L.plotW = L.x1 - L.x0;
      let y = o.axisHeight + 6;
      L.lanesTop = y;
      L.lanes = [];
      let prevFrag = null;
      for (const lane of this.model.lanes) {
        if (prevFrag !== null && lane.fragment !== prevFrag) y += o.groupGap;
        L.lanes.push({ lane, y, h: o.laneHeight });
        lane.y = y;
        prevFrag = lane.fragment;
        y += o.laneHeight;
      }
      L.lanesBottom = y;
      y += 22;
      L.rate = { y, h: o.chartHeight };
      y += o.chartHeight + 22;
      L.latency = { y, h: o.chartHeight };
      y += o.chartHeight + 22;
      L.strip = { y, rowH: o.stripRowHeight, h: o.stripRowHeight * STRIP_ROWS.length };
      y += L.strip.h + 6;
      L.bottomAxis = y;
      y += o.axisHeight;
      L.height = y;
      this.layout = L;
      this.sizeCanvas(this.base, width, y);
      this.sizeCanvas(this.over, width, y);
      this.root.style.height = `${y}px`;
      return L;
    }

    sizeCanvas(c, w, h) {
      const dpr = (this.dpr = window.devicePixelRatio || 1);
      const W = Math.round(w * dpr), Hh = Math.round(h * dpr);
      if (c.width !== W || c.height !== Hh) {
        c.width = W;
        c.height = Hh;
        c.style.width = `${w}px`;
        c.style.height = `${h}px`;
      }
    }

    x(t) { const L = this.layout; return L.x0 + ((t - this.t0) / (this.t1 - this.t0)) * L.plotW; }
    tAt(x) { const L = this.layout; return this.t0 + ((x - L.x0) / L.plotW) * (this.t1 - this.t0); }
    laneCenter(lane) { return lane.y + this.opts.laneHeight * 0.42; }

    // ---- rendering ----
    render() {
      if (this.frame) return;
      this.frame = requestAnimationFrame(() => {
        this.frame = 0;
        this.renderNow();
      });
    }

    renderNow() {
      if (this.frame) { cancelAnimationFrame(this.frame); this.frame = 0; }
      if (!this.fitted) {
        const [e0, e1] = this.extent();
        const pad = (e1 - e0) * 0.01;
        this.t0 = e0 - pad;
        this.t1 = e1 + pad;
      }
      const start = performance.now();
      if (!this.layout) this.computeLayout();
      if (this.baseDirty) {
        this.drawBase();
        this.baseDirty = false;
      }
      this.drawOverlay();
      this.lastRenderMs = performance.now() - start;
    }

    ctxOf(c) {
      const ctx = c.getContext('2d');
      ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
      return ctx;
    }

    font(size, weight) { return `${weight || 400} ${size || this.opts.fontSize}px ${this.opts.font}`; }

    drawBase() {
      const L = this.layout;
      const ctx = this.ctxOf(this.base);
      const m = this.model;
      ctx.clearRect(0, 0, L.width, L.height);
      ctx.fillStyle = '#ffffff';
      ctx.fillRect(0, 0, L.width, L.height);
      this.hits = [];

      const ticks = this.ticks();
      // Fragment bands behind the lanes, alternating, so groups read at a glance.
      let band = 0, prev = null;
      for (const ll of L.lanes) {
        if (ll.lane.fragment !== prev) { band++; prev = ll.lane.fragment; }
        if (band % 2 === 0) { ctx.fillStyle = '#f4f6f8'; ctx.fillRect(L.x0, ll.y, L.plotW, ll.h); }
      }
      // Grid.
      ctx.strokeStyle = '#e4e4e4';
      ctx.lineWidth = 1;
      ctx.beginPath();
      for (const t of ticks.list) {
        const x = Math.round(this.x(t)) + 0.5;
        ctx.moveTo(x, L.lanesTop);
        ctx.lineTo(x, L.bottomAxis);
      }
      ctx.stroke();

      ctx.save();
      ctx.beginPath();
      ctx.rect(L.x0, 0, L.plotW, L.height);
      ctx.clip();
      this.faultLabels = [];
      this.drawFaults(ctx);
      this.drawLanes(ctx);
      this.drawFaultLabels(ctx);
      this.drawReplays(ctx);
      this.drawSilences(ctx);
      this.drawMessages(ctx);
      this.drawMarkers(ctx);
      this.drawRate(ctx);
      this.drawLatency(ctx);
      this.drawStrip(ctx);
      ctx.restore();

      this.drawAxis(ctx, ticks, 0, false);
      this.drawAxis(ctx, ticks, L.bottomAxis, true);
      this.drawGutter(ctx);
      if (this.msgHint) {
        ctx.font = this.font(13, 400);
        ctx.fillStyle = '#555';
        ctx.textAlign = 'right';
        ctx.textBaseline = 'top';
        ctx.fillText(this.msgHint, L.x1 - 4, L.lanesBottom + 3);
      }
      if (!m.lanes.length) {
        ctx.font = this.font(18, 400);
        ctx.fillStyle = '#666';
        ctx.textAlign = 'center';
        ctx.fillText('No events yet', L.x0 + L.plotW / 2, L.lanesTop + 30);
      }
    }

    ticks() {
      const L = this.layout;
      const span = this.t1 - this.t0;
      const step = H.niceStep((span / L.plotW) * 120);
      const list = [];
      const first = Math.ceil(this.t0 / step) * step;
      for (let t = Math.max(0, first); t <= this.t1 && list.length < 200; t += step) list.push(t);
      return { step, list };
    }

    drawAxis(ctx, ticks, y, bottom) {
      const L = this.layout;
      const h = this.opts.axisHeight;
      ctx.fillStyle = '#ffffff';
      ctx.fillRect(0, y, L.width, h);
      ctx.strokeStyle = '#555';
      ctx.lineWidth = 1;
      ctx.beginPath();
      const ay = bottom ? y + 0.5 : y + h - 0.5;
      ctx.moveTo(L.x0, ay);
      ctx.lineTo(L.x1, ay);
      ctx.font = this.font(14, 400);
      ctx.fillStyle = '#222';
      ctx.textAlign = 'center';
      ctx.textBaseline = bottom ? 'top' : 'bottom';
      for (const t of ticks.list) {
        const x = Math.round(this.x(t)) + 0.5;
        ctx.moveTo(x, ay);
        ctx.lineTo(x, bottom ? ay + 6 : ay - 6);
        ctx.fillText(H.fmtTime(t, ticks.step), x, bottom ? ay + 8 : ay - 8);
      }
      ctx.stroke();
      ctx.textAlign = 'left';
      ctx.fillStyle = '#555';
      ctx.font = this.font(13, 400);
      ctx.fillText(`time since the run's start`, 10, bottom ? ay + 8 : ay - 8);
    }

    segEnd(seg) {
      if (seg.t1 !== null) return seg.t1;
      if (this.now !== null) return this.now;
      return this.model.endUs();
    }

    drawFaults(ctx) {
      const L = this.layout;
      const m = this.model;
      const end = this.now !== null ? this.now : m.endUs();
      for (const f of m.faults) {
        const st = H.faultOf(f.kind);
        const a = this.x(f.at_us);
        const b = this.x(f.until_us === null || f.until_us === undefined ? end : f.until_us);
        if (b < L.x0 || a > L.x1) continue;
        const w = Math.max(2, b - a);
        // A faint band through every panel: the fault's time for the outputs as well.
        ctx.fillStyle = hexAlpha(st.color, 0.08);
        ctx.fillRect(a, L.lanesTop, w, L.bottomAxis - L.lanesTop);
        const lanes = [f.node];
        if (f.kind === 'partition' && f.peer) lanes.push(f.peer);
        for (const name of lanes) {
          const lane = m.laneByName.get(name);
          if (!lane) continue;
          ctx.fillStyle = hexAlpha(st.color, 0.22);
          ctx.fillRect(a, lane.y, w, this.opts.laneHeight);
          hatch(ctx, a, lane.y, w, this.opts.laneHeight, hexAlpha(st.color, 0.55), f.kind === 'pause' ? -1 : 1);
          ctx.strokeStyle = st.color;
          ctx.lineWidth = 2;
          ctx.beginPath();
          ctx.moveTo(a, lane.y);
          ctx.lineTo(a, lane.y + this.opts.laneHeight);
          ctx.stroke();
          if (f.kind !== 'crash') this.faultLabels.push({ f, lane, a, b, name });
        }
      }
    }

    // A pause or partition leaves the role bar as it is: say it on the bar, in a box.
    drawFaultLabels(ctx) {
      const L = this.layout;
      ctx.font = this.font(13, 700);
      ctx.textAlign = 'center';
      ctx.textBaseline = 'middle';
      for (const { f, lane, a, b, name } of this.faultLabels) {
        const other = f.kind === 'partition' ? (name === f.node ? f.peer : f.node) : null;
        const text = f.kind === 'pause' ? 'PAUSED' : f.kind === 'partition' ? `CUT OFF from ${other}` : f.kind.toUpperCase();
        const vis0 = Math.max(a, L.x0), vis1 = Math.min(b, L.x1);
        const w = ctx.measureText(text).width + 12;
        if (vis1 - vis0 < w + 4) continue;
        const cx = (vis0 + vis1) / 2, cy = this.laneCenter(lane);
        ctx.fillStyle = '#ffffff';
        ctx.strokeStyle = H.faultOf(f.kind).color;
        ctx.lineWidth = 2;
        ctx.fillRect(cx - w / 2, cy - 10, w, 20);
        ctx.strokeRect(cx - w / 2, cy - 10, w, 20);
        ctx.fillStyle = '#000';
        ctx.fillText(text, cx, cy + 1);
      }
    }

    drawLanes(ctx) {
      const L = this.layout;
      const barTop = 9, barH = 24;
      ctx.textBaseline = 'middle';
      ctx.textAlign = 'center';
      ctx.font = this.font(14, 600);
      for (const ll of L.lanes) {
        const segs = ll.lane.segments;
        // First segment that may be visible.
        let i = Math.max(0, H.lowerBound(segs.length, (k) => segs[k].t0, this.t0) - 1);
        for (; i < segs.length; i++) {
          const s = segs[i];
          if (s.t0 > this.t1) break;
          const a = Math.max(L.x0 - 5, this.x(s.t0));
          const b = Math.min(L.x1 + 5, this.x(this.segEnd(s)));
          if (b <= a) continue;
          const st = H.stateOf(s.state);
          ctx.fillStyle = st.fill;
          ctx.fillRect(a, ll.y + barTop, b - a, barH);
          if (st.hatch) hatch(ctx, a, ll.y + barTop, b - a, barH, 'rgba(255,255,255,0.28)', 1);
          if (s.state === 'spare' || s.state === 'unknown') {
            ctx.strokeStyle = '#888';
            ctx.lineWidth = 1;
            ctx.strokeRect(a + 0.5, ll.y + barTop + 0.5, b - a - 1, barH - 1);
          }
          const label = s.state === 'dead' ? 'DEAD (crashed)' : st.label;
          const vis0 = Math.max(a, L.x0), vis1 = Math.min(b, L.x1);
          const tw = ctx.measureText(label).width;
          if (vis1 - vis0 > tw + 16) {
            ctx.fillStyle = st.text;
            ctx.fillText(label, (vis0 + vis1) / 2, ll.y + barTop + barH / 2 + 1);
          }
        }
      }
    }

    drawReplays(ctx) {
      const L = this.layout;
      for (const r of this.model.replays) {
        const lane = this.model.laneByName.get(r.lane);
        if (!lane) continue;
        const end = r.t1 !== null ? r.t1 : this.now !== null ? this.now : this.model.endUs();
        const a = this.x(r.t0), b = this.x(end);
        if (b < L.x0 || a > L.x1) continue;
        const y = lane.y + 35;
        ctx.fillStyle = hexAlpha(H.OI.blue, 0.85);
        ctx.fillRect(a, y, Math.max(2, b - a), 5);
      }
    }

    // A detection's silence: from the last time the detector heard its partner to the
    // detection, over the detecting node's lane ("no heartbeat for 30 ms").
    drawSilences(ctx) {
      const L = this.layout;
      const ms = this.model.markers;
      const span = this.t1 - this.t0;
      const from = H.lowerBound(ms.length, (k) => ms[k].t, this.t0);
      const to = H.lowerBound(ms.length, (k) => ms[k].t, this.t1 + span);
      ctx.font = this.font(11, 600);
      for (let i = from; i < to; i++) {
        const mk = ms[i];
        const e = mk.e;
        if ((e.kind !== 'detection' && e.kind !== 'standby_lost') || !(e.silent_us > 0)) continue;
        const a = this.x(mk.t - e.silent_us), b = this.x(mk.t);
        if (b - a < 24 || b < L.x0 || a > L.x1) continue;
        const y = mk.lane.y + 3;
        ctx.strokeStyle = '#333';
        ctx.lineWidth = 1.5;
        ctx.setLineDash([5, 3]);
        ctx.beginPath();
        ctx.moveTo(a, y);
        ctx.lineTo(b, y);
        ctx.stroke();
        ctx.setLineDash([]);
        ctx.beginPath();
        ctx.moveTo(a, y - 4);
        ctx.lineTo(a, y + 4);
        ctx.stroke();
        const text = `${e.detector === 'connection' ? 'silent' : 'no heartbeat'} for ${H.fmtDuration(e.silent_us)}`;
        const tw = ctx.measureText(text).width;
        const v0 = Math.max(a, L.x0), v1 = Math.min(b, L.x1);
        if (v1 - v0 > tw + 10) {
          const cx = (v0 + v1) / 2;
          ctx.fillStyle = 'rgba(255,255,255,0.9)';
          ctx.fillRect(cx - tw / 2 - 4, y - 6, tw + 8, 12);
          ctx.fillStyle = '#111';
          ctx.textAlign = 'center';
          ctx.textBaseline = 'middle';
          ctx.fillText(text, cx, y);
        }
      }
    }

    drawMessages(ctx) {
      const L = this.layout;
      const m = this.model;
      const msgs = m.messages;
      this.msgHint = '';
      this.messagesDrawn = 0;
      if (m.run.trace_level === 'control' && this.t1 - this.t0 < 300000)
        this.msgHint = 'batches and acks were not recorded (trace level control)';
      if (!msgs.length) return;
      const span = this.t1 - this.t0;
      const from = H.lowerBound(msgs.length, (k) => msgs[k].t0, this.t0 - m.messageSpanUs);
      const to = H.lowerBound(msgs.length, (k) => msgs[k].t0, this.t1);
      let count = 0;
      for (let i = from; i < to; i++) if (msgs[i].kind !== 'checkpoint') count++;
      const limit = Math.min(this.opts.messageLimit, L.plotW / 2);
      const drawData = count <= limit;
      const drawCheckpoints = span <= 600000;
      if (!drawData) this.msgHint = `${H.fmtNumber(count)} messages in view: zoom in to see them as lines`;
      else if (count) this.msgHint = `${H.fmtNumber(count)} messages (batches, acks) drawn as lines`;
      if (!drawData && !drawCheckpoints) return;
      ctx.lineWidth = 1.2;
      for (let i = from; i < to; i++) {
        const msg = msgs[i];
        const isCk = msg.kind === 'checkpoint';
        if (isCk ? !drawCheckpoints : !drawData) continue;
        const a = m.laneByName.get(msg.from), b = m.laneByName.get(msg.to);
        if (!a || !b) continue;
        const st = H.MESSAGES[msg.kind];
        const x0 = this.x(msg.t0);
        const unmatched = msg.t1 === null;
        const x1 = unmatched ? x0 + 6 : this.x(msg.t1);
        const y0 = this.laneCenter(a), y1 = this.laneCenter(b);
        ctx.strokeStyle = hexAlpha(st.color, isCk ? 0.7 : 0.75);
        ctx.lineWidth = st.width || 1.2;
        ctx.setLineDash(unmatched ? [2, 2] : st.dash);
        ctx.beginPath();
        ctx.moveTo(x0, y0);
        ctx.lineTo(x1, unmatched ? y0 + (y1 - y0) * 0.35 : y1);
        ctx.stroke();
        if (!unmatched && Math.abs(y1 - y0) > 8) arrowHead(ctx, x0, y0, x1, y1, st.color);
        this.messagesDrawn++;
      }
      ctx.setLineDash([]);
    }

    // Light and minor markers sit under the role bar, drawn as they are. Major and medium ones
    // sit on the bar; where several fall within a glyph's width on one lane they form a
    // cluster: the most important one is drawn, with a "+N" badge, and its tooltip tells all.
    drawMarkers(ctx) {
      const ms = this.model.markers;
      const span = this.t1 - this.t0;
      const from = H.lowerBound(ms.length, (k) => ms[k].t, this.t0 - span * 0.02);
      const to = H.lowerBound(ms.length, (k) => ms[k].t, this.t1 + span * 0.02);
      const lh = this.opts.laneHeight;
      for (const size of ['light', 'minor']) {
        const r = H.SIZES[size];
        for (let i = from; i < to; i++) {
          const mk = ms[i];
          if (mk.style.size !== size) continue;
          const x = this.x(mk.t), y = mk.lane.y + lh - 7;
          H.drawGlyph(ctx, mk.style.shape, x, y, r, mk.style.color);
          this.hits.push({ x, y, r: Math.max(r, 5), marker: mk, cluster: [mk] });
        }
      }
      const open = new Map(); // lane -> cluster being built
      const clusters = [];
      const tol = H.SIZES.major * 1.6;
      for (let i = from; i < to; i++) {
        const mk = ms[i];
        if (mk.style.size !== 'major' && mk.style.size !== 'medium') continue;
        const x = this.x(mk.t);
        const c = open.get(mk.lane);
        if (c && x - c.x0 <= tol) {
          c.list.push(mk);
          if (priority(mk) > priority(c.top)) c.top = mk;
        } else {
          const nc = { lane: mk.lane, x0: x, list: [mk], top: mk };
          open.set(mk.lane, nc);
          clusters.push(nc);
        }
      }
      for (const c of clusters) {
        const mk = c.top;
        const x = this.x(mk.t), y = this.laneCenter(mk.lane);
        const r = H.SIZES[mk.style.size];
        H.drawGlyph(ctx, mk.style.shape, x, y, r, mk.style.color);
        if (c.list.length > 1) {
          const label = `+${c.list.length - 1}`;
          ctx.font = this.font(11, 700);
          const w = Math.max(15, ctx.measureText(label).width + 7);
          const bx = x + r - 2, by = y - r - 8;
          ctx.fillStyle = '#111';
          roundRect(ctx, bx, by, w, 14, 7);
          ctx.fill();
          ctx.fillStyle = '#fff';
          ctx.textAlign = 'center';
          ctx.textBaseline = 'middle';
          ctx.fillText(label, bx + w / 2, by + 7.5);
        }
        this.hits.push({ x, y, r: Math.max(r, 7), marker: mk, cluster: c.list });
      }
    }

    rateBin() {
      const L = this.layout;
      const span = this.t1 - this.t0;
      let bin = 100000;
      if ((L.plotW * bin) / span < 3) bin = H.niceStep((span * 3) / L.plotW);
      if (span < 1500000) bin = H.niceStep((span * 12) / L.plotW);
      return bin;
    }

    drawRate(ctx) {
      const L = this.layout;
      const m = this.model;
      const outs = m.outputs;
      const bin = (this.rate = { bin: this.rateBin(), bins: new Map(), max: 0 }).bin;
      const first = Math.floor(this.t0 / bin) * bin;
      const from = H.lowerBound(outs.length, (k) => outs[k].at_us, first);
      const bins = this.rate.bins;
      for (let i = from; i < outs.length; i++) {
        const o = outs[i];
        if (o.at_us > this.t1 + bin) break;
        const b = Math.floor(o.at_us / bin);
        let c = bins.get(b);
        if (!c) bins.set(b, (c = { total: 0, exact: 0, duplicate: 0, differing: 0 }));
        c.total++;
        c[o.status in c ? o.status : 'exact']++;
      }
      let max = 0;
      for (const c of bins.values()) if (c.total > max) max = c.total;
      const ymax = (this.rate.max = H.niceMax(Math.max(max, 1)));
      const P = L.rate;
      this.chartFrame(ctx, P, [0, ymax / 2, ymax].map((v) => [v, P.y + P.h - (v / ymax) * P.h]));
      const wpx = (bin / (this.t1 - this.t0)) * L.plotW;
      const gap = wpx > 6 ? 1 : 0;
      for (const [b, c] of bins) {
        const x = this.x(b * bin);
        let y = P.y + P.h;
        for (const s of ['exact', 'duplicate', 'differing']) {
          if (!c[s]) continue;
          const h = (c[s] / ymax) * P.h;
          ctx.fillStyle = s === 'exact' ? hexAlpha(H.STATUSES.exact.color, 0.75) : H.STATUSES[s].color;
          ctx.fillRect(x + gap, y - h, Math.max(1, wpx - gap), h);
          y -= h;
        }
      }
    }

    chartFrame(ctx, P, yTicks) {
      const L = this.layout;
      ctx.fillStyle = '#fbfbfb';
      ctx.fillRect(L.x0, P.y, L.plotW, P.h);
      ctx.strokeStyle = '#e6e6e6';
      ctx.lineWidth = 1;
      ctx.beginPath();
      for (const [, y] of yTicks) {
        ctx.moveTo(L.x0, Math.round(y) + 0.5);
        ctx.lineTo(L.x1, Math.round(y) + 0.5);
      }
      ctx.stroke();
      ctx.strokeStyle = '#999';
      ctx.strokeRect(L.x0 + 0.5, P.y + 0.5, L.plotW - 1, P.h - 1);
      P.yTicks = yTicks;
    }

    latencyY(us, P) {
      if (this.latencyScale === 'log') {
        const lo = this.latLo, hi = this.latHi;
        const v = Math.log10(Math.max(us, lo));
        return P.y + P.h - ((v - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * P.h;
      }
      return P.y + P.h - (Math.max(0, us) / this.latHi) * P.h;
    }

    drawLatency(ctx) {
      const L = this.layout;
      const m = this.model;
      const P = L.latency;
      const outs = m.outputs;
      const maxMs = H.niceMax(Math.max(m.maxLatencyUs, 1000) / 1000);
      this.latHi = maxMs * 1000;
      let ticks;
      if (this.latencyScale === 'log') {
        let minUs = Infinity;
        for (const o of outs) { const l = o.at_us - o.ts_us; if (l > 0 && l < minUs) minUs = l; }
        this.latLo = Math.pow(10, Math.floor(Math.log10(Number.isFinite(minUs) ? minUs : 100)));
        this.latHi = Math.pow(10, Math.ceil(Math.log10(this.latHi)));
        ticks = [];
        for (let v = this.latLo; v <= this.latHi * 1.001; v *= 10) ticks.push([v / 1000, this.latencyY(v, P)]);
      } else {
        ticks = [0, maxMs / 2, maxMs].map((v) => [v, this.latencyY(v * 1000, P)]);
      }
      this.chartFrame(ctx, P, ticks);
      const from = H.lowerBound(outs.length, (k) => outs[k].at_us, this.t0);
      const to = H.lowerBound(outs.length, (k) => outs[k].at_us, this.t1 + 1);
      const W = Math.ceil(L.plotW) + 2, Hh = Math.ceil(P.h) + 2;
      const seen = to - from > W * 2 ? new Uint8Array(W * Hh) : null;
      const colors = {};
      for (const s of STRIP_ROWS) colors[s] = H.STATUSES[s].color;
      // Exact ones first, the others on top.
      for (const pass of [0, 1]) {
        for (let i = from; i < to; i++) {
          const o = outs[i];
          const special = o.status === 'duplicate' || o.status === 'differing';
          if ((pass === 1) !== special) continue;
          const x = this.x(o.at_us);
          const y = this.latencyY(o.at_us - o.ts_us, P);
          if (seen && !special) {
            const k = Math.round(y - P.y) * W + Math.round(x - L.x0);
            if (seen[k]) continue;
            seen[k] = 1;
          }
          ctx.fillStyle = colors[o.status] || '#444';
          const r = special ? 3.5 : 2.2;
          ctx.fillRect(x - r, y - r, 2 * r, 2 * r);
        }
      }
    }

    drawStrip(ctx) {
      const L = this.layout;
      const m = this.model;
      const P = L.strip;
      ctx.fillStyle = '#fbfbfb';
      ctx.fillRect(L.x0, P.y, L.plotW, P.h);
      STRIP_ROWS.forEach((status, r) => {
        const y = P.y + r * P.rowH;
        const row = m.rows[status] || [];
        ctx.strokeStyle = '#e2e2e2';
        ctx.beginPath();
        ctx.moveTo(L.x0, y + P.rowH - 0.5);
        ctx.lineTo(L.x1, y + P.rowH - 0.5);
        ctx.stroke();
        if (!row.length) return;
        const from = H.lowerBound(row.length, (k) => m.rowTime(status, k), this.t0 - (this.t1 - this.t0) * 0.01);
        const to = H.lowerBound(row.length, (k) => m.rowTime(status, k), this.t1 + 1);
        const rare = status !== 'exact';
        const minW = rare ? 3 : 1.5;
        const pxPerUs = L.plotW / (this.t1 - this.t0);
        ctx.fillStyle = H.STATUSES[status].color;
        let lastPx = -Infinity;
        for (let k = from; k < to; k++) {
          const x = this.x(m.rowTime(status, k));
          const px = Math.floor(x);
          if (px === lastPx && !rare) continue;
          lastPx = px;
          const w = Math.max(minW, pxPerUs * 1000 > 6 ? 6 : minW);
          ctx.fillRect(x - w / 2, y + 3, w, P.rowH - 6);
        }
      });
      ctx.strokeStyle = '#999';
      ctx.strokeRect(L.x0 + 0.5, P.y + 0.5, L.plotW - 1, P.h - 1);
    }

    drawGutter(ctx) {
      const L = this.layout;
      const m = this.model;
      const g = L.x0;
      ctx.fillStyle = '#ffffff';
      ctx.fillRect(0, L.lanesTop, g - 1, L.bottomAxis - L.lanesTop);
      ctx.textAlign = 'left';
      ctx.textBaseline = 'alphabetic';
      // Lanes: node name, and what it was planned to be.
      let prev = null, groupStart = 0;
      const closeGroup = (endY) => {
        if (prev === null) return;
        ctx.strokeStyle = '#9aa4ae';
        ctx.lineWidth = 3;
        ctx.beginPath();
        ctx.moveTo(6, groupStart + 4);
        ctx.lineTo(6, endY - 4);
        ctx.stroke();
      };
      for (const ll of L.lanes) {
        if (ll.lane.fragment !== prev) {
          closeGroup(ll.y - (prev === null ? 0 : this.opts.groupGap));
          prev = ll.lane.fragment;
          groupStart = ll.y;
        }
        ctx.fillStyle = '#111';
        ctx.font = this.font(16, 700);
        ctx.fillText(clip(ctx, ll.lane.name, g - 24), 16, ll.y + 21);
        ctx.fillStyle = '#555';
        ctx.font = this.font(13, 400);
        ctx.fillText(this.laneSubtitle(ll.lane), 16, ll.y + 39);
      }
      closeGroup(L.lanesBottom);
      // Charts.
      const label = (title, sub, P) => {
        ctx.textAlign = 'left';
        ctx.fillStyle = '#111';
        ctx.font = this.font(16, 700);
        ctx.fillText(title, 16, P.y + 20);
        ctx.fillStyle = '#555';
        ctx.font = this.font(13, 400);
        wrapText(ctx, sub, 16, P.y + 39, g - 70, 16);
        ctx.textAlign = 'right';
        ctx.fillStyle = '#333';
        ctx.font = this.font(13, 400);
        ctx.textBaseline = 'middle';
        for (const [v, y] of P.yTicks || []) ctx.fillText(fmtTick(v), g - 8, Math.min(Math.max(y, P.y + 7), P.y + P.h - 7));
        ctx.textBaseline = 'alphabetic';
      };
      const bin = this.rate ? this.rate.bin : 100000;
      label('Output rate', `tuples per ${H.fmtDuration(bin)} at the sink`, L.rate);
      label('Latency', `ms, delivery − event time${this.latencyScale === 'log' ? ' (log scale)' : ''}`, L.latency);
      // Strip rows.
      const counts = m.counts();
      ctx.textBaseline = 'middle';
      STRIP_ROWS.forEach((s, r) => {
        const y = L.strip.y + r * L.strip.rowH + L.strip.rowH / 2;
        ctx.fillStyle = H.STATUSES[s].color;
        ctx.fillRect(16, y - 6, 12, 12);
        ctx.fillStyle = '#111';
        ctx.textAlign = 'left';
        ctx.font = this.font(14, r === 0 ? 400 : 600);
        ctx.fillText(H.STATUSES[s].label, 34, y);
        ctx.textAlign = 'right';
        ctx.fillText(H.fmtNumber(counts[s]), g - 8, y);
      });
      ctx.textAlign = 'left';
      ctx.font = this.font(13, 400);
      ctx.fillStyle = '#555';
      ctx.textBaseline = 'bottom';
      ctx.fillText('Output tuples vs. reference (click one)', 16, L.strip.y - 4);
      ctx.textBaseline = 'alphabetic';
    }

    laneSubtitle(lane) {
      const f = this.model.fragments.find((x) => x.name === lane.fragment);
      if (f && f.kind === 'source') return 'source';
      if (f && f.kind === 'sink') return 'sink';
      const ha = f && f.ha && f.ha !== 'none' ? ` (${f.ha})` : '';
      return `planned ${lane.planned}${ha}`;
    }

    // ---- overlay: cursor, now, selection, hover ----
    drawOverlay() {
      const L = this.layout;
      const ctx = this.ctxOf(this.over);
      ctx.clearRect(0, 0, L.width, L.height);
      ctx.save();
      ctx.beginPath();
      ctx.rect(L.x0, 0, L.plotW, L.height);
      ctx.clip();
      if (this.now !== null) {
        const x = this.x(this.now);
        ctx.strokeStyle = H.OI.vermillion;
        ctx.lineWidth = 3;
        ctx.beginPath();
        ctx.moveTo(x, L.lanesTop - 4);
        ctx.lineTo(x, L.bottomAxis);
        ctx.stroke();
        ctx.fillStyle = H.OI.vermillion;
        ctx.font = this.font(14, 700);
        ctx.textAlign = 'left';
        ctx.textBaseline = 'top';
        ctx.fillText('now', x + 5, L.lanesTop - 2);
      }
      this.drawSelection(ctx);
      if (this.mouse && !this.drag && this.mouse.x >= L.x0 && this.mouse.x <= L.x1) {
        const x = this.mouse.x;
        ctx.strokeStyle = 'rgba(0,0,0,0.45)';
        ctx.lineWidth = 1;
        ctx.setLineDash([4, 4]);
        ctx.beginPath();
        ctx.moveTo(Math.round(x) + 0.5, L.lanesTop);
        ctx.lineTo(Math.round(x) + 0.5, L.bottomAxis);
        ctx.stroke();
        ctx.setLineDash([]);
        const label = H.fmtTime(this.tAt(x), H.niceStep((this.t1 - this.t0) / L.plotW));
        ctx.font = this.font(14, 700);
        const w = ctx.measureText(label).width + 12;
        const bx = Math.min(Math.max(x - w / 2, L.x0), L.x1 - w);
        ctx.fillStyle = '#111';
        ctx.fillRect(bx, L.bottomAxis, w, 22);
        ctx.fillStyle = '#fff';
        ctx.textAlign = 'center';
        ctx.textBaseline = 'middle';
        ctx.fillText(label, bx + w / 2, L.bottomAxis + 11);
      }
      if (this.hoverHit && this.hoverHit.marker) {
        const h = this.hoverHit;
        ctx.strokeStyle = '#000';
        ctx.lineWidth = 2;
        ctx.beginPath();
        ctx.arc(h.x, h.y, h.r + 4, 0, Math.PI * 2);
        ctx.stroke();
      }
      ctx.restore();
    }

    drawSelection(ctx) {
      const sel = this.selected;
      if (!sel) return;
      const L = this.layout;
      const m = this.model;
      if (sel.kind === 'marker') {
        const x = this.x(sel.marker.t);
        ctx.strokeStyle = '#000';
        ctx.lineWidth = 1.5;
        ctx.setLineDash([6, 4]);
        ctx.beginPath();
        ctx.moveTo(x, L.lanesTop);
        ctx.lineTo(x, L.bottomAxis);
        ctx.stroke();
        ctx.setLineDash([]);
        return;
      }
      const item = sel.kind === 'missing' ? m.missing[sel.index] : m.outputs[sel.index];
      if (!item) return;
      // Every delivered copy of the same entry (stream, lineage), and the selected one.
      const copies = m.entryIndex.get(`${item.stream}|${item.lineage}`) || [];
      const marks = copies.map((i) => ({ kind: 'output', i, o: m.outputs[i] }));
      if (sel.kind === 'missing') marks.push({ kind: 'missing', i: sel.index, o: item });
      for (const mk of marks) {
        const o = mk.o;
        const isSel = mk.kind === sel.kind && mk.i === sel.index;
        const status = mk.kind === 'missing' ? 'missing' : o.status || 'exact';
        const t = mk.kind === 'missing' ? o.ts_us : o.at_us;
        const x = this.x(t);
        const row = STRIP_ROWS.indexOf(status);
        const y = L.strip.y + row * L.strip.rowH + L.strip.rowH / 2;
        ctx.strokeStyle = '#000';
        ctx.lineWidth = isSel ? 3 : 2;
        ctx.beginPath();
        ctx.arc(x, y, isSel ? 10 : 7, 0, Math.PI * 2);
        ctx.stroke();
        if (mk.kind === 'output') {
          const ly = this.latencyY(o.at_us - o.ts_us, L.latency);
          ctx.beginPath();
          ctx.arc(x, ly, isSel ? 8 : 6, 0, Math.PI * 2);
          ctx.stroke();
          const lane = o.from ? m.laneByName.get(o.from) : null;
          if (lane && isSel) {
            ctx.beginPath();
            ctx.arc(x, this.laneCenter(lane), 8, 0, Math.PI * 2);
            ctx.stroke();
          }
        }
        if (isSel) {
          ctx.strokeStyle = 'rgba(0,0,0,0.6)';
          ctx.lineWidth = 1.5;
          ctx.setLineDash([6, 4]);
          ctx.beginPath();
          ctx.moveTo(x, L.lanesTop);
          ctx.lineTo(x, L.bottomAxis);
          ctx.stroke();
          ctx.setLineDash([]);
          if (mk.kind === 'output' && o.ts_us < t) {
            // The tuple's event time, joined to its delivery: the latency, drawn.
            const xe = this.x(o.ts_us);
            ctx.strokeStyle = H.OI.blue;
            ctx.lineWidth = 2;
            ctx.beginPath();
            ctx.moveTo(xe, y - 12);
            ctx.lineTo(xe, y + 12);
            ctx.moveTo(xe, y);
            ctx.lineTo(x, y);
            ctx.stroke();
          }
        }
      }
    }

    // ---- hit testing ----
    hitAt(x, y) {
      const L = this.layout;
      if (!L || x < L.x0 - 4 || x > L.x1 + 4) return null;
      for (let i = this.hits.length - 1; i >= 0; i--) {
        const h = this.hits[i];
        if (Math.abs(h.x - x) <= h.r + 2 && Math.abs(h.y - y) <= h.r + 2) return h;
      }
      const P = L.strip;
      if (y >= P.y && y < P.y + P.h) {
        const status = STRIP_ROWS[Math.floor((y - P.y) / P.rowH)];
        const k = this.nearestInRow(status, x, 6);
        if (k >= 0) return { strip: status, k };
        return null;
      }
      if (y >= L.latency.y && y < L.latency.y + L.latency.h) {
        const i = this.nearestOutput(x, y, 8);
        if (i >= 0) return { output: i };
      }
      if (y >= L.rate.y && y < L.rate.y + L.rate.h && this.rate) {
        const b = Math.floor(this.tAt(x) / this.rate.bin);
        return { bin: b, c: this.rate.bins.get(b) };
      }
      for (const ll of L.lanes) {
        if (y >= ll.y && y < ll.y + ll.h) {
          const seg = this.model.stateAt(ll.lane, this.tAt(x));
          return { lane: ll.lane, seg };
        }
      }
      return null;
    }

    nearestInRow(status, x, tolPx) {
      const m = this.model;
      const row = m.rows[status] || [];
      if (!row.length) return -1;
      const t = this.tAt(x);
      const k = H.lowerBound(row.length, (j) => m.rowTime(status, j), t);
      let best = -1, bestD = Infinity;
      for (const j of [k - 2, k - 1, k, k + 1]) {
        if (j < 0 || j >= row.length) continue;
        const d = Math.abs(this.x(m.rowTime(status, j)) - x);
        if (d < bestD) { bestD = d; best = j; }
      }
      return bestD <= tolPx ? best : -1;
    }

    nearestOutput(x, y, tolPx) {
      const m = this.model;
      const outs = m.outputs;
      const P = this.layout.latency;
      const from = H.lowerBound(outs.length, (k) => outs[k].at_us, this.tAt(x - tolPx));
      const to = H.lowerBound(outs.length, (k) => outs[k].at_us, this.tAt(x + tolPx));
      let best = -1, bestD = Infinity;
      for (let i = from; i < to && i < from + 5000; i++) {
        const o = outs[i];
        const dx = this.x(o.at_us) - x, dy = this.latencyY(o.at_us - o.ts_us, P) - y;
        const d = dx * dx + dy * dy;
        if (d < bestD) { bestD = d; best = i; }
      }
      return bestD <= tolPx * tolPx ? best : -1;
    }

    stripCellPosition(status, k) {
      if (!this.layout) this.renderNow();
      const m = this.model;
      const row = m.rows[status] || [];
      if (k < 0 || k >= row.length) return null;
      const r = this.over.getBoundingClientRect();
      const L = this.layout;
      return {
        x: r.left + this.x(m.rowTime(status, k)),
        y: r.top + L.strip.y + STRIP_ROWS.indexOf(status) * L.strip.rowH + L.strip.rowH / 2,
      };
    }

    // ---- selection ----
    select(sel) {
      this.selected = sel || null;
      let detail = { kind: null };
      const m = this.model;
      if (sel && sel.kind === 'output') detail = { kind: 'output', index: sel.index, item: m.outputs[sel.index] };
      else if (sel && sel.kind === 'missing') detail = { kind: 'missing', index: sel.index, item: m.missing[sel.index] };
      else if (sel && sel.kind === 'marker') detail = { kind: 'marker', marker: sel.marker };
      this.render();
      this.emit('select', detail);
    }

    // ---- input ----
    bindInput() {
      const el = this.over;
      const pos = (ev) => {
        const r = el.getBoundingClientRect();
        return { x: ev.clientX - r.left, y: ev.clientY - r.top };
      };
      el.addEventListener('wheel', (ev) => {
        if (!this.layout) return;
        const p = pos(ev);
        if (p.x < this.layout.x0) return;
        ev.preventDefault();
        if (Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) {
          this.pan((ev.deltaX / this.layout.plotW) * (this.t1 - this.t0));
        } else {
          const unit = ev.deltaMode === 1 ? 30 : ev.deltaMode === 2 ? 300 : 1;
          const f = Math.exp(Math.max(-300, Math.min(300, ev.deltaY * unit)) * 0.0025);
          this.zoom(f, this.tAt(p.x));
        }
      }, { passive: false });
      el.addEventListener('mousedown', (ev) => {
        if (ev.button !== 0) return;
        const p = pos(ev);
        this.drag = { x: p.x, y: p.y, t0: this.t0, t1: this.t1, moved: false };
        this.root.focus({ preventScroll: true });
        ev.preventDefault();
      });
      window.addEventListener('mousemove', (ev) => {
        const p = pos(ev);
        if (this.drag) {
          const dx = p.x - this.drag.x;
          if (Math.abs(dx) > 3) this.drag.moved = true;
          if (this.drag.moved) {
            const dt = (-dx / this.layout.plotW) * (this.drag.t1 - this.drag.t0);
            this.setRange(this.drag.t0 + dt, this.drag.t1 + dt);
            this.over.style.cursor = 'grabbing';
          }
        }
      });
      el.addEventListener('mousemove', (ev) => {
        this.mouse = pos(ev);
        if (!this.drag) this.updateHover(ev);
        this.render();
      });
      el.addEventListener('mouseleave', () => {
        this.mouse = null;
        this.hoverHit = null;
        this.tip.hidden = true;
        this.render();
      });
      window.addEventListener('mouseup', (ev) => {
        const d = this.drag;
        this.drag = null;
        this.over.style.cursor = '';
        if (d && !d.moved && ev.target === el) this.click(pos(ev));
      });
      el.addEventListener('dblclick', (ev) => {
        const p = pos(ev);
        if (this.layout && p.x >= this.layout.x0) this.zoom(ev.shiftKey ? 2 : 0.5, this.tAt(p.x));
      });
      this.root.addEventListener('keydown', (ev) => {
        const span = this.t1 - this.t0;
        if (ev.key === '+' || ev.key === '=') this.zoom(0.5);
        else if (ev.key === '-' || ev.key === '_') this.zoom(2);
        else if (ev.key === '0') this.fit();
        else if (ev.key === 'ArrowLeft') this.pan(-span * 0.2);
        else if (ev.key === 'ArrowRight') this.pan(span * 0.2);
        else if (ev.key === 'Escape') this.select(null);
        else return;
        ev.preventDefault();
      });
    }

    click(p) {
      const h = this.hitAt(p.x, p.y);
      if (!h) return;
      if (h.marker) this.select({ kind: 'marker', marker: h.marker });
      else if (h.strip) {
        const it = this.model.rowItem(h.strip, h.k);
        this.select({ kind: it.kind, index: it.index });
      } else if (h.output !== undefined) this.select({ kind: 'output', index: h.output });
    }

    updateHover(ev) {
      const p = this.mouse;
      const h = this.hitAt(p.x, p.y);
      this.hoverHit = h;
      const html = h ? this.tooltipHtml(h) : '';
      if (!html) { this.tip.hidden = true; this.over.style.cursor = ''; return; }
      this.over.style.cursor = h.marker || h.strip || h.output !== undefined ? 'pointer' : '';
      this.tip.innerHTML = html;
      this.tip.hidden = false;
      const W = this.root.clientWidth;
      const tw = this.tip.offsetWidth, th = this.tip.offsetHeight;
      let x = p.x + 16, y = p.y + 18;
      if (x + tw > W - 4) x = Math.max(4, p.x - tw - 16);
      if (this.layout && y + th > this.layout.height) y = Math.max(0, p.y - th - 12);
      this.tip.style.left = `${x}px`;
      this.tip.style.top = `${y}px`;
    }

    tooltipHtml(h) {
      const m = this.model;
      const E = H.escapeHtml;
      if (h.marker && h.cluster && h.cluster.length > 1) {
        const list = h.cluster.slice(0, 8).map((mk) =>
          `<div class="hp-tip-row"><span class="hp-tip-time">${E(H.fmtTime(mk.t))}</span> ${E(H.describeEvent(mk.e))}</div>`).join('');
        const more = h.cluster.length > 8 ? `<div class="hp-tip-fields">and ${h.cluster.length - 8} more: zoom in</div>` : '';
        return `<div class="hp-tip-fields">${h.cluster.length} events here${E(this.sinceFault(h.cluster[0].t))} (zoom in to separate them)</div>${list}${more}`;
      }
      if (h.marker) {
        const mk = h.marker;
        return `<div class="hp-tip-time">${E(H.fmtTime(mk.t))}${E(this.sinceFault(mk.t))}</div>` +
               `<div class="hp-tip-main">${E(H.describeEvent(mk.e))}</div>` +
               `<div class="hp-tip-fields">${E(mk.e.kind)}: ${E(H.eventFields(mk.e))}</div>`;
      }
      if (h.strip) {
        const it = m.rowItem(h.strip, h.k);
        return H.lineageTooltip ? H.lineageTooltip(m, it) : '';
      }
      if (h.output !== undefined) return H.lineageTooltip ? H.lineageTooltip(m, { kind: 'output', index: h.output, item: m.outputs[h.output] }) : '';
      if (h.bin !== undefined) {
        const bin = this.rate.bin;
        const c = h.c || { total: 0 };
        let s = `<div class="hp-tip-time">${E(H.fmtTime(h.bin * bin))} – ${E(H.fmtTime((h.bin + 1) * bin))}</div>` +
                `<div class="hp-tip-main">${H.fmtNumber(c.total)} tuples delivered in ${E(H.fmtDuration(bin))}</div>`;
        if (c.duplicate) s += `<div>${c.duplicate} duplicate</div>`;
        if (c.differing) s += `<div>${c.differing} differing</div>`;
        return s;
      }
      if (h.lane) {
        const seg = h.seg;
        if (!seg) return `<div class="hp-tip-main">${E(h.lane.name)}: not started yet</div>`;
        const st = H.stateOf(seg.state);
        const end = seg.t1 === null ? (this.now !== null ? 'now' : 'the end') : H.fmtTime(seg.t1);
        const what = seg.state === 'dead' ? 'dead (crashed; its state is lost)' : st.label;
        return `<div class="hp-tip-main"><b>${E(h.lane.name)}</b>: ${E(what)}</div>` +
               `<div class="hp-tip-time">from ${E(H.fmtTime(seg.t0))} to ${E(end)}</div>`;
      }
      return '';
    }

    sinceFault(t) {
      const f = this.model.faultBefore(t);
      if (!f || t === f.at_us) return '';
      return ` — ${H.fmtDuration(t - f.at_us)} after the ${H.faultOf(f.kind).label} of ${f.node}`;
    }

    // ---- the test hook ----
    summary() {
      const m = this.model;
      return {
        lanes: m.lanes.map((l) => l.name),
        markers: Object.assign({}, m.markerCounts),
        faults: m.faults.length,
        strip: m.counts(),
        outputs: m.outputs.length,
      };
    }
  }

  // ---- drawing helpers ----
  function hexAlpha(hex, a) {
    const h = hex.replace('#', '');
    const r = parseInt(h.slice(0, 2), 16), g = parseInt(h.slice(2, 4), 16), b = parseInt(h.slice(4, 6), 16);
    return `rgba(${r},${g},${b},${a})`;
  }
  H.hexAlpha = hexAlpha;

  // Which marker of a cluster is drawn: the failover story first.
  const PRIORITY = {
    takeover: 10, failure: 9, detection: 8, fenced: 8, standby_lost: 8, fatal: 8, pair_restored: 7,
    restart: 7, replay_gap: 6, held_output_released: 6, resume: 6, heal: 6, rebased: 5,
    replay_request: 4, replay_start: 4, replay_end: 3,
  };
  function priority(mk) {
    return (PRIORITY[mk.e.kind] || 1) + (mk.style.size === 'major' ? 0.5 : 0);
  }

  function roundRect(ctx, x, y, w, h, r) {
    ctx.beginPath();
    ctx.moveTo(x + r, y);
    ctx.arcTo(x + w, y, x + w, y + h, r);
    ctx.arcTo(x + w, y + h, x, y + h, r);
    ctx.arcTo(x, y + h, x, y, r);
    ctx.arcTo(x, y, x + w, y, r);
    ctx.closePath();
  }

  function hatch(ctx, x, y, w, h, color, dir) {
    if (w < 1) return;
    ctx.save();
    ctx.beginPath();
    ctx.rect(x, y, w, h);
    ctx.clip();
    ctx.strokeStyle = color;
    ctx.lineWidth = 2;
    ctx.beginPath();
    const step = 9;
    const x0 = Math.floor(x / step) * step - h;
    for (let xx = x0; xx < x + w + h; xx += step) {
      if (dir > 0) { ctx.moveTo(xx, y + h); ctx.lineTo(xx + h, y); } else { ctx.moveTo(xx, y); ctx.lineTo(xx + h, y + h); }
    }
    ctx.stroke();
    ctx.restore();
  }

  function arrowHead(ctx, x0, y0, x1, y1, color) {
    const a = Math.atan2(y1 - y0, x1 - x0);
    const s = 6;
    ctx.fillStyle = color;
    ctx.beginPath();
    ctx.moveTo(x1, y1);
    ctx.lineTo(x1 - s * Math.cos(a - 0.45), y1 - s * Math.sin(a - 0.45));
    ctx.lineTo(x1 - s * Math.cos(a + 0.45), y1 - s * Math.sin(a + 0.45));
    ctx.closePath();
    ctx.fill();
  }

  function clip(ctx, text, w) {
    if (ctx.measureText(text).width <= w) return text;
    let s = text;
    while (s.length > 1 && ctx.measureText(`${s}…`).width > w) s = s.slice(0, -1);
    return `${s}…`;
  }

  function wrapText(ctx, text, x, y, w, lh) {
    const words = text.split(' ');
    let line = '';
    for (const word of words) {
      const t = line ? `${line} ${word}` : word;
      if (ctx.measureText(t).width > w && line) {
        ctx.fillText(line, x, y);
        y += lh;
        line = word;
      } else line = t;
    }
    if (line) ctx.fillText(line, x, y);
  }

  function fmtTick(v) {
    if (v === 0) return '0';
    if (v >= 100) return String(Math.round(v));
    if (v >= 1) return String(Number(v.toPrecision(3)));
    return String(Number(v.toPrecision(2)));
  }

  // A marker glyph centred at (x, y), radius r: also used by the legend.
  H.drawGlyph = function (ctx, shape, x, y, r, color) {
    ctx.save();
    ctx.lineJoin = 'round';
    ctx.fillStyle = color;
    ctx.strokeStyle = '#000';
    ctx.lineWidth = r >= 7 ? 1.6 : 1;
    const outlined = () => { ctx.fill(); ctx.stroke(); };
    ctx.beginPath();
    switch (shape) {
      case 'cross': {
        const w = r * 0.42;
        ctx.translate(x, y);
        ctx.rotate(Math.PI / 4);
        ctx.rect(-r, -w / 2 - 0.5, 2 * r, w + 1);
        ctx.rect(-w / 2 - 0.5, -r, w + 1, 2 * r);
        ctx.fillStyle = '#fff';
        ctx.lineWidth = 5;
        ctx.strokeStyle = '#fff';
        ctx.stroke();
        ctx.fillStyle = color;
        ctx.beginPath();
        ctx.rect(-r, -w / 2, 2 * r, w);
        ctx.rect(-w / 2, -r, w, 2 * r);
        ctx.fill();
        break;
      }
      case 'pause':
        ctx.rect(x - r * 0.8, y - r, r * 0.6, 2 * r);
        ctx.rect(x + r * 0.2, y - r, r * 0.6, 2 * r);
        outlined();
        break;
      case 'bolt':
        ctx.moveTo(x + r * 0.2, y - r);
        ctx.lineTo(x - r * 0.6, y + r * 0.1);
        ctx.lineTo(x - r * 0.05, y + r * 0.1);
        ctx.lineTo(x - r * 0.3, y + r);
        ctx.lineTo(x + r * 0.6, y - r * 0.15);
        ctx.lineTo(x + r * 0.05, y - r * 0.15);
        ctx.closePath();
        outlined();
        break;
      case 'play':
        ctx.moveTo(x - r * 0.7, y - r);
        ctx.lineTo(x + r, y);
        ctx.lineTo(x - r * 0.7, y + r);
        ctx.closePath();
        outlined();
        break;
      case 'diamond':
        ctx.moveTo(x, y - r * 1.15);
        ctx.lineTo(x + r, y);
        ctx.lineTo(x, y + r * 1.15);
        ctx.lineTo(x - r, y);
        ctx.closePath();
        outlined();
        if (r >= 7) {
          ctx.fillStyle = '#000';
          ctx.fillRect(x - 1, y - r * 0.55, 2, r * 0.65);
          ctx.fillRect(x - 1, y + r * 0.25, 2, 2);
        }
        break;
      case 'star': {
        const R = r * 1.25, ri = R * 0.45;
        for (let i = 0; i < 10; i++) {
          const a = -Math.PI / 2 + (i * Math.PI) / 5;
          const rr = i % 2 ? ri : R;
          if (i) ctx.lineTo(x + rr * Math.cos(a), y + rr * Math.sin(a));
          else ctx.moveTo(x + rr * Math.cos(a), y + rr * Math.sin(a));
        }
        ctx.closePath();
        ctx.lineWidth = 1.8;
        outlined();
        break;
      }
      case 'arrowLeft':
        ctx.moveTo(x - r, y);
        ctx.lineTo(x, y - r);
        ctx.lineTo(x, y - r * 0.4);
        ctx.lineTo(x + r, y - r * 0.4);
        ctx.lineTo(x + r, y + r * 0.4);
        ctx.lineTo(x, y + r * 0.4);
        ctx.lineTo(x, y + r);
        ctx.closePath();
        outlined();
        break;
      case 'arrowUp':
        ctx.moveTo(x, y - r);
        ctx.lineTo(x + r, y);
        ctx.lineTo(x + r * 0.4, y);
        ctx.lineTo(x + r * 0.4, y + r);
        ctx.lineTo(x - r * 0.4, y + r);
        ctx.lineTo(x - r * 0.4, y);
        ctx.lineTo(x - r, y);
        ctx.closePath();
        outlined();
        break;
      case 'bracketL':
      case 'bracketR': {
        const s = shape === 'bracketL' ? 1 : -1;
        ctx.moveTo(x + s * r * 0.6, y - r);
        ctx.lineTo(x - s * r * 0.3, y - r);
        ctx.lineTo(x - s * r * 0.3, y + r);
        ctx.lineTo(x + s * r * 0.6, y + r);
        ctx.lineTo(x + s * r * 0.6, y + r * 0.55);
        ctx.lineTo(x + s * r * 0.15, y + r * 0.55);
        ctx.lineTo(x + s * r * 0.15, y - r * 0.55);
        ctx.lineTo(x + s * r * 0.6, y - r * 0.55);
        ctx.closePath();
        outlined();
        break;
      }
      case 'triangleDown':
        ctx.moveTo(x - r, y - r * 0.8);
        ctx.lineTo(x + r, y - r * 0.8);
        ctx.lineTo(x, y + r);
        ctx.closePath();
        outlined();
        break;
      case 'triangleUp':
        ctx.moveTo(x - r, y + r * 0.8);
        ctx.lineTo(x + r, y + r * 0.8);
        ctx.lineTo(x, y - r);
        ctx.closePath();
        outlined();
        break;
      case 'square':
        ctx.rect(x - r * 0.8, y - r * 0.8, r * 1.6, r * 1.6);
        outlined();
        break;
      case 'squareX':
        ctx.rect(x - r * 0.85, y - r * 0.85, r * 1.7, r * 1.7);
        outlined();
        ctx.beginPath();
        ctx.moveTo(x - r * 0.55, y - r * 0.55);
        ctx.lineTo(x + r * 0.55, y + r * 0.55);
        ctx.moveTo(x + r * 0.55, y - r * 0.55);
        ctx.lineTo(x - r * 0.55, y + r * 0.55);
        ctx.lineWidth = 2;
        ctx.stroke();
        break;
      case 'ring':
        ctx.arc(x, y, r * 0.8, 0, Math.PI * 2);
        ctx.lineWidth = 3;
        ctx.strokeStyle = color;
        ctx.stroke();
        break;
      case 'doubleRing':
        ctx.arc(x, y, r, 0, Math.PI * 2);
        outlined();
        ctx.beginPath();
        ctx.arc(x, y, r * 0.45, 0, Math.PI * 2);
        ctx.fillStyle = '#fff';
        ctx.fill();
        ctx.stroke();
        break;
      case 'circle':
        ctx.arc(x, y, r * 0.85, 0, Math.PI * 2);
        outlined();
        break;
      case 'tick':
        ctx.rect(x - 1, y - r * 1.1, 2, r * 2.2);
        ctx.fill();
        break;
      case 'flag':
        ctx.rect(x - r * 0.7, y - r, 2, 2 * r);
        ctx.fill();
        ctx.beginPath();
        ctx.moveTo(x - r * 0.5, y - r);
        ctx.lineTo(x + r, y - r * 0.55);
        ctx.lineTo(x - r * 0.5, y - r * 0.1);
        ctx.closePath();
        ctx.fill();
        break;
      case 'dot':
      default:
        ctx.arc(x, y, r * 0.8, 0, Math.PI * 2);
        ctx.fill();
        if (r >= 5) { ctx.lineWidth = 0.8; ctx.stroke(); }
        break;
    }
    ctx.restore();
  };

  H.TimelineView = TimelineView;
})();

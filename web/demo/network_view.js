// hapair demo: the network view. The query network as fragments left to right (a column per
// depth in the stream graph); each fragment shows its nodes (the paper's servers) as boxes with
// their current role (primary, passive/active standby, spare, dead, paused, fenced), their output
// queue (length, and the trim mark: the queue holds ids after it), and buttons to kill, pause,
// cut off or restart them. Messages in flight move along the links: batches of tuples (dark,
// replayed ones blue), acks (green level-0, purple level-1), checkpoints to the standby (grey,
// with a pulse when sent and when installed), heartbeats (faint), takeovers and replay requests.
//
// Timing: a message is placed by virtual time ((now - sent_us) / (arrive_us - sent_us)), but
// never faster than a minimum real time on screen (a 100 µs hop lasts 10 ms even at 1/100 of
// real time): what the simulator did in a blink is still seen, slightly after the fact. The
// view draws on demand (draw(realNowMs)); the page calls it once per animation frame.
//
//   const v = new Hapair.NetworkView(container, {onAction: ({kind, node, duration_us, peer}) => …});
//   v.setRun(meta); v.update(answer, {animate}); v.setNow(t_us); v.setSpeed(s); v.draw(performance.now());
(function () {
  'use strict';
  const H = window.Hapair;
  const OI = H.OI;

  const BOX_H = 114, CTL_H = 40, SLOT_GAP = 14, HEAD_H = 30;
  const VIS_MIN_MS = 420, HB_VIS_MS = 260, PER_LINK_MAX = 28;
  const PULSE_MS = 800, FLASH_MS = 3200;

  const PACKETS = {
    tuples:          { color: '#333333', r: 4.5, label: 'batch of tuples' },
    replay:          { color: OI.blue, r: 6.5, label: 'replayed batch', ring: true },
    level0_ack:      { color: OI.green, r: 3.5, label: 'level-0 ack', shape: 'diamond' },
    level1_ack:      { color: OI.purple, r: 4, label: 'level-1 ack (trim)', shape: 'diamond' },
    checkpoint:      { color: '#7a7a7a', r: 7, label: 'checkpoint', shape: 'square' },
    checkpoint_ack:  { color: '#9a9a9a', r: 3, label: 'checkpoint ack', shape: 'square' },
    heartbeat:       { color: 'rgba(0,0,0,0.22)', r: 2.6, label: 'heartbeat' },
    takeover:        { color: OI.yellow, r: 9, label: 'takeover', shape: 'star', text: 'takeover' },
    redirect:        { color: OI.yellow, r: 6, label: 'redirect', shape: 'star' },
    replay_request:  { color: OI.blue, r: 7, label: 'replay request', shape: 'arrow', text: 'replay?' },
    rejoin:          { color: OI.yellow, r: 6, label: 'rejoin', shape: 'diamond', text: 'rejoin' },
    restart_points:  { color: OI.purple, r: 4, label: 'restart point', shape: 'diamond' },
    determinants:    { color: OI.green, r: 3, label: 'determinants' },
    determinant_ack: { color: OI.green, r: 2.5, label: 'determinant ack' },
  };
  const OTHER = { color: '#777777', r: 3.5, label: 'message' };
  H.PACKETS = PACKETS;

  const FLASHES = {
    failure: (e) => ({ text: e.fault === 'crash' ? 'KILLED' : e.fault === 'pause' ? 'PAUSED' : `CUT OFF from ${e.peer}`, color: H.faultOf(e.fault).color }),
    detection: (e) => ({ text: `detects: ${e.failed} failed`, color: OI.orange }),
    takeover: () => ({ text: 'TAKEOVER', color: OI.yellow, dark: true }),
    replay_request: (e) => ({ text: `asks ${e.peer} to replay`, color: OI.blue }),
    duplicates_dropped: (e) => ({ text: `drops ${e.count} duplicates`, color: OI.orange, dark: true }),
    rebased: () => ({ text: 'ids rebased', color: OI.purple }),
    fenced: () => ({ text: 'FENCED', color: OI.purple }),
    pair_restored: () => ({ text: 'PAIR RESTORED', color: OI.green }),
    restart: () => ({ text: 'restarted', color: OI.green }),
    rejoined: () => ({ text: 'rejoined as standby', color: OI.green }),
    standby_lost: (e) => ({ text: `lost standby ${e.standby}`, color: OI.vermillion }),
    resume: () => ({ text: 'resumed', color: OI.green }),
    heal: (e) => ({ text: `link to ${e.peer} healed`, color: OI.green }),
    end_of_output: () => ({ text: 'end of output', color: '#444' }),
  };

  class NetworkView {
    constructor(container, opts) {
      this.opts = Object.assign({ onAction: null }, opts || {});
      this.root = document.createElement('div');
      this.root.className = 'nv-root';
      this.canvas = document.createElement('canvas');
      this.canvas.className = 'nv-canvas';
      this.controls = document.createElement('div');
      this.controls.className = 'nv-controls';
      this.menu = document.createElement('div');
      this.menu.className = 'nv-menu';
      this.menu.hidden = true;
      this.root.append(this.canvas, this.controls, this.menu);
      container.append(this.root);
      this.meta = null;
      this.layout = null;
      this.nodeState = new Map();
      this.now = 0;
      this.speed = 1;
      this.packets = new Map();
      this.pulses = [];
      this.flashes = [];
      this.cuts = [];
      this.queueScale = new Map();
      this.trimSeen = new Map();
      this.enabled = true;
      this.partitionUs = 300000;
      if (window.ResizeObserver) {
        this.ro = new ResizeObserver(() => { this.layout = null; this.dirty = true; });
        this.ro.observe(this.root);
      }
      document.addEventListener('click', (ev) => {
        if (!this.menu.hidden && !this.menu.contains(ev.target) && !(ev.target.closest && ev.target.closest('.nv-ctl'))) this.closeMenu();
      });
    }

    setRun(meta) {
      this.meta = meta;
      this.reset();
      this.setEnabled(true);
      this.layout = null;
      this.buildControls();
    }

    reset() {
      this.packets.clear();
      this.pulses = [];
      this.flashes = [];
      this.cuts = [];
      this.nodeState = new Map();
      this.queueScale = new Map();
      this.trimSeen = new Map();
      this.lastPulse = new Map();
      this.now = 0;
      this.dirty = true;
      this.closeMenu();
    }

    setSpeed(s) { this.speed = s > 0 ? s : 1; }
    setNow(t) { if (t !== this.now) { this.now = t; this.dirty = true; } }
    setEnabled(on) {
      this.enabled = !!on;
      this.root.classList.toggle('nv-disabled', !on);
      for (const b of this.controls.querySelectorAll('button')) b.disabled = !on;
    }

    // ---- data ----
    update(ans, opts) {
      const animate = !opts || opts.animate !== false;
      const real = opts && opts.realNow !== undefined ? opts.realNow : performance.now();
      this.dirty = true;
      this.now = ans.now_us;
      const st = ans.state || {};
      let changed = false;
      for (const n of st.nodes || []) {
        const old = this.nodeState.get(n.name);
        if (!old || old.alive !== n.alive || old.paused !== n.paused || old.role !== n.role) changed = true;
        this.nodeState.set(n.name, n);
      }
      if (changed) this.refreshControls();
      if (ans.ended) this.setEnabled(false);
      for (const e of ans.events || []) this.event(e, animate, real);
      for (const m of st.in_flight || []) this.addPacket(m.from, m.to, m.kind, m.sent_us, m.arrive_us, m.first_id, m.replay, null, real);
      this.cuts = this.cuts.filter((c) => c.until > this.now);
    }

    event(e, animate, real) {
      if (e.kind === 'failure' && e.fault === 'partition') this.cuts.push({ a: e.node, b: e.peer, until: e.t_us + (e.duration_us || 0) });
      if (e.kind === 'heal') this.cuts = this.cuts.filter((c) => !((c.a === e.node && c.b === e.peer) || (c.b === e.node && c.a === e.peer)));
      if (!animate) return;
      if (e.kind === 'batch_sent') this.addPacket(e.node, e.peer, 'tuples', e.t_us, null, e.first_id, !!e.replay, e.count, real);
      else if (e.kind === 'level0_ack' || e.kind === 'level1_ack') this.addPacket(e.node, e.peer, e.kind, e.t_us, null, undefined, false, null, real);
      else if (e.kind === 'checkpoint' && e.standby) {
        this.addPacket(e.node, e.standby, 'checkpoint', e.t_us, null, undefined, false, null, real);
        this.pulse({ node: e.node, born: real, color: '#8c8c8c', text: `checkpoint ${e.checkpoint}` });
      } else if (e.kind === 'checkpoint_installed' || e.kind === 'bootstrap_installed') {
        this.pulse({ node: e.node, born: real + 120, color: OI.sky, text: `installed ${e.checkpoint}` });
      }
      const f = FLASHES[e.kind];
      if (f) {
        const fl = Object.assign({ node: e.node, born: real, t: e.t_us }, f(e));
        this.flashes = this.flashes.filter((x) => !(x.node === fl.node && x.text === fl.text));
        this.flashes.push(fl);
        if (this.flashes.length > 24) this.flashes.shift();
      }
    }

    // A checkpoint pulse, at most one per node every 450 ms of real time (at real speed they
    // would merge into a glow).
    pulse(p) {
      this.lastPulse = this.lastPulse || new Map();
      const last = this.lastPulse.get(p.node);
      if (last !== undefined && p.born - last < 450) return;
      this.lastPulse.set(p.node, p.born);
      this.pulses.push(p);
    }

    addPacket(from, to, kind, sent, arrive, firstId, replay, count, real) {
      if (!this.layout && this.meta) this.computeLayout();
      const L = this.layout;
      if (!L || !L.boxes.has(from) || !L.boxes.has(to)) return;
      const key = `${from}|${to}|${kind}|${sent}|${firstId === undefined || firstId === null ? '' : firstId}`;
      const p = this.packets.get(key);
      if (p) {
        if (arrive !== null && arrive !== undefined) p.arrive = arrive;
        if (count) p.count = count;
        return;
      }
      this.packets.set(key, { key, from, to, kind, sent, arrive: arrive === null || arrive === undefined ? null : arrive, replay: !!replay, count, born: real, link: `${from}|${to}|${kind === 'heartbeat' ? 'hb' : kind === 'tuples' ? 't' : 'c'}` });
      // Bound the dots per link: the oldest go first (at real time they form a stream).
      let n = 0;
      for (const q of this.packets.values()) if (q.link === `${from}|${to}|${kind === 'heartbeat' ? 'hb' : kind === 'tuples' ? 't' : 'c'}`) n++;
      if (n > PER_LINK_MAX) {
        const link = `${from}|${to}|${kind === 'heartbeat' ? 'hb' : kind === 'tuples' ? 't' : 'c'}`;
        let oldest = null;
        for (const q of this.packets.values()) if (q.link === link && (!oldest || q.born < oldest.born)) oldest = q;
        if (oldest) this.packets.delete(oldest.key);
      }
    }

    // The node each fragment routes to now: its alive primary (not fenced, not paused first).
    currentPrimary(frag) {
      let best = null, score = -1;
      for (const name of this.fragNodes(frag)) {
        const s = this.nodeState.get(name);
        if (!s || !s.alive || s.role !== 'primary') continue;
        const sc = (s.paused ? 0 : 2) + (name === frag.primary ? 0 : 1);
        if (sc > score) { score = sc; best = name; }
      }
      return best;
    }
    fragNodes(frag) {
      const out = [];
      if (frag.primary) out.push(frag.primary);
      if (frag.standby) out.push(frag.standby);
      for (const n of (this.meta && this.meta.nodes) || []) if (n.fragment === frag.name && !out.includes(n.name)) out.push(n.name);
      return out;
    }
    neighbours(name) {
      const nd = ((this.meta && this.meta.nodes) || []).find((n) => n.name === name);
      if (!nd) return [];
      const frags = this.meta.fragments || [];
      const f = frags.find((x) => x.name === nd.fragment);
      const out = [];
      if (f) for (const n of this.fragNodes(f)) if (n !== name) out.push(n);
      for (const s of this.meta.streams || []) {
        if (s.producer === nd.fragment) for (const c of s.consumers || []) { const cf = frags.find((x) => x.name === c); if (cf) out.push(...this.fragNodes(cf)); }
        if ((s.consumers || []).includes(nd.fragment)) { const pf = frags.find((x) => x.name === s.producer); if (pf) out.push(...this.fragNodes(pf)); }
      }
      return [...new Set(out)];
    }

    // ---- layout ----
    computeLayout() {
      const meta = this.meta;
      const width = Math.max(520, this.root.clientWidth || 1000);
      const frags = meta.fragments || [];
      const byName = new Map(frags.map((f) => [f.name, f]));
      const producerOf = new Map((meta.streams || []).map((s) => [s.name, s.producer]));
      const depth = new Map();
      const depthOf = (f, seen) => {
        if (depth.has(f.name)) return depth.get(f.name);
        if (seen.has(f.name)) return 0;
        seen.add(f.name);
        let d = 0;
        for (const s of f.inputs || []) {
          const p = byName.get(producerOf.get(s));
          if (p) d = Math.max(d, depthOf(p, seen) + 1);
        }
        depth.set(f.name, d);
        return d;
      };
      for (const f of frags) depthOf(f, new Set());
      const cols = [];
      for (const f of frags) (cols[depth.get(f.name)] = cols[depth.get(f.name)] || []).push(f);
      const ncol = Math.max(1, cols.length);
      const margin = 16;
      const colW = (width - 2 * margin) / ncol;
      const bw = Math.max(118, Math.min(230, colW - (colW < 220 ? 26 : 44)));
      const boxes = new Map();
      const groups = [];
      let height = 0;
      cols.forEach((list, ci) => {
        let y = 10;
        const cx = margin + colW * (ci + 0.5);
        for (const f of list || []) {
          const names = this.fragNodes(f);
          const g = { frag: f, x: cx - bw / 2 - 10, y, w: bw + 20, h: HEAD_H + names.length * (BOX_H + CTL_H + SLOT_GAP) };
          groups.push(g);
          names.forEach((name, i) => {
            const by = y + HEAD_H + i * (BOX_H + CTL_H + SLOT_GAP);
            boxes.set(name, { name, frag: f, x: cx - bw / 2, y: by, w: bw, h: BOX_H, slot: i });
          });
          y += g.h + 16;
        }
        height = Math.max(height, y);
      });
      this.layout = { width, height: Math.max(height, 160), boxes, groups, bw };
      this.sizeCanvas();
      this.placeControls();
      return this.layout;
    }

    sizeCanvas() {
      const L = this.layout;
      const dpr = window.devicePixelRatio || 1;
      const W = Math.round(L.width * dpr), Hh = Math.round(L.height * dpr);
      if (this.canvas.width !== W || this.canvas.height !== Hh) {
        this.canvas.width = W;
        this.canvas.height = Hh;
        this.canvas.style.width = `${L.width}px`;
        this.canvas.style.height = `${L.height}px`;
      }
      this.root.style.height = `${L.height}px`;
      this.dpr = dpr;
    }

    // ---- the buttons on each node ----
    buildControls() {
      this.controls.textContent = '';
      this.ctl = new Map();
      for (const n of this.meta.nodes || []) {
        const div = document.createElement('div');
        div.className = 'nv-ctl';
        div.dataset.node = n.name;
        const mk = (act, label, title) => {
          const b = document.createElement('button');
          b.type = 'button';
          b.className = `nv-btn nv-${act}`;
          b.dataset.act = act;
          b.dataset.node = n.name;
          b.textContent = label;
          b.title = title;
          b.setAttribute('aria-label', `${label} ${n.name}`);
          b.addEventListener('click', (ev) => { ev.stopPropagation(); this.onButton(act, n.name, b); });
          div.append(b);
          return b;
        };
        const c = {
          div,
          crash: mk('crash', 'Kill', `kill ${n.name} (SIGKILL): the process and its state are gone`),
          pause: mk('pause', 'Pause', `pause ${n.name} (SIGSTOP) for a while: alive but silent`),
          partition: mk('partition', 'Cut', `cut ${n.name}'s link to a neighbour for a while (network partition)`),
          restart: mk('restart', 'Restart', `start ${n.name}'s process again: it rejoins as a standby`),
        };
        this.ctl.set(n.name, c);
        this.controls.append(div);
      }
      this.refreshControls();
    }

    refreshControls() {
      if (!this.ctl) return;
      for (const [name, c] of this.ctl) {
        const s = this.nodeState.get(name);
        const alive = !s || s.alive;
        c.crash.hidden = !alive;
        c.pause.hidden = !alive || (s && s.paused);
        c.partition.hidden = !alive;
        c.restart.hidden = alive;
      }
    }

    placeControls() {
      const L = this.layout;
      if (!L || !this.ctl) return;
      for (const [name, c] of this.ctl) {
        const b = L.boxes.get(name);
        if (!b) { c.div.hidden = true; continue; }
        c.div.hidden = false;
        c.div.style.left = `${b.x}px`;
        c.div.style.top = `${b.y + b.h + 4}px`;
        c.div.style.width = `${b.w}px`;
      }
    }

    onButton(act, node, btn) {
      if (!this.enabled) return;
      if (act === 'crash' || act === 'restart') {
        this.closeMenu();
        this.fire({ kind: act, node });
        return;
      }
      if (!this.menu.hidden && this.menu.dataset.for === `${act}|${node}`) { this.closeMenu(); return; }
      this.menu.textContent = '';
      this.menu.dataset.for = `${act}|${node}`;
      const title = document.createElement('div');
      title.className = 'nv-menu-title';
      const row = (label) => { const d = document.createElement('div'); d.className = 'nv-menu-row'; if (label) { const s = document.createElement('span'); s.textContent = label; d.append(s); } this.menu.append(d); return d; };
      const btnIn = (parent, text, fn, cls) => { const b = document.createElement('button'); b.type = 'button'; b.textContent = text; if (cls) b.className = cls; b.addEventListener('click', (ev) => { ev.stopPropagation(); fn(b); }); parent.append(b); return b; };
      const durations = [[100000, '100 ms'], [300000, '300 ms'], [1000000, '1 s'], [3000000, '3 s']];
      if (act === 'pause') {
        title.textContent = `Pause ${node} (SIGSTOP) for`;
        this.menu.append(title);
        const r = row();
        for (const [us, label] of durations) btnIn(r, label, () => { this.closeMenu(); this.fire({ kind: 'pause', node, duration_us: us }); }).dataset.us = us;
      } else {
        title.textContent = `Cut ${node}'s link to`;
        this.menu.append(title);
        const rd = row('for');
        const durBtns = [];
        for (const [us, label] of durations.slice(0, 3)) {
          const b = btnIn(rd, label, () => { this.partitionUs = us; for (const x of durBtns) x.classList.toggle('on', Number(x.dataset.us) === us); }, 'nv-dur');
          b.dataset.us = us;
          b.classList.toggle('on', us === this.partitionUs);
          durBtns.push(b);
        }
        const rp = row();
        for (const peer of this.neighbours(node)) btnIn(rp, peer, () => { this.closeMenu(); this.fire({ kind: 'partition', node, peer, duration_us: this.partitionUs }); }, 'nv-peer').dataset.peer = peer;
      }
      this.menu.hidden = false;
      const r = btn.getBoundingClientRect(), rr = this.root.getBoundingClientRect();
      const left = Math.min(Math.max(0, r.left - rr.left), Math.max(0, rr.width - 300));
      this.menu.style.left = `${left}px`;
      this.menu.style.top = `${r.bottom - rr.top + 4}px`;
    }
    closeMenu() { this.menu.hidden = true; this.menu.dataset.for = ''; }
    fire(action) { if (this.opts.onAction) this.opts.onAction(action); }

    // ---- drawing ----
    draw(realNow) {
      if (!this.meta) return false;
      if (!this.layout || (this.root.clientWidth && Math.abs(this.root.clientWidth - this.layout.width) > 1)) this.computeLayout();
      const L = this.layout;
      const ctx = this.canvas.getContext('2d');
      ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
      ctx.clearRect(0, 0, L.width, L.height);
      this.drawGroups(ctx);
      this.drawLinks(ctx);
      this.drawCuts(ctx);
      for (const b of L.boxes.values()) this.drawBox(ctx, b, realNow);
      this.drawPackets(ctx, realNow);
      this.drawPulses(ctx, realNow);
      this.drawFlashes(ctx, realNow);
      this.lastDraw = realNow;
      this.dirty = false;
      // Still moving: dots, pulses, labels that fade.
      return this.packets.size > 0 || this.pulses.length > 0 || (!this.paused && this.flashes.length > 0);
    }
    setPaused(on) { this.paused = !!on; }

    font(size, weight) { return `${weight || 400} ${size}px system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif`; }

    drawGroups(ctx) {
      for (const g of this.layout.groups) {
        ctx.fillStyle = '#f3f5f7';
        ctx.strokeStyle = '#c9d0d6';
        ctx.lineWidth = 1;
        roundRect(ctx, g.x, g.y, g.w, g.h - SLOT_GAP + 4, 10);
        ctx.fill();
        ctx.stroke();
        ctx.fillStyle = '#222';
        ctx.font = this.font(15, 700);
        ctx.textAlign = 'left';
        ctx.textBaseline = 'middle';
        const ops = (g.frag.operators || []).map((o) => (o.kind === g.frag.name ? o.name : o.kind)).join(', ');
        let label = g.frag.kind === 'operators' ? `${g.frag.name}${ops ? ` · ${ops}` : ''}` : g.frag.name === g.frag.kind ? g.frag.name : `${g.frag.name} (${g.frag.kind})`;
        if (ctx.measureText(label).width > g.w - 16) label = g.frag.name;
        ctx.fillText(clip(ctx, label, g.w - 16), g.x + 10, g.y + HEAD_H / 2 + 1);
      }
    }

    anchor(a, b, off) {
      const ca = { x: a.x + a.w / 2, y: a.y + a.h / 2 }, cb = { x: b.x + b.w / 2, y: b.y + b.h / 2 };
      const dx = cb.x - ca.x, dy = cb.y - ca.y;
      const len = Math.hypot(dx, dy) || 1;
      const nx = -dy / len, ny = dx / len;
      const exit = (box, c, sx, sy) => {
        const tx = sx !== 0 ? (box.w / 2) / Math.abs(sx) : Infinity;
        const ty = sy !== 0 ? (box.h / 2) / Math.abs(sy) : Infinity;
        const t = Math.min(tx, ty);
        return { x: c.x + sx * t, y: c.y + sy * t };
      };
      const ux = dx / len, uy = dy / len;
      const p0 = exit(a, ca, ux, uy), p1 = exit(b, cb, -ux, -uy);
      return { x0: p0.x + nx * off, y0: p0.y + ny * off, x1: p1.x + nx * off, y1: p1.y + ny * off };
    }

    drawLinks(ctx) {
      const L = this.layout;
      const meta = this.meta;
      const frags = new Map((meta.fragments || []).map((f) => [f.name, f]));
      ctx.save();
      for (const s of meta.streams || []) {
        const pf = frags.get(s.producer);
        if (!pf) continue;
        const pcur = this.currentPrimary(pf);
        for (const cname of s.consumers || []) {
          const cf = frags.get(cname);
          if (!cf) continue;
          const ccur = this.currentPrimary(cf);
          for (const a of this.fragNodes(pf)) for (const b of this.fragNodes(cf)) {
            const A = L.boxes.get(a), B = L.boxes.get(b);
            if (!A || !B) continue;
            const main = a === pcur && b === ccur;
            const sb = this.nodeState.get(b);
            const feed = a === pcur && sb && sb.alive && sb.role === 'active_backup';
            const g = this.anchor(A, B, 0);
            ctx.strokeStyle = main ? '#555' : feed ? '#777' : '#dcdcdc';
            ctx.lineWidth = main ? 3 : feed ? 2 : 1.2;
            ctx.setLineDash(feed ? [7, 5] : []);
            ctx.beginPath();
            ctx.moveTo(g.x0, g.y0);
            ctx.lineTo(g.x1, g.y1);
            ctx.stroke();
            if (main || feed) arrowHead(ctx, g.x0, g.y0, g.x1, g.y1, ctx.strokeStyle, 9);
            if (main) {
              ctx.setLineDash([]);
              ctx.font = this.font(13, 600);
              ctx.fillStyle = '#333';
              ctx.textAlign = 'center';
              ctx.textBaseline = 'bottom';
              const mx = (g.x0 + g.x1) / 2, my = (g.y0 + g.y1) / 2;
              const tw = ctx.measureText(s.name).width + 8;
              ctx.fillStyle = 'rgba(255,255,255,0.9)';
              ctx.fillRect(mx - tw / 2, my - 22, tw, 16);
              ctx.fillStyle = '#333';
              ctx.fillText(s.name, mx, my - 7);
            }
          }
        }
      }
      // Pair links: primary ↔ standby (heartbeats, checkpoints).
      ctx.setLineDash([3, 4]);
      ctx.strokeStyle = '#9aa4ae';
      ctx.lineWidth = 1.5;
      for (const f of meta.fragments || []) {
        const names = this.fragNodes(f);
        for (let i = 1; i < names.length; i++) {
          const A = L.boxes.get(names[0]), B = L.boxes.get(names[i]);
          if (!A || !B) continue;
          const g = this.anchor(A, B, 0);
          ctx.beginPath();
          ctx.moveTo(g.x0, g.y0);
          ctx.lineTo(g.x1, g.y1);
          ctx.stroke();
        }
      }
      ctx.restore();
    }

    drawCuts(ctx) {
      const L = this.layout;
      for (const c of this.cuts) {
        const A = L.boxes.get(c.a), B = L.boxes.get(c.b);
        if (!A || !B || c.until <= this.now) continue;
        const g = this.anchor(A, B, 0);
        ctx.save();
        ctx.strokeStyle = H.faultOf('partition').color;
        ctx.lineWidth = 4;
        ctx.setLineDash([8, 6]);
        ctx.beginPath();
        ctx.moveTo(g.x0, g.y0);
        ctx.lineTo(g.x1, g.y1);
        ctx.stroke();
        ctx.setLineDash([]);
        const mx = (g.x0 + g.x1) / 2, my = (g.y0 + g.y1) / 2;
        H.drawGlyph(ctx, 'bolt', mx, my, 13, H.faultOf('partition').color);
        label(ctx, `cut for ${H.fmtDuration(c.until - this.now)}`, mx, my + 26, '#fff', H.faultOf('partition').color, this.font(13, 700));
        ctx.restore();
      }
    }

    drawBox(ctx, b, realNow) {
      const s = this.nodeState.get(b.name);
      const role = !s ? 'unknown' : !s.alive ? 'dead' : s.role || 'unknown';
      const st = H.stateOf(role);
      const cur = s && s.alive && s.role === 'primary' && this.currentPrimary(b.frag) === b.name;
      ctx.save();
      // Body
      ctx.fillStyle = '#ffffff';
      roundRect(ctx, b.x, b.y, b.w, b.h, 8);
      ctx.fill();
      // Role band
      ctx.save();
      roundRect(ctx, b.x, b.y, b.w, b.h, 8);
      ctx.clip();
      ctx.fillStyle = st.fill;
      ctx.fillRect(b.x, b.y, b.w, 30);
      if (role === 'dead') {
        ctx.fillStyle = 'rgba(58,58,58,0.88)';
        ctx.fillRect(b.x, b.y, b.w, b.h);
        hatch(ctx, b.x, b.y, b.w, b.h, 'rgba(255,255,255,0.16)');
      }
      if (s && s.paused) {
        ctx.fillStyle = H.hexAlpha(OI.orange, 0.28);
        ctx.fillRect(b.x, b.y, b.w, b.h);
        hatch(ctx, b.x, b.y, b.w, b.h, H.hexAlpha(OI.orange, 0.5));
      }
      ctx.restore();
      ctx.strokeStyle = cur ? '#000' : role === 'dead' ? '#222' : '#8a8a8a';
      ctx.lineWidth = cur ? 3 : 1.5;
      roundRect(ctx, b.x, b.y, b.w, b.h, 8);
      ctx.stroke();
      ctx.textAlign = 'center';
      ctx.textBaseline = 'middle';
      ctx.font = this.font(15, 700);
      ctx.fillStyle = role === 'dead' ? '#fff' : st.text;
      const roleText = role === 'dead' ? 'DEAD (crashed)' : s && s.paused ? `${st.label} · PAUSED` : role === 'primary' ? 'PRIMARY' : st.label;
      ctx.fillText(clip(ctx, roleText, b.w - 10), b.x + b.w / 2, b.y + 16);
      ctx.font = this.font(18, 700);
      ctx.fillStyle = role === 'dead' ? '#fff' : '#111';
      ctx.fillText(clip(ctx, b.name, b.w - 12), b.x + b.w / 2, b.y + 46);
      if (s) this.drawQueue(ctx, b, s, realNow);
      ctx.restore();
    }

    drawQueue(ctx, b, s, realNow) {
      const streams = Object.keys(s.output_queue || {});
      if (!streams.length) {
        if (s.input_queue) {
          ctx.font = this.font(13, 400);
          ctx.fillStyle = s.alive ? '#444' : '#ddd';
          ctx.fillText(`${s.input_queue} waiting`, b.x + b.w / 2, b.y + 76);
        }
        return;
      }
      const st = streams[0];
      const len = s.output_queue[st] || 0;
      const trimmed = (s.trimmed_up_to || {})[st] || 0;
      const last = (s.last_id || {})[st] || 0;
      const span = Math.max(len, last - trimmed, 0);
      const key = `${b.name}|${st}`;
      const scale = Math.max(50, this.queueScale.get(key) || 0, span * 1.25);
      this.queueScale.set(key, scale);
      const x0 = b.x + 10, w = b.w - 20, y = b.y + 72, h = 11;
      ctx.fillStyle = s.alive ? '#eef0f2' : 'rgba(255,255,255,0.2)';
      ctx.fillRect(x0, y, w, h);
      const fw = (span / scale) * w;
      ctx.fillStyle = s.alive ? H.hexAlpha(OI.blue, 0.55) : 'rgba(255,255,255,0.35)';
      ctx.fillRect(x0 + w - fw, y, fw, h);
      // The trim mark: the queue holds ids after it; it jumps right when the queue is trimmed.
      const tx = x0 + w - fw;
      const prevTrim = this.trimSeen.get(key);
      if (prevTrim === undefined || prevTrim.v !== trimmed) this.trimSeen.set(key, { v: trimmed, at: realNow });
      const flash = prevTrim && realNow - this.trimSeen.get(key).at < 500 && prevTrim.v !== undefined;
      ctx.fillStyle = flash ? OI.vermillion : s.alive ? '#111' : '#fff';
      ctx.fillRect(tx - 1.5, y - 4, 3, h + 8);
      ctx.textBaseline = 'alphabetic';
      ctx.fillStyle = s.alive ? '#333' : '#eee';
      ctx.font = this.font(12, 600);
      const both = `queue ${H.fmtNumber(len)}`, trim = `trim ≤ ${trimmed}`;
      if (ctx.measureText(`${both}  ${trim}`).width <= w) {
        ctx.textAlign = 'left';
        ctx.fillText(both, x0, y - 3);
        ctx.textAlign = 'right';
        ctx.fillText(trim, x0 + w, y - 3);
      } else {
        ctx.textAlign = 'left';
        ctx.fillText(clip(ctx, `q ${H.fmtNumber(len)} · ≤ ${trimmed}`, w), x0, y - 3);
      }
      ctx.textBaseline = 'middle';
      ctx.textAlign = 'center';
    }

    packetStyle(p) {
      if (p.kind === 'tuples') return p.replay ? PACKETS.replay : PACKETS.tuples;
      return PACKETS[p.kind] || OTHER;
    }

    drawPackets(ctx, realNow) {
      const L = this.layout;
      const dead = [];
      const texts = [];
      const textOn = new Set();
      // Heartbeats first (faint, underneath), replays last (on top).
      const order = (p) => (p.kind === 'heartbeat' ? 0 : p.replay ? 3 : p.kind === 'tuples' ? 1 : 2);
      const list = [...this.packets.values()].sort((a, b) => order(a) - order(b));
      for (const p of list) {
        const A = L.boxes.get(p.from), B = L.boxes.get(p.to);
        if (!A || !B) { dead.push(p.key); continue; }
        const arrive = p.arrive !== null ? p.arrive : p.sent + 150;
        const flight = Math.max(1, arrive - p.sent);
        const pv = Math.max(0, Math.min(1, (this.now - p.sent) / flight));
        const visMs = Math.max(p.kind === 'heartbeat' ? HB_VIS_MS : VIS_MIN_MS, flight / 1000 / this.speed);
        const pr = Math.max(0, (realNow - p.born) / visMs);
        const t = Math.min(pv, pr);
        if (pv >= 1 && pr >= 1) { dead.push(p.key); continue; }
        if (this.now < p.sent) continue;  // after a rewind: not sent yet
        const off = p.from < p.to ? 5 : -5;
        const g = this.anchor(A, B, off);
        const x = g.x0 + (g.x1 - g.x0) * t, y = g.y0 + (g.y1 - g.y0) * t;
        const st = this.packetStyle(p);
        let r = st.r;
        if (p.kind === 'tuples' && p.count) r += Math.min(4, Math.sqrt(p.count) * 0.45);
        drawDot(ctx, st, x, y, r);
        // Words on a dot only in mid-flight and once per link (they would pile up at the ends).
        const mid = t > 0.12 && t < 0.88;
        if (mid && st.text && !textOn.has(`${p.from}|${p.to}|${st.text}`)) { textOn.add(`${p.from}|${p.to}|${st.text}`); texts.push([st.text, x, y - r - 10, st.color]); }
        else if (mid && p.replay && p.count && !textOn.has(`${p.from}|${p.to}|n`)) { textOn.add(`${p.from}|${p.to}|n`); texts.push([`${p.count}`, x, y - r - 9, OI.blue]); }
      }
      for (const k of dead) this.packets.delete(k);
      for (const [t, x, y, c] of texts) label(ctx, t, x, y, c === OI.yellow ? '#000' : '#fff', c, this.font(12, 700));
    }

    drawPulses(ctx, realNow) {
      const L = this.layout;
      this.pulses = this.pulses.filter((p) => realNow - p.born < PULSE_MS);
      for (const p of this.pulses) {
        const b = L.boxes.get(p.node);
        if (!b) continue;
        const a = (realNow - p.born) / PULSE_MS;
        if (a < 0) continue;
        ctx.save();
        ctx.strokeStyle = H.hexAlpha(p.color.startsWith('#') ? p.color : '#8c8c8c', Math.max(0, 0.9 - a));
        ctx.lineWidth = 2.5;
        const g = 3 + a * 12;
        roundRect(ctx, b.x - g, b.y - g, b.w + 2 * g, b.h + 2 * g, 10 + g);
        ctx.stroke();
        ctx.restore();
      }
    }

    // The newest notable event of each node, on the box's last line ("TAKEOVER", "drops 40
    // duplicates"), for a few seconds of running time.
    drawFlashes(ctx, realNow) {
      const L = this.layout;
      const life = FLASH_MS;
      // While the run is paused the labels stay (the teacher is explaining them).
      if (this.paused && this.lastDraw !== undefined) for (const f of this.flashes) f.born += realNow - this.lastDraw;
      this.flashes = this.flashes.filter((f) => realNow - f.born < life);
      const newest = new Map();
      for (const f of this.flashes) newest.set(f.node, f);
      for (const f of newest.values()) {
        const b = L.boxes.get(f.node);
        if (!b) continue;
        const a = Math.min(1, Math.max(0.3, 1 - (realNow - f.born - life * 0.7) / (life * 0.3)));
        ctx.save();
        ctx.globalAlpha = a;
        ctx.font = this.font(14, 800);
        label(ctx, clip(ctx, f.text, b.w + 20), b.x + b.w / 2, b.y + b.h - 15, f.dark ? '#000' : '#fff', f.color, this.font(14, 800), true);
        ctx.restore();
      }
    }
  }

  // ---- drawing helpers ----
  function roundRect(ctx, x, y, w, h, r) {
    ctx.beginPath();
    ctx.moveTo(x + r, y);
    ctx.arcTo(x + w, y, x + w, y + h, r);
    ctx.arcTo(x + w, y + h, x, y + h, r);
    ctx.arcTo(x, y + h, x, y, r);
    ctx.arcTo(x, y, x + w, y, r);
    ctx.closePath();
  }
  function hatch(ctx, x, y, w, h, color) {
    ctx.save();
    ctx.beginPath();
    ctx.rect(x, y, w, h);
    ctx.clip();
    ctx.strokeStyle = color;
    ctx.lineWidth = 3;
    ctx.beginPath();
    for (let xx = x - h; xx < x + w + h; xx += 12) { ctx.moveTo(xx, y + h); ctx.lineTo(xx + h, y); }
    ctx.stroke();
    ctx.restore();
  }
  function arrowHead(ctx, x0, y0, x1, y1, color, s) {
    const a = Math.atan2(y1 - y0, x1 - x0);
    ctx.save();
    ctx.setLineDash([]);
    ctx.fillStyle = color;
    ctx.beginPath();
    ctx.moveTo(x1, y1);
    ctx.lineTo(x1 - s * Math.cos(a - 0.42), y1 - s * Math.sin(a - 0.42));
    ctx.lineTo(x1 - s * Math.cos(a + 0.42), y1 - s * Math.sin(a + 0.42));
    ctx.closePath();
    ctx.fill();
    ctx.restore();
  }
  function clip(ctx, text, w) {
    if (ctx.measureText(text).width <= w) return text;
    let s = text;
    while (s.length > 1 && ctx.measureText(`${s}…`).width > w) s = s.slice(0, -1);
    return `${s}…`;
  }
  function label(ctx, text, x, y, fg, bg, font, big) {
    ctx.save();
    ctx.font = font;
    const w = ctx.measureText(text).width + (big ? 14 : 10);
    const h = big ? 22 : 18;
    ctx.fillStyle = bg;
    roundRect(ctx, x - w / 2, y - h / 2, w, h, h / 2);
    ctx.fill();
    ctx.strokeStyle = 'rgba(0,0,0,0.45)';
    ctx.lineWidth = 1;
    ctx.stroke();
    ctx.fillStyle = fg;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    ctx.fillText(text, x, y + 1);
    ctx.restore();
  }
  function drawDot(ctx, st, x, y, r) {
    ctx.save();
    ctx.fillStyle = st.color;
    ctx.strokeStyle = st.ring ? '#fff' : 'rgba(0,0,0,0.55)';
    ctx.lineWidth = st.ring ? 2 : 1;
    ctx.beginPath();
    if (st.shape === 'diamond') {
      ctx.moveTo(x, y - r * 1.2); ctx.lineTo(x + r, y); ctx.lineTo(x, y + r * 1.2); ctx.lineTo(x - r, y); ctx.closePath();
    } else if (st.shape === 'square') {
      ctx.rect(x - r * 0.8, y - r * 0.8, r * 1.6, r * 1.6);
    } else if (st.shape === 'star' || st.shape === 'arrow') {
      ctx.restore();
      H.drawGlyph(ctx, st.shape === 'star' ? 'star' : 'arrowLeft', x, y, r, st.color);
      return;
    } else {
      ctx.arc(x, y, r, 0, Math.PI * 2);
    }
    ctx.fill();
    if (st.ring || r >= 4) ctx.stroke();
    if (st.ring) { ctx.strokeStyle = st.color; ctx.lineWidth = 1.5; ctx.beginPath(); ctx.arc(x, y, r + 2.5, 0, Math.PI * 2); ctx.stroke(); }
    ctx.restore();
  }
  NetworkView.drawDot = drawDot;

  H.NetworkView = NetworkView;
})();

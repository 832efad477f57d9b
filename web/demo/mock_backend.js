// hapair demo: a FAKE demo service for developing and testing the page without the C++ server
// (docs/DEMO.md's session protocol: networks, create, advance, step, fault, close). Never
// included by index.html: tests inject it (window.hapairDemoBackend = new Hapair.MockBackend())
// and index.html?backend=mock loads it by hand.
//
// It is a small discrete-event simulator of the default network only (source → filter →
// aggregate → sink, 2000 tuples/s in batches of 5 every 2.5 ms, a filter keeping value < 80, a
// sum per key over 200 ms windows sliding by 20 ms, 8 keys), modelled on the traces the real
// simulator writes (`hapair run --driver sim --trace data`): the same event kinds and fields,
// the same node names (filter.backup / aggregate.spare …), level-0 and level-1 acks, queue
// trimming, checkpoints (passive), restart points (upstream), duplicate elimination by id,
// connection and heartbeat detection, takeover, replay, rebased ids (amnesia), fencing after a
// pause, rejoin after a restart. Its numbers are plausible, not the real protocol's.
(function (root) {
  'use strict';
  const H = (root.Hapair = root.Hapair || {});

  const LAT_US = 100, JITTER_US = 30;
  const SRC_PERIOD_US = 2500, SRC_BATCH = 5, TS_STEP_US = 500;
  const HB_US = 10000, TIMEOUT_US = 30000, ACK_US = 20000, CKPT_US = 100000;
  const WINDOW_US = 200000, SLIDE_US = 20000, KEYS = 8, KEEP_BELOW = 80;
  const BATCH_MAX = 100, MISSING_AFTER_US = 300000, DRAIN_US = 1500000;
  const APPROACHES = ['none', 'amnesia', 'upstream', 'passive', 'active'];

  function hash32(a, b) {
    let h = (Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x632be5ab, 0xc2b2ae35)) >>> 0;
    h ^= h >>> 16; h = Math.imul(h, 0x7feb352d) >>> 0; h ^= h >>> 15; h = Math.imul(h, 0x846ca68b) >>> 0; h ^= h >>> 16;
    return h >>> 0;
  }
  const hex16 = (a, b) => hash32(a, b).toString(16).padStart(8, '0') + hash32(b, a + 7).toString(16).padStart(8, '0');
  function sourceTuple(id, seed) {
    return { id, ts: id * TS_STEP_US, key: hash32(id, seed) % KEYS, value: hash32(id + 1e6, seed) % 100 };
  }

  // ---- the aggregate: sum per key over sliding windows (end W holds ts in (W - WINDOW, W]) ----
  function aggNew() { return { windows: new Map(), nextW: SLIDE_US, nextOut: 1 }; }
  function aggCopy(a) {
    const w = new Map();
    for (const [k, m] of a.windows) w.set(k, new Map(m));
    return { windows: w, nextW: a.nextW, nextOut: a.nextOut };
  }
  function aggAdd(a, t) {
    const first = Math.max(a.nextW, Math.ceil(t.ts / SLIDE_US) * SLIDE_US);
    for (let W = first; W < t.ts + WINDOW_US; W += SLIDE_US) {
      let m = a.windows.get(W);
      if (!m) a.windows.set(W, (m = new Map()));
      m.set(t.key, (m.get(t.key) || 0) + t.value);
    }
  }
  function aggEmit(a, upTo, out) {  // closes every window W < upTo
    while (a.nextW < upTo) {
      const W = a.nextW;
      const m = a.windows.get(W);
      if (m) {
        for (const key of [...m.keys()].sort((x, y) => x - y))
          out.push({ id: a.nextOut++, ts: W, key, value: m.get(key), lineage: hex16(W / SLIDE_US, key + 101) });
        a.windows.delete(W);
      }
      a.nextW += SLIDE_US;
    }
  }

  // The failure-free reference output of the run: every window over every kept source tuple.
  function reference(seed, durationUs) {
    const a = aggNew();
    const last = Math.floor(durationUs / TS_STEP_US);
    const out = [];
    for (let id = 1; id <= last; id++) {
      const t = sourceTuple(id, seed);
      if (t.value >= KEEP_BELOW) continue;
      aggEmit(a, t.ts, out);
      aggAdd(a, t);
    }
    aggEmit(a, last * TS_STEP_US + WINDOW_US, out);
    return out.map((o) => Object.assign(o, { refAt: Math.min(o.ts, durationUs) + 900 }));
  }

  // ---- one simulated run ----
  class MockSim {
    constructor({ ha, seed, durationUs, faults }) {
      this.ha = ha;
      this.seed = seed;
      this.durationUs = durationUs;
      this.now = 0;
      this.seq = 0;
      this.queue = [];
      this.inflight = new Map();
      this.linkLast = new Map();
      this.msgSeq = 0;
      this.events = [];
      this.outputs = [];
      this.missing = [];
      this.cuts = [];  // {a, b, until}
      this.endUs = durationUs + DRAIN_US;
      this.ended = false;
      this.rng = hash32(seed, 77) || 1;
      this.buildNetwork();
      this.ref = reference(seed, durationUs);
      this.refByLineage = new Map(this.ref.map((r) => [r.lineage, r]));
      this.delivered = new Set();
      this.reportedMissing = new Set();
      this.refDecided = 0;
      for (const f of faults || []) this.scheduleFault(f);
      for (const n of this.nodes.values()) this.startNode(n, 0);
      this.at(SRC_PERIOD_US, this.node('source'), (n) => this.sourceTick(n));
    }

    rand() { this.rng = hash32(this.rng, 12345); return this.rng / 4294967296; }

    buildNetwork() {
      const ha = this.ha;
      const stby = ha === 'passive' || ha === 'active' ? 'backup' : 'spare';
      const mk = (name, fragment, planned, extra) => Object.assign({ name, fragment, planned, alive: true, paused: false, inc: 1,
        role: null, inLast: {}, outQ: [], trimmed: 0, lastId: 0, eosOut: false, eosIn: false, route: {}, heard: {},
        warned: {}, ckpt: 0, installed: null, deferred: [], epoch: 0, acked0: {}, gen: 0, startRole: null }, extra || {});
      this.fragments = [
        { name: 'source', kind: 'source', ha: 'none', primary: 'source', standby: null, inputs: [], outputs: ['raw'], operators: [] },
        { name: 'filter', kind: 'operators', ha, primary: 'filter', standby: ha === 'none' ? null : `filter.${stby}`, inputs: ['raw'], outputs: ['small'],
          operators: [{ name: 'keep_small', kind: 'filter' }] },
        { name: 'aggregate', kind: 'operators', ha, primary: 'aggregate', standby: ha === 'none' ? null : `aggregate.${stby}`, inputs: ['small'], outputs: ['totals'],
          operators: [{ name: 'sum_per_key', kind: 'aggregate' }] },
        { name: 'sink', kind: 'sink', ha: 'none', primary: 'sink', standby: null, inputs: ['totals'], outputs: [], operators: [] },
      ];
      this.streams = [
        { name: 'raw', producer: 'source', consumers: ['filter'], lineage: 'source' },
        { name: 'small', producer: 'filter', consumers: ['aggregate'], lineage: 'source' },
        { name: 'totals', producer: 'aggregate', consumers: ['sink'], lineage: 'window' },
      ];
      this.frag = new Map(this.fragments.map((f) => [f.name, Object.assign({ epoch: 0, current: f.primary }, f)]));
      this.nodes = new Map();
      for (const f of this.fragments) {
        this.nodes.set(f.primary, mk(f.primary, f.name, 'primary'));
        if (f.standby) this.nodes.set(f.standby, mk(f.standby, f.name, 'standby'));
      }
      for (const n of this.nodes.values()) {
        n.op = n.fragment === 'aggregate' ? 'aggregate' : n.fragment === 'filter' ? 'filter' : n.fragment;
        n.agg = n.op === 'aggregate' ? aggNew() : null;
        n.inStream = { filter: 'raw', aggregate: 'small', sink: 'totals' }[n.fragment] || null;
        n.outStream = { source: 'raw', filter: 'small', aggregate: 'totals' }[n.fragment] || null;
        for (const f of this.fragments) n.route[f.name] = f.primary;
      }
    }

    meta() {
      const names = { none: 'no HA', amnesia: 'amnesia', upstream: 'upstream backup', passive: 'passive standby', active: 'active standby' };
      return {
        format: 'hapair-timeline/1',
        title: `${names[this.ha]} on the default network, seed ${this.seed}, mock simulator`,
        run: { driver: 'sim', ha: this.ha, network: 'default', seed: this.seed, version: 'mock', duration_us: this.durationUs, trace_level: 'data' },
        fragments: this.fragments,
        nodes: [...this.nodes.values()].map((n) => ({ name: n.name, fragment: n.fragment, planned: n.planned })),
        streams: this.streams,
      };
    }

    node(name) { return this.nodes.get(name); }
    fragOf(n) { return this.frag.get(n.fragment); }
    partnerOf(n) {
      const f = this.fragOf(n);
      if (!f.standby) return null;
      return this.node(n.name === f.primary ? f.standby : f.primary);
    }
    producerFrag(n) { return { filter: 'source', aggregate: 'filter', sink: 'aggregate' }[n.fragment] || null; }
    consumerFrag(n) { return { source: 'filter', filter: 'aggregate', aggregate: 'sink' }[n.fragment] || null; }
    isActing(n) { return n.alive && n.role === 'primary'; }

    // ---- the event queue ----
    at(t, node, fn, kind) {
      const item = { t: Math.max(t, this.now), seq: this.seq++, node, inc: node ? node.inc : 0, fn, kind: kind || 'timer' };
      const q = this.queue;
      q.push(item);
      let i = q.length - 1;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (cmp(q[p], q[i]) <= 0) break;
        [q[p], q[i]] = [q[i], q[p]];
        i = p;
      }
      return item;
    }
    pop() {
      const q = this.queue;
      const top = q[0];
      const last = q.pop();
      if (q.length) {
        q[0] = last;
        let i = 0;
        for (;;) {
          const l = 2 * i + 1, r = l + 1;
          let m = i;
          if (l < q.length && cmp(q[l], q[m]) < 0) m = l;
          if (r < q.length && cmp(q[r], q[m]) < 0) m = r;
          if (m === i) break;
          [q[m], q[i]] = [q[i], q[m]];
          i = m;
        }
      }
      return top;
    }
    nextEventUs() { return this.queue.length ? this.queue[0].t : null; }

    runOne() {
      const it = this.pop();
      this.now = Math.max(this.now, it.t);
      const n = it.node;
      if (n) {
        if (it.kind === 'arrival') {
          if (!n.alive) { this.inflight.delete(it.msgId); return; }
        } else if (!n.alive || it.inc !== n.inc) return;
        if (n.paused) { n.deferred.push(it); return; }
      }
      it.fn(n);
    }

    advance(toUs) {
      const target = Math.min(toUs, this.endUs);
      while (this.queue.length && this.queue[0].t <= target) this.runOne();
      this.now = Math.max(this.now, target);
      this.finish();
    }
    step() {
      if (this.queue.length && this.queue[0].t <= this.endUs) this.runOne();
      else this.now = this.endUs;
      this.finish();
    }
    // A reference tuple is missing once the failure-free run delivered it more than 300 ms
    // ago (virtual) and this run has not, or when the run ended (the reference is in time order).
    finish() {
      if (this.now >= this.endUs) this.ended = true;
      for (; this.refDecided < this.ref.length; this.refDecided++) {
        const r = this.ref[this.refDecided];
        if (!this.ended && r.refAt + MISSING_AFTER_US >= this.now) break;
        if (this.delivered.has(r.lineage)) continue;
        this.reportedMissing.add(r.lineage);
        this.missing.push({ stream: 'totals', ts_us: r.ts, key: r.key, value: r.value, lineage: r.lineage });
      }
    }

    trace(n, kind, fields) {
      const e = Object.assign({ t_us: this.now, node: typeof n === 'string' ? n : n.name, kind }, fields || {});
      this.events.push(e);
      return e;
    }

    // ---- links ----
    cutBetween(a, b) {
      for (const c of this.cuts) if (c.until > this.now && ((c.a === a && c.b === b) || (c.a === b && c.b === a))) return c;
      return null;
    }
    send(from, toName, kind, body, bytes) {
      const to = this.node(toName);
      if (!to || !from.alive) return;
      let arrive = this.now + LAT_US + Math.floor(this.rand() * JITTER_US) + Math.floor((bytes || 32) / 1250);
      const cut = this.cutBetween(from.name, toName);
      if (cut) {
        if (kind === 'heartbeat') return;  // lost; the rest is held, as TCP would, until the link heals
        arrive = cut.until + LAT_US + Math.floor(this.rand() * JITTER_US);
      }
      // Each link is FIFO (TCP): nothing overtakes what was sent before it on the same link.
      const link = `${from.name}>${toName}`;
      arrive = Math.max(arrive, (this.linkLast.get(link) || 0) + 1);
      this.linkLast.set(link, arrive);
      const msg = { id: ++this.msgSeq, from: from.name, to: toName, kind, sent_us: this.now, arrive_us: arrive, bytes: bytes || 32 };
      if (kind === 'tuples') Object.assign(msg, { stream: body.stream, first_id: body.tuples.length ? body.tuples[0].id : body.after + 1,
        last_id: body.tuples.length ? body.tuples[body.tuples.length - 1].id : body.after, replay: !!body.replay });
      this.inflight.set(msg.id, msg);
      const it = this.at(arrive, to, (n) => { this.inflight.delete(msg.id); this.receive(n, from.name, kind, body, msg); }, 'arrival');
      it.msgId = msg.id;
    }

    sendTuples(n, to, tuples, opts) {
      const o = opts || {};
      const stream = n.outStream;
      for (let i = 0; i < Math.max(1, tuples.length); i += BATCH_MAX) {
        const part = tuples.slice(i, i + BATCH_MAX);
        if (!part.length && !o.eos) return;
        const last = i + BATCH_MAX >= tuples.length;
        const body = { stream, tuples: part, replay: !!o.replay, replayLast: !!o.replay && last, replayCount: tuples.length,
          eos: !!o.eos && last, restart: o.restart || null, epoch: this.fragOf(n).epoch, after: o.after || 0 };
        if (part.length && !o.silent)
          this.trace(n, 'batch_sent', { peer: to, stream, first_id: part[0].id, last_id: part[part.length - 1].id, count: part.length, replay: !!o.replay });
        this.send(n, to, 'tuples', body, 40 + 24 * part.length);
      }
    }

    // Where n sends its output: the consumer fragment's primary (as n knows it) and, for
    // active standby, the consumer's standby as well.
    consumersOf(n) {
      const cf = this.consumerFrag(n);
      if (!cf) return [];
      const f = this.frag.get(cf);
      const list = [n.route[cf]];
      if (this.ha === 'active' && f.standby) {
        const other = n.route[cf] === f.primary ? f.standby : f.primary;
        const o = this.node(other);
        if (o && o.alive && (o.role === 'active_backup')) list.push(other);
      }
      return list;
    }
    // Does n send its output on (a primary, or the active standby of a source's consumer...)?
    sendsOutput(n) { return n.role === 'primary'; }

    // ---- nodes ----
    startNode(n, t) {
      const f = this.fragOf(n);
      let role = 'primary';
      if (n.planned === 'standby') role = this.ha === 'passive' ? 'passive_backup' : this.ha === 'active' ? 'active_backup' : 'spare';
      n.role = role;
      this.trace(n, 'start', { role, ha: f.ha });
      this.timers(n, t);
    }
    timers(n, t) {
      const phase = (hash32(n.name.length, n.inc) % 9) * 13;
      const every = (period, fn, offset) => {
        const tick = (node) => { fn(node); this.at(this.now + period, n, tick); };
        this.at((Math.floor(t / period) + 1) * period + (offset || 0), n, tick);
      };
      if (this.fragOf(n).standby) every(HB_US, (x) => this.heartbeatTick(x), phase);
      if (n.fragment !== 'source') every(ACK_US, (x) => this.ackTick(x));
      if (this.ha === 'passive' && n.fragment !== 'source' && n.fragment !== 'sink') every(CKPT_US, (x) => this.checkpointTick(x));
    }

    sourceTick(n) {
      if (!n.alive || this.now > this.durationUs) return;
      const tuples = [];
      for (let k = 0; k < SRC_BATCH; k++) {
        const id = n.lastId + 1;
        if (id * TS_STEP_US > this.durationUs) break;
        n.lastId = id;
        tuples.push(sourceTuple(id, this.seed));
      }
      n.outQ.push(...tuples);
      const eos = (n.lastId + 1) * TS_STEP_US > this.durationUs;
      if (eos) n.eosOut = true;
      for (const to of this.consumersOf(n)) this.sendTuples(n, to, tuples, { eos });
      if (!eos) this.at(this.now + SRC_PERIOD_US, n, (x) => this.sourceTick(x));
    }

    heartbeatTick(n) {
      const p = this.partnerOf(n);
      if (!p || n.role === 'fenced' || n.role === 'rejoining') return;
      this.send(n, p.name, 'heartbeat', { epoch: n.epoch }, 24);
      if (n.lost === p.name || (n.role !== 'primary' && this.fragOf(n).current === n.name)) return;
      const last = n.heard[p.name] === undefined ? 0 : n.heard[p.name];
      const silent = this.now - last;
      if (silent >= TIMEOUT_US / 2 && !n.warned[p.name]) {
        n.warned[p.name] = true;
        if (n.role === 'primary') this.trace(n, 'standby_suspected', { standby: p.name, silent_us: silent });
        else this.trace(n, 'heartbeat_missed', { peer: p.name, silent_us: silent });
      }
      if (silent >= TIMEOUT_US) this.partnerFailed(n, p, 'heartbeat', silent);
    }

    partnerFailed(n, p, detector, silent) {
      if (n.lost === p.name || !n.alive) return;
      if (n.role === 'primary') {
        if (this.fragOf(n).current !== n.name) return;
        n.lost = p.name;
        this.trace(n, 'standby_lost', { standby: p.name, silent_us: silent, detector });
      } else if (n.role === 'passive_backup' || n.role === 'active_backup' || n.role === 'spare') {
        n.lost = p.name;
        this.trace(n, 'detection', { failed: p.name, detector, silent_us: silent });
        this.takeover(n, p);
      }
    }

    ackTick(n) {
      if (!n.alive || !(n.role === 'primary' || n.role === 'active_backup')) return;
      const pf = this.producerFrag(n);
      if (!pf) return;
      const pos = n.inLast[n.inStream] || 0;
      const f = this.frag.get(pf);
      const targets = [n.route[pf]];
      if (this.ha === 'active' && f.standby) targets.push(n.route[pf] === f.primary ? f.standby : f.primary);
      for (const to of targets) {
        const t = this.node(to);
        if (!t || !t.alive) continue;
        this.trace(n, 'level0_ack', { peer: to, stream: n.inStream, position: pos });
        this.send(n, to, 'level0_ack', { stream: n.inStream, position: pos }, 32);
      }
      // Upstream backup: the restart point, the input still needed to rebuild the state.
      if (this.ha === 'upstream' && n.role === 'primary' && n.fragment !== 'sink') {
        let p = pos;
        let restart = null;
        if (n.agg) {
          p = Math.min(pos, Math.floor((n.agg.nextW - WINDOW_US) / TS_STEP_US));
          restart = { nextW: n.agg.nextW, nextOut: n.agg.nextOut, position: Math.max(0, p) };
        }
        n.gen++;
        this.trace(n, 'level1_ack', { peer: n.route[pf], stream: n.inStream, position: Math.max(0, p), generation: n.gen });
        this.send(n, n.route[pf], 'level1_ack', { stream: n.inStream, position: Math.max(0, p), restart }, 48);
      }
    }

    checkpointTick(n) {
      if (n.role !== 'primary' || this.fragOf(n).current !== n.name) return;
      const p = this.partnerOf(n);
      if (!p || n.lost === p.name) return;
      const c = ++n.ckpt;
      const state = { inLast: Object.assign({}, n.inLast), agg: n.agg ? aggCopy(n.agg) : null, outQ: n.outQ.slice(), trimmed: n.trimmed,
        lastId: n.lastId, eosOut: n.eosOut, eosIn: n.eosIn };
      let tuplesInState = 0;
      if (n.agg) for (const m of n.agg.windows.values()) tuplesInState += m.size;
      const bytes = 600 + 16 * n.outQ.length + 24 * tuplesInState + (n.op === 'filter' ? 6000 : 0);
      this.trace(n, 'checkpoint', { checkpoint: c, mode: 'full', bytes, chunks: 1, standby: p.name });
      this.trace(n, 'checkpoint_covers', { checkpoint: c, stream: n.inStream, position: n.inLast[n.inStream] || 0 });
      (n.lastCovers = n.lastCovers || {})[c] = n.inLast[n.inStream] || 0;
      this.send(n, p.name, 'checkpoint', { checkpoint: c, state, covers: n.inLast[n.inStream] || 0 }, bytes);
    }

    // ---- receiving ----
    receive(n, from, kind, body, msg) {
      const f = this.fragOf(n);
      if (kind !== 'heartbeat' && kind !== 'takeover' && kind !== 'connection_closed') n.heard[from] = this.now;
      switch (kind) {
        case 'heartbeat':
          n.heard[from] = this.now;
          n.warned[from] = false;
          if (n.role === 'primary' && n.lost !== from) {
            const fr = this.node(from);
            if (fr && fr.role === 'primary' && f.current !== n.name) this.fence(n);
          }
          break;
        case 'tuples': this.onTuples(n, from, body, msg); break;
        case 'level0_ack': this.onLevel0(n, from, body); break;
        case 'level1_ack': this.onLevel1(n, from, body); break;
        case 'checkpoint':
          if (n.role !== 'passive_backup' && n.role !== 'rejoining') break;
          n.installed = { checkpoint: body.checkpoint, state: body.state, covers: body.covers };
          this.trace(n, 'checkpoint_installed', { checkpoint: body.checkpoint });
          this.send(n, from, 'checkpoint_ack', { checkpoint: body.checkpoint }, 24);
          break;
        case 'checkpoint_ack': {
          if (n.role !== 'primary') break;
          this.trace(n, 'checkpoint_acked', { checkpoint: body.checkpoint });
          if (n.restoring === from) {
            n.restoring = null;
            n.lost = null;
            this.trace(n, 'pair_restored', { standby: from, checkpoint: body.checkpoint });
          }
          const pf = this.producerFrag(n);
          const st = n.lastCovers && n.lastCovers[body.checkpoint];
          if (pf && st !== undefined) {
            this.trace(n, 'level1_ack', { peer: n.route[pf], stream: n.inStream, position: st, generation: body.checkpoint });
            this.send(n, n.route[pf], 'level1_ack', { stream: n.inStream, position: st }, 40);
          }
          break;
        }
        case 'takeover': this.onTakeover(n, from, body); break;
        case 'replay_request': this.onReplayRequest(n, from, body); break;
        case 'rejoin': this.onRejoin(n, from, body); break;
        case 'connection_closed': {
          const p = this.partnerOf(n);
          if (p && p.name === from) this.partnerFailed(n, p, 'connection', this.now - (n.heard[from] || 0));
          break;
        }
        default: break;
      }
    }

    onTuples(n, from, body, msg) {
      const stream = body.stream;
      if (stream !== n.inStream) return;
      const pf = this.producerFrag(n);
      // Data from a node that is not (any more) the producer's primary, as n knows it, is dropped
      // (a fenced or stale primary), except an active standby's own feed.
      if (n.route[pf] !== from) return;
      if (n.role === 'spare' || n.role === 'fenced' || n.role === 'rejoining' || n.role === 'passive_backup') return;
      if (body.restart && n.awaitRestart) {
        n.awaitRestart = false;
        n.agg.nextW = body.restart.nextW;
        n.agg.nextOut = body.restart.nextOut;
        n.inLast[stream] = body.restart.position;
      }
      const last = n.inLast[stream] || 0;
      const fresh = body.tuples.filter((t) => t.id > last);
      const dups = body.tuples.length - fresh.length;
      if (body.replay && !n.replaying) {
        n.replaying = { from, count: 0 };
        this.trace(n, 'replay_start', { stream, peer: from, first_id: msg.first_id });
      }
      if (body.tuples.length) {
        this.trace(n, 'batch_received', { peer: from, stream, first_id: msg.first_id, last_id: msg.last_id, count: fresh.length, duplicates: dups });
        if (dups) {
          const d = body.tuples.filter((t) => t.id <= last);
          this.trace(n, 'duplicates_dropped', { peer: from, stream, first_id: d[0].id, last_id: d[d.length - 1].id, count: dups });
        }
      }
      if (n.replaying) n.replaying.count += body.tuples.length;
      if (fresh.length) n.inLast[stream] = fresh[fresh.length - 1].id;
      if (n.fragment === 'sink') {
        for (const t of fresh) this.deliver(n, from, t, body.replay);
      } else {
        const out = this.process(n, fresh, body.eos);
        if (out.length || (body.eos && !n.eosOut)) {
          for (const t of out) { n.outQ.push(t); n.lastId = t.id; }
          if (body.eos) n.eosOut = true;
          if (this.sendsOutput(n)) for (const to of this.consumersOf(n)) this.sendTuples(n, to, out, { eos: body.eos });
        }
      }
      if (body.eos && !n.eosIn) {
        n.eosIn = true;
        if (n.fragment === 'sink') {
          this.trace(n, 'end_of_output');
          this.endUs = Math.min(this.endUs, this.now + 1000);
        }
      }
      if (body.replayLast && n.replaying) {
        this.trace(n, 'replay_end', { stream, peer: from, count: n.replaying.count });
        n.replaying = null;
      }
    }

    process(n, tuples, eos) {
      if (n.op === 'filter') return tuples.filter((t) => t.value < KEEP_BELOW);
      const out = [];
      for (const t of tuples) { aggEmit(n.agg, t.ts, out); aggAdd(n.agg, t); }
      if (eos) aggEmit(n.agg, this.durationUs + WINDOW_US, out);
      return out;
    }

    deliver(n, from, t, replayed) {
      const r = this.refByLineage.get(t.lineage);
      let status = 'differing';
      if (r && r.value === t.value) status = this.delivered.has(t.lineage) ? 'duplicate' : 'exact';
      if (status === 'exact') this.delivered.add(t.lineage);
      this.outputs.push({ at_us: this.now, stream: 'totals', id: t.id, ts_us: t.ts, key: t.key, value: t.value, lineage: t.lineage,
        from, replayed: !!replayed, status });
    }

    trim(n, stream, position) {
      if (position <= n.trimmed) return;
      const before = n.outQ.length;
      n.outQ = n.outQ.filter((t) => t.id > position);
      n.trimmed = position;
      if (before - n.outQ.length > 0) this.trace(n, 'trimmed', { stream, position, count: before - n.outQ.length });
    }

    onLevel0(n, from, body) {
      n.acked0[from] = body.position;
      const cf = this.frag.get(this.consumerFrag(n));
      // Trimming on level-0 acks: when the consumer keeps no state to rebuild (the sink, no HA,
      // amnesia); active standby: once both copies of the consumer have the tuples.
      if (cf.kind === 'sink' || this.ha === 'none' || this.ha === 'amnesia') this.trim(n, body.stream, body.position);
      else if (this.ha === 'active') {
        const a = n.acked0[cf.primary], b = n.acked0[cf.standby];
        const bAlive = this.node(cf.standby).alive && this.node(cf.standby).role !== 'rejoining';
        const aAlive = this.node(cf.primary).alive && this.node(cf.primary).role !== 'rejoining';
        const pos = Math.min(aAlive && a !== undefined ? a : Infinity, bAlive && b !== undefined ? b : Infinity);
        if (Number.isFinite(pos)) this.trim(n, body.stream, pos);
      }
    }

    onLevel1(n, from, body) {
      if (body.restart) n.restartPoint = body.restart;
      this.trim(n, body.stream, body.position);
    }

    // ---- failover ----
    takeover(n, old) {
      const f = this.fragOf(n);
      if (f.current === n.name) return;
      f.epoch++;
      f.current = n.name;
      n.epoch = f.epoch;
      const pf = this.producerFrag(n);
      const prevRole = n.role;
      n.route[n.fragment] = n.name;
      let after = n.inLast[n.inStream] || 0;
      const fields = { ha: this.ha };
      if (this.ha === 'passive') {
        const ck = n.installed;
        if (ck) {
          const s = ck.state;
          n.inLast = Object.assign({}, s.inLast);
          n.agg = s.agg ? aggCopy(s.agg) : n.agg;
          n.outQ = s.outQ.slice();
          n.trimmed = s.trimmed;
          n.lastId = s.lastId;
          n.eosOut = s.eosOut;
          n.eosIn = s.eosIn;
          after = ck.covers;
          fields.exact_ids = true;
          fields.checkpoint = ck.checkpoint;
          fields.text = 'from its last checkpoint';
        } else {
          after = 0;
          fields.exact_ids = true;
        }
      } else if (this.ha === 'amnesia') {
        n.inLast = {};
        n.agg = n.agg ? aggNew() : null;
        n.outQ = [];
        n.rebase = !!n.agg;
        after = -1;
        fields.exact_ids = false;
        fields.text = 'state=empty';
      } else if (this.ha === 'upstream') {
        n.inLast = {};
        n.agg = n.agg ? aggNew() : null;
        n.outQ = [];
        n.awaitRestart = !!n.agg;
        after = -1;
        fields.exact_ids = true;
        fields.generation = old.gen;
        fields.text = `restart_generation=${old.gen}`;
      } else {
        fields.exact_ids = true;
      }
      if (pf) {
        this.trace(n, 'replay_request', { peer: n.route[pf], stream: n.inStream, after_id: after });
        this.send(n, n.route[pf], 'replay_request', { stream: n.inStream, after_id: after }, 40);
      }
      this.trace(n, 'takeover', fields);
      if (prevRole !== 'primary') { n.role = 'primary'; this.trace(n, 'role', { role: 'primary' }); }
      // Tell the neighbours (and the old primary, which finds itself fenced if it lives).
      const tell = new Set();
      for (const fr of this.frag.values()) {
        if (fr.name === f.name) continue;
        if (fr.name === pf || fr.name === this.consumerFrag(n)) {
          tell.add(fr.primary);
          if (fr.standby) tell.add(fr.standby);
        }
      }
      if (pf) { const pfr = this.frag.get(pf); tell.add(pfr.primary); if (pfr.standby) tell.add(pfr.standby); }
      tell.add(old.name);
      for (const to of tell) this.send(n, to, 'takeover', { fragment: f.name, primary: n.name, epoch: f.epoch }, 48);
    }

    fence(n) {
      if (n.role === 'fenced') return;
      const f = this.fragOf(n);
      n.role = 'fenced';
      this.trace(n, 'fenced', { fragment_primary: f.current, epoch: f.epoch, claim_lost: true });
      this.trace(n, 'role', { role: 'fenced' });
    }

    onTakeover(n, from, body) {
      if (body.fragment === n.fragment) {
        if (n.name !== body.primary && n.role === 'primary') this.fence(n);
        return;
      }
      if (n.route[body.fragment] === body.primary && (n.routeEpoch || {})[body.fragment] >= body.epoch) return;
      n.route[body.fragment] = body.primary;
      (n.routeEpoch = n.routeEpoch || {})[body.fragment] = body.epoch;
      this.trace(n, 'route_change', { fragment_primary: body.primary, epoch: body.epoch });
      // A consumer asks the new primary for what it has not received yet.
      if (body.fragment === this.producerFrag(n) && (n.role === 'primary' || n.role === 'active_backup')) {
        const after = n.inLast[n.inStream] || 0;
        this.trace(n, 'replay_request', { peer: body.primary, stream: n.inStream, after_id: after });
        this.send(n, body.primary, 'replay_request', { stream: n.inStream, after_id: after }, 40);
      }
    }

    onReplayRequest(n, from, body) {
      if (!n.alive) return;
      if (n.rebase && this.consumerFrag(n) === this.node(from).fragment) {
        // Amnesia: the spare's ids continue above what the consumer accepted.
        n.rebase = false;
        n.agg.nextOut = Math.max(n.agg.nextOut, body.after_id + 1);
        this.trace(n, 'rebased', { text: 'output ids continue above what consumers accepted' });
        return;
      }
      let after = body.after_id;
      if (after >= 0 && after < n.trimmed) {
        this.trace(n, 'replay_gap', { stream: body.stream, after_id: after, position: n.trimmed });
        after = n.trimmed;
      }
      const list = after < 0 ? n.outQ.slice() : n.outQ.filter((t) => t.id > after);
      if (!list.length && !n.eosOut) return;
      const restart = this.ha === 'upstream' && n.restartPoint ? n.restartPoint : null;
      this.sendTuples(n, from, list, { replay: true, eos: n.eosOut, restart, after: after < 0 ? n.trimmed : after });
    }

    onRejoin(n, from, body) {
      if (body.accept) {
        // The restarted node: a standby again.
        const role = this.ha === 'passive' ? 'passive_backup' : this.ha === 'active' ? 'active_backup' : 'spare';
        n.route[n.fragment] = from;
        this.trace(n, 'rejoined', { role, fragment_primary: from, epoch: body.epoch });
        n.role = role;
        this.trace(n, 'start', { role, ha: this.ha });
        this.trace(n, 'role', { role });
        n.heard[from] = this.now;
        if (this.ha === 'active' && body.state) {
          n.inLast = Object.assign({}, body.state.inLast);
          n.agg = body.state.agg ? aggCopy(body.state.agg) : n.agg;
          n.outQ = body.state.outQ.slice();
          n.lastId = body.state.lastId;
          this.trace(n, 'bootstrap_installed', { checkpoint: 1 });
        }
        return;
      }
      if (n.role !== 'primary') return;
      const f = this.fragOf(n);
      f.epoch++;
      this.trace(n, 'rejoin_accepted', { standby: from, epoch: f.epoch, incarnation: body.incarnation });
      n.lost = null;
      n.heard[from] = this.now;
      n.warned[from] = false;
      const state = this.ha === 'active' ? { inLast: Object.assign({}, n.inLast), agg: n.agg ? aggCopy(n.agg) : null, outQ: n.outQ.slice(), lastId: n.lastId } : null;
      this.send(n, from, 'rejoin', { accept: true, epoch: f.epoch, state }, state ? 4000 : 48);
      if (this.ha === 'passive') {
        n.restoring = from;
        this.at(this.now + 300, n, (x) => this.checkpointTick(x));
      } else {
        this.at(this.now + 2 * LAT_US + 50, n, (x) => {
          if (x.role === 'primary') this.trace(x, 'pair_restored', { standby: from });
        });
      }
      // Producers learn about the standby (the active standby's feed).
      const pf = this.producerFrag(n);
      if (pf && this.ha === 'active') {
        const p = this.node(this.frag.get(pf).current);
        if (p) this.send(n, p.name, 'takeover', { fragment: n.fragment, primary: n.name, epoch: f.epoch }, 48);
      }
    }

    // ---- faults ----
    scheduleFault(f) {
      const at = Math.max(0, Math.round(f.at_us || 0));
      this.at(at, null, () => this.applyFault(f));
    }
    validFault(f) {
      const kinds = ['crash', 'pause', 'partition', 'restart'];
      if (!kinds.includes(f.kind)) return `unknown fault kind "${f.kind}" (one of ${kinds.join(', ')})`;
      if (!this.nodes.has(f.node)) return `unknown node "${f.node}" (one of ${[...this.nodes.keys()].join(', ')})`;
      if (f.kind === 'partition' && !this.nodes.has(f.peer)) return `partition: unknown peer "${f.peer}" (one of ${[...this.nodes.keys()].join(', ')})`;
      if ((f.kind === 'pause' || f.kind === 'partition') && !(f.duration_us > 0)) return `${f.kind} needs duration_us > 0`;
      return null;
    }
    applyFault(f) {
      const n = this.node(f.node);
      if (f.kind === 'crash') {
        if (!n.alive) return;
        this.trace(n, 'failure', { fault: 'crash' });
        n.alive = false;
        n.paused = false;
        n.deferred = [];
        n.inc++;
        for (const x of this.nodes.values()) {
          if (x === n || !x.alive) continue;
          const linked = x.fragment === n.fragment || this.producerFrag(x) === n.fragment || this.consumerFrag(x) === n.fragment;
          if (linked) this.at(this.now + LAT_US, x, (y) => this.receive(y, n.name, 'connection_closed', {}, null), 'arrival');
        }
      } else if (f.kind === 'pause') {
        if (!n.alive || n.paused) return;
        this.trace(n, 'failure', { fault: 'pause', duration_us: f.duration_us });
        n.paused = true;
        this.at(this.now + f.duration_us, null, () => {
          if (!n.alive || !n.paused) return;
          n.paused = false;
          this.trace(n, 'resume', { fault: 'pause' });
          const list = n.deferred;
          n.deferred = [];
          for (const it of list) {
            if (it.kind === 'timer' && it.inc !== n.inc) continue;
            const copy = this.at(this.now, n, it.fn, it.kind);
            copy.inc = n.inc;
            copy.msgId = it.msgId;
          }
          // Everything it heard went quiet while it was stopped: it does not blame its partner.
          for (const k of Object.keys(n.heard)) n.heard[k] = this.now;
        });
      } else if (f.kind === 'partition') {
        const until = this.now + f.duration_us;
        this.trace(n, 'failure', { fault: 'partition', duration_us: f.duration_us, peer: f.peer });
        this.cuts.push({ a: n.name, b: f.peer, until });
        this.at(until, null, () => this.trace(n, 'heal', { fault: 'partition', peer: f.peer }));
      } else if (f.kind === 'restart') {
        if (n.alive) return;
        n.alive = true;
        n.paused = false;
        n.inc++;
        n.inLast = {}; n.outQ = []; n.trimmed = 0; n.lastId = 0; n.agg = n.agg ? aggNew() : null;
        n.installed = null; n.lost = null; n.heard = {}; n.warned = {}; n.replaying = null; n.rebase = false; n.eosIn = false; n.eosOut = false;
        this.trace(n, 'restart', { fault: 'restart' });
        const fr = this.fragOf(n);
        if (n.fragment === 'source' || n.fragment === 'sink' || !fr.standby) {
          n.role = 'primary';
          this.trace(n, 'start', { role: 'primary', ha: fr.ha });
          this.timers(n, this.now);
          if (n.fragment === 'source') this.at(this.now + SRC_PERIOD_US, n, (x) => this.sourceTick(x));
          return;
        }
        const partner = fr.current === n.name ? (n.name === fr.primary ? fr.standby : fr.primary) : fr.current;
        fr.current = fr.current === n.name ? partner : fr.current;
        n.role = 'rejoining';
        this.trace(n, 'rejoin_requested', { partner });
        this.trace(n, 'role', { role: 'rejoining' });
        this.timers(n, this.now);
        this.send(n, partner, 'rejoin', { incarnation: this.now + 1 }, 48);
      }
    }

    // ---- what the page sees ----
    state() {
      const nodes = [...this.nodes.values()].map((n) => {
        const oq = {}, tr = {}, li = {};
        if (n.outStream) { oq[n.outStream] = n.outQ.length; tr[n.outStream] = n.trimmed; li[n.outStream] = n.lastId; }
        return { name: n.name, alive: n.alive, paused: n.paused, role: n.role, output_queue: oq, input_queue: n.deferred.length,
          trimmed_up_to: tr, last_id: li };
      });
      const inflight = [];
      for (const m of this.inflight.values()) {
        if (m.arrive_us <= this.now) continue;
        const o = { from: m.from, to: m.to, kind: m.kind, sent_us: m.sent_us, arrive_us: m.arrive_us, bytes: m.bytes };
        if (m.kind === 'tuples') Object.assign(o, { stream: m.stream, first_id: m.first_id, last_id: m.last_id, replay: m.replay });
        inflight.push(o);
      }
      inflight.sort((a, b) => a.sent_us - b.sent_us);
      return { nodes, in_flight: inflight };
    }
    take() {
      const r = { now_us: this.now, ended: this.ended, next_event_us: this.ended ? null : this.nextEventUs(), events: this.events, outputs: this.outputs,
        missing: this.missing, state: this.state() };
      this.events = [];
      this.outputs = [];
      this.missing = [];
      return r;
    }
  }

  function cmp(a, b) { return a.t - b.t || a.seq - b.seq; }

  // ---- the service: the JSON protocol of docs/DEMO.md ----
  class MockBackend {
    constructor(opts) {
      this.kind = 'mock';
      this.sessions = new Map();
      this.nextSession = 1;
      this.sessionsMax = 16;
      this.latencyMs = (opts && opts.latencyMs) || 0;
    }
    async call(request) {
      const req = JSON.parse(JSON.stringify(request));
      if (this.latencyMs) await new Promise((r) => setTimeout(r, this.latencyMs));
      let res;
      try {
        res = this.handle(req);
      } catch (err) {
        res = { error: `mock: ${err && err.message ? err.message : err}` };
      }
      return JSON.parse(JSON.stringify(res));
    }
    handle(req) {
      const sess = () => {
        const s = this.sessions.get(req.session);
        if (!s) throw new Error(`no session ${req.session}`);
        return s;
      };
      switch (req.op) {
        case 'networks':
          return { networks: [{ name: 'default', title: 'source → filter → aggregate → sink',
            description: 'a source of 2000 tuples/s, a filter (value < 80), a sum per key over 200 ms windows sliding by 20 ms, a sink (mock simulator)' }],
          approaches: APPROACHES.slice() };
        case 'create': {
          if (req.network && req.network !== 'default') return { error: `unknown network "${req.network}" (one of default)` };
          const ha = req.ha || 'passive';
          if (!APPROACHES.includes(ha)) return { error: `unknown ha "${ha}" (one of ${APPROACHES.join(', ')})` };
          const durationUs = Math.round((req.duration_s || 6) * 1e6);
          const sim = new MockSim({ ha, seed: req.seed === undefined ? 1 : req.seed, durationUs, faults: [] });
          for (const f of req.faults || []) {
            const e = sim.validFault(f);
            if (e) return { error: e };
            sim.scheduleFault(f);
          }
          const id = this.nextSession++;
          this.sessions.set(id, sim);
          while (this.sessions.size > this.sessionsMax) this.sessions.delete(this.sessions.keys().next().value);
          return { session: id, meta: sim.meta() };
        }
        case 'advance': {
          const s = sess();
          if (typeof req.to_us !== 'number') return { error: 'advance needs to_us (µs)' };
          s.advance(req.to_us);
          return s.take();
        }
        case 'step': {
          const s = sess();
          s.step();
          return s.take();
        }
        case 'fault': {
          const s = sess();
          const f = { kind: req.kind, node: req.node, at_us: s.now };
          if (req.duration_us !== undefined) f.duration_us = req.duration_us;
          if (req.peer !== undefined) f.peer = req.peer;
          const e = s.validFault(f);
          if (e) return { error: e };
          s.applyFault(f);
          return { ok: true, fault: f };
        }
        case 'close':
          this.sessions.delete(req.session);
          return { ok: true };
        case 'real_start':
        case 'real_kill':
        case 'real_status':
          return { error: 'real processes need the hapair demo server (the mock has none)' };
        default:
          return { error: `unknown op "${req.op}"` };
      }
    }
  }

  H.MockSim = MockSim;
  H.MockBackend = MockBackend;
})(typeof window !== 'undefined' ? window : globalThis);

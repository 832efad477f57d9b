// hapair web views: the model of one run behind the timeline, fed incrementally (the timeline
// page feeds it once; a live page appends as a simulation goes). It derives, from the JSON of
// docs/TIMELINE.md, everything the view draws:
//   lanes      one per node, grouped by fragment (primary first, then its standby), each with
//              its role over time as segments (start/role events; dead from a crash to its
//              restart; fenced; ended when the process exited);
//   faults     the meta's `faults` when given, else derived from failure/resume/restart/heal;
//   markers    one per event of a marker kind (words.js), per lane, in time order;
//   messages   batches (sent → received), acks, checkpoints (sent → installed);
//   replays    replay_start … replay_end ranges on a lane;
//   outputs    sink deliveries with their status, and the missing reference tuples.
// Invariant: every list is sorted by time; events appended out of order trigger a rebuild.
(function () {
  'use strict';
  const H = window.Hapair;

  class RunModel {
    constructor() {
      this.reset();
    }

    reset() {
      this.meta = null;
      this.title = '';
      this.run = {};
      this.fragments = [];
      this.streams = new Map();
      this.lanes = [];
      this.laneByName = new Map();
      this.events = [];
      this.markers = [];
      this.markerCounts = {};
      this.messages = [];
      this.messageSpanUs = 0; // the longest message, for finding the ones crossing a view's start
      this.pendingBatches = new Map();
      this.pendingCheckpoints = new Map();
      this.replays = [];
      this.openReplays = new Map();
      this.faults = [];
      this.faultsGiven = false;
      this.outputs = [];
      this.missing = [];
      this.rows = { exact: [], duplicate: [], differing: [], missing: [] };
      this.entryIndex = new Map(); // stream|lineage -> output indexes (the copies of an entry)
      this.maxLatencyUs = 0;
      this.firstFailureUs = null;
      this.lastEventUs = 0;
      this.lastOutputUs = 0;
      this.changes = 0;
    }

    // The run's description: format, title, run, fragments, nodes, streams and, optionally,
    // faults. Events, outputs and missing, when present, are not read here: use add*().
    setRun(meta) {
      const events = this.events;
      const outputs = this.outputs;
      const missing = this.missing;
      this.reset();
      this.meta = meta || {};
      this.title = this.meta.title || '';
      this.run = this.meta.run || {};
      this.fragments = (this.meta.fragments || []).slice();
      for (const s of this.meta.streams || []) this.streams.set(s.name, s);
      for (const nd of this.meta.nodes || []) this.ensureLane(nd.name, nd.fragment, nd.planned);
      if (Array.isArray(this.meta.faults)) {
        this.faultsGiven = true;
        this.faults = this.meta.faults.map((f) => Object.assign({}, f)).sort((a, b) => a.at_us - b.at_us);
        this.firstFailureUs = this.faults.length ? this.faults[0].at_us : null;
      }
      // A live page may call setRun again (a new title); keep what was already added.
      if (events.length) this.addEvents(events);
      if (outputs.length) this.addOutputs(outputs);
      if (missing.length) this.addMissing(missing);
      this.changes++;
    }

    endUs() {
      return Math.max(this.run.end_us || 0, this.run.duration_us || 0, this.lastEventUs, this.lastOutputUs);
    }

    // ---- lanes ----
    ensureLane(name, fragment, planned) {
      let lane = this.laneByName.get(name);
      if (lane) return lane;
      if (!fragment) {
        const f = this.fragments.find((x) => x.primary === name || x.standby === name);
        fragment = f ? f.name : name.replace(/\.[^.]*$/, '');
        if (f && !planned) planned = f.primary === name ? 'primary' : 'standby';
      }
      lane = { name, fragment, planned: planned || 'primary', segments: [], state: null, since: 0, index: 0, order: 0 };
      this.laneByName.set(name, lane);
      this.lanes.push(lane);
      this.orderLanes();
      return lane;
    }

    // Fragments in the meta's order (unknown ones last, in order of appearance), then within
    // a fragment: primary, standby, any other node.
    orderLanes() {
      const fragOrder = new Map(this.fragments.map((f, i) => [f.name, i]));
      const firstSeen = new Map();
      this.lanes.forEach((l, i) => { if (!firstSeen.has(l.fragment)) firstSeen.set(l.fragment, i); });
      const plannedRank = (l) => {
        const f = this.fragments.find((x) => x.name === l.fragment);
        if (f && f.primary === l.name) return 0;
        if (f && f.standby === l.name) return 1;
        return l.planned === 'primary' ? 0 : l.planned === 'standby' ? 1 : 2;
      };
      const fragRank = (l) => (fragOrder.has(l.fragment) ? fragOrder.get(l.fragment) : 1e6 + firstSeen.get(l.fragment));
      const seq = new Map(this.lanes.map((l, i) => [l, i]));
      this.lanes.sort((a, b) => fragRank(a) - fragRank(b) || plannedRank(a) - plannedRank(b) || seq.get(a) - seq.get(b));
      this.lanes.forEach((l, i) => (l.index = i));
    }

    setState(lane, t, state) {
      const segs = lane.segments;
      const last = segs[segs.length - 1];
      if (last && last.state === state) return;
      if (last && last.t0 === t) {
        last.state = state;
        const prev = segs[segs.length - 2];
        if (prev && prev.state === state) { segs.pop(); prev.t1 = null; }
      } else {
        if (last) last.t1 = t;
        segs.push({ t0: t, t1: null, state });
      }
      lane.state = state;
    }

    stateAt(lane, t) {
      const segs = lane.segments;
      const i = H.lowerBound(segs.length, (k) => segs[k].t0, t + 1) - 1;
      return i >= 0 ? segs[i] : null;
    }

    // ---- events ----
    addEvents(list) {
      if (!list || !list.length) return;
      const sorted = list[0].t_us >= this.lastEventUs && isSorted(list);
      if (!sorted) {
        // Out of order: rebuild every event-derived list from the merged, sorted events.
        const all = this.events.concat(list).map((e, i) => [e, i]);
        all.sort((a, b) => a[0].t_us - b[0].t_us || a[1] - b[1]);
        this.rebuildEvents(all.map((x) => x[0]));
        return;
      }
      for (const e of list) this.applyEvent(e);
      this.changes++;
    }

    rebuildEvents(events) {
      for (const lane of this.lanes) { lane.segments = []; lane.state = null; }
      this.events = [];
      this.markers = [];
      this.markerCounts = {};
      this.messages = [];
      this.messageSpanUs = 0;
      this.pendingBatches = new Map();
      this.pendingCheckpoints = new Map();
      this.replays = [];
      this.openReplays = new Map();
      if (!this.faultsGiven) { this.faults = []; this.firstFailureUs = null; }
      this.lastEventUs = 0;
      for (const e of events) this.applyEvent(e);
      this.changes++;
    }

    applyEvent(e) {
      const t = e.t_us;
      this.events.push(e);
      if (t > this.lastEventUs) this.lastEventUs = t;
      const lane = e.node === 'launcher' && !this.laneByName.has('launcher') ? null : this.ensureLane(e.node);
      switch (e.kind) {
        case 'start':
        case 'role':
          if (lane && e.role) this.setState(lane, t, e.role);
          break;
        case 'fenced':
          if (lane) this.setState(lane, t, 'fenced');
          break;
        case 'failure':
          if (lane && e.fault === 'crash') this.setState(lane, t, 'dead');
          if (!this.faultsGiven) {
            this.faults.push({ kind: e.fault, node: e.node, at_us: t, until_us: null, peer: e.peer === undefined ? null : e.peer });
            if (this.firstFailureUs === null) this.firstFailureUs = t;
          }
          break;
        case 'restart':
          if (lane) this.setState(lane, t, 'unknown');
          this.closeFault('crash', e, t);
          break;
        case 'resume':
          this.closeFault('pause', e, t);
          break;
        case 'heal':
          this.closeFault('partition', e, t);
          break;
        case 'exited':
          if (lane && lane.state !== 'dead') this.setState(lane, t, 'stopped');
          break;
        default:
          break;
      }
      if (H.MESSAGE_KINDS.has(e.kind)) this.applyMessage(e);
      if (e.kind === 'checkpoint' && e.standby) {
        const m = { t0: t, t1: null, from: e.node, to: e.standby, kind: 'checkpoint', e, e2: null };
        this.pushMessage(m);
        this.pendingCheckpoints.set(`${e.standby}|${e.checkpoint}`, m);
      } else if (e.kind === 'checkpoint_installed') {
        const m = this.pendingCheckpoints.get(`${e.node}|${e.checkpoint}`);
        if (m) { m.t1 = t; m.e2 = e; this.messageSpanUs = Math.max(this.messageSpanUs, t - m.t0); this.pendingCheckpoints.delete(`${e.node}|${e.checkpoint}`); }
      }
      if (e.kind === 'replay_start') {
        const r = { lane: e.node, stream: e.stream, peer: e.peer, t0: t, t1: null, start: e, end: null };
        this.replays.push(r);
        this.openReplays.set(`${e.node}|${e.stream}|${e.peer}`, r);
      } else if (e.kind === 'replay_end') {
        const key = `${e.node}|${e.stream}|${e.peer}`;
        const r = this.openReplays.get(key);
        if (r) { r.t1 = t; r.end = e; this.openReplays.delete(key); }
      }
      if (lane && !H.NOT_MARKERS.has(e.kind)) {
        const style = H.markerStyle(e);
        this.markers.push({ t, lane, e, style });
        this.markerCounts[e.kind] = (this.markerCounts[e.kind] || 0) + 1;
      }
    }

    closeFault(kind, e, t) {
      if (this.faultsGiven) return;
      for (const f of this.faults) {
        if (f.kind === kind && f.node === e.node && f.until_us === null &&
            (kind !== 'partition' || e.peer === undefined || f.peer === e.peer)) {
          f.until_us = t;
          return;
        }
      }
    }

    pushMessage(m) {
      this.messages.push(m);
    }

    applyMessage(e) {
      const t = e.t_us;
      if (e.kind === 'batch_sent') {
        const m = { t0: t, t1: null, from: e.node, to: e.peer, kind: e.replay ? 'replay' : 'batch', e, e2: null };
        this.pushMessage(m);
        const key = `${e.node}>${e.peer}|${e.stream}|${e.first_id}`;
        const q = this.pendingBatches.get(key);
        if (q) q.push(m); else this.pendingBatches.set(key, [m]);
      } else if (e.kind === 'batch_received' || e.kind === 'duplicates_dropped') {
        const key = `${e.peer}>${e.node}|${e.stream}|${e.first_id}`;
        const q = this.pendingBatches.get(key);
        if (q && q.length) {
          const m = q.shift();
          if (!q.length) this.pendingBatches.delete(key);
          m.t1 = t;
          m.e2 = e;
          this.messageSpanUs = Math.max(this.messageSpanUs, t - m.t0);
        }
      } else if (e.kind === 'level0_ack' || e.kind === 'level1_ack') {
        // Recorded by the consumer as it sends; no receive event: drawn at its sending time.
        this.pushMessage({ t0: t, t1: t, from: e.node, to: e.peer, kind: e.kind === 'level0_ack' ? 'ack0' : 'ack1', e, e2: null });
      }
    }

    // ---- outputs ----
    addOutputs(list) {
      if (!list || !list.length) return;
      for (const o of list) {
        const i = this.outputs.length;
        this.outputs.push(o);
        const at = o.at_us;
        if (at < this.lastOutputUs) this.outputsUnsorted = true;
        if (at > this.lastOutputUs) this.lastOutputUs = at;
        const status = o.status || 'exact';
        const row = this.rows[status] || (this.rows[status] = []);
        row.push(i);
        const lat = at - o.ts_us;
        if (lat > this.maxLatencyUs) this.maxLatencyUs = lat;
        const k = `${o.stream}|${o.lineage}`;
        const copies = this.entryIndex.get(k);
        if (copies) copies.push(i); else this.entryIndex.set(k, [i]);
      }
      if (this.outputsUnsorted) this.sortOutputs();
      this.changes++;
    }

    sortOutputs() {
      const outs = this.outputs.slice().sort((a, b) => a.at_us - b.at_us);
      this.outputs = [];
      this.rows = { exact: [], duplicate: [], differing: [], missing: this.rows.missing };
      this.entryIndex = new Map();
      this.outputsUnsorted = false;
      this.maxLatencyUs = 0;
      this.addOutputs(outs);
    }

    addMissing(list) {
      if (!list || !list.length) return;
      for (const m of list) this.missing.push(m);
      const rows = this.missing.map((m, i) => i);
      rows.sort((a, b) => this.missing[a].ts_us - this.missing[b].ts_us || a - b);
      this.rows.missing = rows;
      for (const m of list) if (m.ts_us > this.lastOutputUs) this.lastOutputUs = m.ts_us;
      this.changes++;
    }

    // The time of item i of a strip row (an output's delivery, a missing tuple's event time).
    rowTime(status, k) {
      const i = this.rows[status][k];
      return status === 'missing' ? this.missing[i].ts_us : this.outputs[i].at_us;
    }
    rowItem(status, k) {
      const i = this.rows[status][k];
      return status === 'missing' ? { kind: 'missing', index: i, item: this.missing[i] } : { kind: 'output', index: i, item: this.outputs[i] };
    }

    counts() {
      return {
        exact: this.rows.exact.length, duplicate: this.rows.duplicate.length,
        differing: this.rows.differing.length, missing: this.rows.missing.length,
      };
    }

    fault(i) {
      return this.faults[i];
    }

    // The failure before t (the most recent fault start), for "20.1 ms after the crash of X".
    faultBefore(t) {
      let best = null;
      for (const f of this.faults) if (f.at_us <= t && (!best || f.at_us >= best.at_us)) best = f;
      return best;
    }
  }

  function isSorted(list) {
    for (let i = 1; i < list.length; i++) if (list[i].t_us < list[i - 1].t_us) return false;
    return true;
  }

  H.RunModel = RunModel;
})();

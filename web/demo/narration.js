// hapair demo: the story of a run in short sentences, built from the trace events' fields as
// they arrive (never from numbers written here): "aggregate.backup installs checkpoint 29,
// covering small up to id 5812", "filter re-sends 194 tuples (ids 5813–6006)", "the sink drops
// 12 duplicates". And the guided tour of each approach (Hapair.TOURS): its steps say what to
// watch; what happened is told by the Narrator.
//
//   const n = new Hapair.Narrator(meta, {onItem});
//   n.feed({events, outputs, missing, now_us});   // items appended or updated in place
//   n.items       [{id, t, kind, text, level: 'major'|'minor'}], in time order
//   n.status      {checkpoint, trim, ack}: the latest normal-operation facts, as sentences
(function () {
  'use strict';
  const H = window.Hapair;

  const DETECTOR_WORDS = { heartbeat: 'no heartbeat for the failure timeout', connection: 'its connection closed' };
  const range = (a, b) => (a === b ? `id ${a}` : `ids ${a}–${b}`);
  const plural = (n, one, many) => `${H.fmtNumber(n)} ${n === 1 ? one : many || `${one}s`}`;
  const list = (names) => (names.length <= 1 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`);

  class Narrator {
    constructor(meta, opts) {
      this.opts = opts || {};
      this.meta = meta || {};
      this.ha = (this.meta.run && this.meta.run.ha) || '';
      this.sinks = new Set((this.meta.fragments || []).filter((f) => f.kind === 'sink').map((f) => f.primary));
      this.reset();
    }

    reset() {
      this.items = [];
      this.byId = new Map();
      this.seq = 0;
      this.status = { checkpoint: null, trim: null, ack: null };
      this.checkpoints = new Map();  // `${node}|${n}` -> {node, standby, bytes, covers: [[stream, pos]]}
      this.installed = new Map();    // standby -> {checkpoint, primary, covers}
      this.lastFault = null;
      this.afterIdAsked = new Map(); // producer -> after_id its consumer asked for (rebased)
      this.groups = new Map();       // open groups of replayed batches / duplicates / route changes
      this.counts = { differing: 0, duplicate: 0, missing: 0, missingFrom: null, missingTo: null };
      this.stateEmpty = false;
      this.noStandby = this.ha === 'none';
      this.takeovers = 0;
    }

    who(node) { return this.sinks.has(node) ? `the sink (${node})` : node; }
    since(t) {
      const f = this.lastFault;
      if (!f || t <= f.t) return '';
      return `${H.fmtDuration(t - f.t)} after the ${f.kind} of ${f.node}`;
    }

    put(id, t, kind, text, level) {
      let it = id ? this.byId.get(id) : null;
      if (it) {
        it.text = text;
        it.updated = ++this.seq;
        if (this.opts.onItem) this.opts.onItem(it, true);
        return it;
      }
      it = { id: id || `i${this.items.length}`, t, kind, text, level: level || 'major', since: this.since(t), updated: ++this.seq };
      this.items.push(it);
      this.byId.set(it.id, it);
      if (this.opts.onItem) this.opts.onItem(it, false);
      return it;
    }

    feed(r) {
      for (const e of r.events || []) this.event(e);
      this.outputs(r.outputs || [], r.now_us);
      this.missing(r.missing || [], r.now_us);
    }

    // Replayed batches, duplicates and route changes come in bursts: one sentence per burst.
    grouped(key, e, make) {
      const g = this.groups.get(key);
      if (g && e.t_us - g.t1 <= 5000) {
        g.t1 = e.t_us;
        make(g, e);
        this.put(g.id, g.t0, e.kind, g.text(), 'major');
        return;
      }
      const ng = { key, id: `g${++this.seq}`, t0: e.t_us, t1: e.t_us, count: 0, first: null, last: null, names: [] };
      make(ng, e);
      this.groups.set(key, ng);
      this.put(ng.id, ng.t0, e.kind, ng.text(), 'major');
    }

    event(e) {
      const n = e.node;
      switch (e.kind) {
        case 'checkpoint':
          this.checkpoints.set(`${n}|${e.checkpoint}`, { node: n, standby: e.standby, bytes: e.bytes, covers: [] });
          break;
        case 'checkpoint_covers': {
          const c = this.checkpoints.get(`${n}|${e.checkpoint}`);
          if (c) c.covers.push([e.stream, e.position]);
          break;
        }
        case 'checkpoint_installed': {
          let c = null;
          for (const [k, v] of this.checkpoints) if (v.standby === n && k.endsWith(`|${e.checkpoint}`)) c = v;
          const covers = c && c.covers.length ? `, covering ${c.covers.map(([s, p]) => `${s} up to id ${p}`).join(' and ')}` : '';
          const size = c && c.bytes !== undefined ? ` (${H.fmtBytes(c.bytes)})` : '';
          this.installed.set(n, { checkpoint: e.checkpoint, primary: c ? c.node : null, covers: c ? c.covers : [] });
          this.status.checkpoint = `${n} installs checkpoint ${e.checkpoint}${c ? ` of ${c.node}` : ''}${size}${covers}.`;
          // Keep the map small: checkpoints older than this one of the same primary are done.
          if (c) for (const k of [...this.checkpoints.keys()]) if (k.startsWith(`${c.node}|`) && Number(k.split('|')[1]) < e.checkpoint) this.checkpoints.delete(k);
          break;
        }
        case 'checkpoint_completed':
          this.status.checkpoint = `${n} declares global checkpoint ${e.checkpoint} complete: every fragment's snapshot is in its store.`;
          break;
        case 'checkpoint_snapshot':
          this.status.snapshot = `${n} aligned its inputs on the barriers of checkpoint ${e.checkpoint} and sends its snapshot (${H.fmtBytes(e.bytes || 0)}) to the coordinator.`;
          break;
        case 'checkpoint_rollback':
          this.put(null, e.t_us, e.kind, `${n} orders a rollback to checkpoint ${e.checkpoint} (${plural(e.count || 0, 'fragment')}): the snapshot goes from its store to the failed fragment's spare.`, 'major');
          break;
        case 'checkpoint_restore':
          this.put(null, e.t_us, e.kind, n === 'coordinator'
            ? `${e.peer} restored checkpoint ${e.checkpoint}: the coordinator watches it as the fragment's node from now on.`
            : `${n} rolls back to checkpoint ${e.checkpoint} in place (failover = full).`, 'major');
          break;
        case 'trimmed':
          this.status.trim = `${n} trims its output queue of ${e.stream} up to id ${e.position} (${plural(e.count, 'tuple')} freed).`;
          break;
        case 'level1_ack':
          this.status.ack = `${n} tells ${e.peer}: "${e.stream} up to id ${e.position} is no longer needed" (level-1 ack).`;
          break;
        case 'failure':
          this.lastFault = { t: e.t_us, kind: e.fault === 'crash' ? 'crash' : e.fault, node: n };
          this.put(null, e.t_us, e.kind, H.describeEvent(e), 'major');
          break;
        case 'heartbeat_missed':
          this.put(null, e.t_us, e.kind, `${n} has heard nothing from ${e.peer} for ${H.fmtDuration(e.silent_us || 0)}: half the failure timeout.`, 'major');
          break;
        case 'standby_suspected':
          this.put(null, e.t_us, e.kind, `${n} (primary) has heard nothing from its standby ${e.standby} for ${H.fmtDuration(e.silent_us || 0)}.`, 'minor');
          break;
        case 'detection': {
          const how = DETECTOR_WORDS[e.detector] || e.detector || 'silent';
          const silent = e.silent_us ? `, silent for ${H.fmtDuration(e.silent_us)}` : '';
          const since = this.since(e.t_us);
          this.put(null, e.t_us, e.kind, `${n} detects that ${e.failed} failed: ${how}${silent}${since ? `, ${since}` : ''}.`, 'major');
          break;
        }
        case 'takeover': {
          this.takeovers++;
          let s = `${n} takes over as primary`;
          const ins = this.installed.get(n);
          if (e.ha === 'passive' && e.checkpoint !== undefined) {
            const cov = ins && ins.checkpoint === e.checkpoint && ins.covers.length ? `, which covers ${ins.covers.map(([st, p]) => `${st} up to id ${p}`).join(' and ')}` : '';
            s += ` from checkpoint ${e.checkpoint}, the last one it installed${cov}: what came after, it asks for again`;
          } else if (e.ha === 'amnesia' || /state=empty/.test(e.text || '')) {
            this.stateEmpty = true;
            s += ' with an empty state: the windows in progress are lost';
          } else if (e.ha === 'upstream') {
            s += `: it rebuilds the state from its producers' output queues${e.generation !== undefined ? ` (restart point of generation ${e.generation})` : ''}`;
          } else if (e.ha === 'active') {
            s += ': it already holds the state, having processed the same input all along';
          }
          s += '.';
          if (e.exact_ids === true) s += ' Its tuple ids are the same as the old primary\'s, so consumers can drop what they already have.';
          if (e.exact_ids === false) s += ' Its output ids will continue above what consumers accepted.';
          this.put(null, e.t_us, e.kind, s, 'major');
          break;
        }
        case 'replay_request': {
          this.afterIdAsked.set(e.peer, e.after_id);
          const what = e.after_id < 0 ? 'everything it still holds' : `after id ${e.after_id}`;
          this.put(null, e.t_us, e.kind, `${this.who(n)} asks ${e.peer} to re-send ${e.stream} ${what}.`, 'major');
          break;
        }
        case 'batch_sent':
          if (e.replay) {
            this.grouped(`replay|${n}|${e.peer}|${e.stream}`, e, (g, x) => {
              g.count += x.count || 0;
              g.first = g.first === null ? x.first_id : Math.min(g.first, x.first_id);
              g.last = g.last === null ? x.last_id : Math.max(g.last, x.last_id);
              g.text = () => `${n} re-sends ${plural(g.count, 'tuple')} of ${x.stream} (${range(g.first, g.last)}) to ${this.who(x.peer)}, from its output queue.`;
            });
          }
          break;
        case 'duplicates_dropped':
          this.grouped(`dup|${n}|${e.peer}|${e.stream}`, e, (g, x) => {
            g.count += x.count || 0;
            g.first = g.first === null ? x.first_id : Math.min(g.first, x.first_id);
            g.last = g.last === null ? x.last_id : Math.max(g.last, x.last_id);
            g.text = () => `${this.sinks.has(n) ? 'The sink' : n} drops ${plural(g.count, 'duplicate')} of ${x.stream} from ${x.peer} (${range(g.first, g.last)}): it already had them.`;
          });
          break;
        case 'route_change':
          this.grouped(`route|${e.fragment_primary}|${e.epoch}`, e, (g, x) => {
            if (!g.names.includes(x.node)) g.names.push(x.node);
            g.text = () => `${list(g.names)} now ${g.names.length === 1 ? 'sends to / reads from' : 'send to / read from'} ${x.fragment_primary}, the new primary (epoch ${x.epoch}).`;
          });
          break;
        case 'replay_end':
          this.put(null, e.t_us, e.kind, `The replay of ${e.stream} from ${e.peer} to ${n} is complete: ${plural(e.count || 0, 'tuple')} re-sent.`, 'minor');
          break;
        case 'replay_gap':
        case 'fenced':
        case 'rejoin_requested':
        case 'rejoin_accepted':
        case 'rejoined':
        case 'pair_restored':
        case 'standby_lost':
        case 'held_output_released':
        case 'restart':
        case 'resume':
        case 'heal':
        case 'bootstrap_installed':
        case 'hybrid_switch':
        case 'approach_switch':
        case 'fatal':
          this.put(null, e.t_us, e.kind, H.describeEvent(e), 'major');
          break;
        case 'rebased': {
          const asked = this.afterIdAsked.get(n);
          const s = asked !== undefined && asked >= 0
            ? `${n}'s output ids continue above ${asked}, what its consumer already accepted (they are new ids, not the old ones).`
            : H.describeEvent(e);
          this.put(null, e.t_us, e.kind, s, 'major');
          break;
        }
        case 'end_of_output':
          this.put(null, e.t_us, e.kind, `${this.who(n)} received the end of every input stream: the run's output is complete.`, 'minor');
          break;
        default:
          break;
      }
    }

    outputs(list, now) {
      let dif = 0, dup = 0, t = null;
      for (const o of list) {
        if (o.status === 'differing') { dif++; t = t === null ? o.at_us : t; }
        if (o.status === 'duplicate') { dup++; t = t === null ? o.at_us : t; }
      }
      if (dif) {
        this.counts.differing += dif;
        this.put('differing', t, 'differing', `The sink received ${plural(this.counts.differing, 'tuple')} with a value the failure-free run does not have (differing): windows computed over incomplete input.`, 'major');
      }
      if (dup) {
        this.counts.duplicate += dup;
        this.put('duplicate', t, 'duplicate', `The sink delivered ${plural(this.counts.duplicate, 'tuple')} twice (duplicates in the output).`, 'major');
      }
    }

    missing(list, now) {
      if (!list.length) return;
      const c = this.counts;
      for (const m of list) {
        c.missing++;
        c.missingFrom = c.missingFrom === null ? m.ts_us : Math.min(c.missingFrom, m.ts_us);
        c.missingTo = c.missingTo === null ? m.ts_us : Math.max(c.missingTo, m.ts_us);
      }
      let why = '';
      if (this.stateEmpty) why = ': the spare restarted from an empty state, so the windows in progress are lost';
      else if (this.noStandby || !this.takeovers) why = ': nothing took over the failed node\'s work';
      const windows = c.missingFrom === c.missingTo ? `event time ${H.fmtTime(c.missingFrom, 1000)}` : `event times ${H.fmtTime(c.missingFrom, 1000)} – ${H.fmtTime(c.missingTo, 1000)}`;
      this.put('missing', now !== undefined ? now : list[0].ts_us, 'missing', `${plural(c.missing, 'output tuple')} of the failure-free run ${c.missing === 1 ? 'is' : 'are'} missing (${windows})${why}.`, 'major');
    }

    // The newest items, for a panel.
    latest(n, level) {
      const out = [];
      for (let i = this.items.length - 1; i >= 0 && out.length < n; i--) {
        const it = this.items[i];
        if (!level || it.level === level) out.push(it);
      }
      return out.reverse();
    }
  }

  // ---- the guided tour: what each approach does, then one failover, step by step ----
  // A step runs (at `speed`) until its `until` holds, then waits for "Next". `until`: a time
  // (t_us), or an event kind at a node of the failed fragment, or missing tuples appearing.
  // The text says what to watch; the narration below it says what happened (from events).
  const NORMAL = {
    none: 'No high availability: every fragment is one process. Tuples flow source → filter → aggregate → sink; each consumer acknowledges what it received (level-0 ack) and the producer trims its output queue.',
    amnesia: 'Amnesia: each fragment has an idle spare. Producers trim their output queues as soon as the consumer acknowledges (level-0 ack): nothing is kept to rebuild a lost state.',
    upstream: 'Upstream backup: each fragment has an idle spare. Producers keep in their output queue every tuple the consumer may still need to rebuild its state (the consumer\'s restart point, level-1 ack), and trim only before it.',
    passive: 'Passive standby: every few milliseconds the primary sends a checkpoint of its state to its standby. Once the standby installed it, the primary tells its producer (level-1 ack) that the input the checkpoint covers is no longer needed, and the producer trims its queue.',
    active: 'Active standby: the standby receives the same input as its primary and processes it as well; it only holds its output back. The producer trims once both copies acknowledged.',
    checkpoint: 'Global checkpoints (Flink): every 100 ms the coordinator triggers a checkpoint. The filter notes its position on the source stream, snapshots its state and sends the aggregate a barrier ("the checkpoint falls after this id"); the aggregate processes up to the barrier, snapshots too, and both snapshots go to the coordinator, which stores them and declares the checkpoint complete. Only then do the producers trim what it covers. The spares hold nothing.',
    hybrid: 'Hybrid standby: a passive standby (checkpoints) until its primary stalls, its input piles up or a command comes; then the primary sends it a bootstrap checkpoint and its producers send it the input too, so it runs as an active standby until things are calm again.',
  };
  const FAILOVER = {
    none: 'No standby replaces aggregate: the output stops.',
    amnesia: 'The spare detects the failure and takes over with an empty state: the windows in progress are lost.',
    upstream: 'The spare detects the failure, asks the filter to re-send its kept queue and rebuilds the state.',
    passive: 'The standby detects the failure, takes over from its last checkpoint and asks the filter for what came after.',
    active: 'The standby detects the failure and takes over: it already has the state.',
    checkpoint: 'The coordinator detects the failure and orders a rollback: the spare gets the aggregate\'s snapshot of the newest complete checkpoint from the store, installs it and asks the filter for what came after.',
    hybrid: 'The standby detects the failure and takes over: from its live state if it was active, else from its last checkpoint, asking the filter for what came after.',
  };

  H.tourFor = function (ha, opts) {
    const o = Object.assign({ killAt: 2000000, restartAt: 2500000, stallAt: 1699990, stallUs: 15000, fragment: 'aggregate' }, opts || {});
    const inFrag = (e) => e.node === o.fragment || e.node.startsWith(`${o.fragment}.`);
    const steps = [
      { title: 'Normal operation', text: NORMAL[ha] || '', speed: 1, until: { t_us: ha === 'hybrid' ? 1400000 : 1500000 }, showStatus: true },
      { title: 'Slow down', text: 'Ten times slower: watch the batches (dark dots), the acks flowing back (green, purple) and the output queues growing and being trimmed (the mark on each queue bar).',
        speed: 0.1, until: { t_us: ha === 'hybrid' ? o.stallAt - 20000 : 1800000 }, showStatus: true },
    ];
    if (ha === 'hybrid') {
      // A switch: the primary stalls for less than the failure timeout, so nobody takes over, but
      // its late tick makes its standby active; then the crash finds an active standby. The
      // simulated nodes tick every heartbeat interval (10 ms) from 0: stopped 10 us before a tick
      // for 15 ms, the tick comes 15 ms late (hybrid_stall_ms is 10) while the standby has heard
      // nothing for 25 ms (failure_timeout_ms is 30).
      steps.push(
        { title: `Stall the ${o.fragment} primary`, text: `At ${H.fmtTime(o.stallAt, 100000)} the ${o.fragment} primary is stopped for ${o.stallUs / 1000} ms (SIGSTOP, then SIGCONT): alive but silent for less than the failure timeout, so its standby does not take over. When it runs again, its own clock tick comes late: a stall.`,
          speed: 0.01, until: { t_us: o.stallAt }, action: { kind: 'pause', fragment: o.fragment, at_us: o.stallAt, duration_us: o.stallUs } },
        { title: 'The standby turns active', text: 'The primary sends its standby a bootstrap checkpoint and tells its producers to send the standby the input too: from now on the standby processes every tuple, as an active standby, until things stay calm for a while (hybrid_calm_ms) and it turns passive again.',
          speed: 0.01, until: { event: (e) => e.kind === 'hybrid_switch' && e.role === 'active_backup' && inFrag(e), settleUs: 3000, orT: o.stallAt + 200000 }, showStatus: true },
        { title: 'Running active', text: 'Both copies now process the input; only the primary\'s output goes on. The extra traffic is the price of the faster recovery to come.',
          speed: 0.05, until: { t_us: o.killAt - 20000 }, showStatus: true },
      );
    } else {
      steps.push({ title: 'A hundred times slower', text: 'Now 1/100 of real time, just before the crash.', speed: 0.01, until: { t_us: o.killAt - 20000 }, showStatus: true });
    }
    steps.push(
      { title: `Kill the ${o.fragment} primary`, text: `At ${H.fmtTime(o.killAt, 100000)} the ${o.fragment} primary is killed (SIGKILL): its process and its state are gone. ${ha === 'hybrid' ? 'Its standby is active: it takes over from its live state, as an active standby would, with nothing to replay from a checkpoint.' : (FAILOVER[ha] || '')}`,
        speed: 0.01, until: { t_us: o.killAt }, action: { kind: 'crash', fragment: o.fragment, at_us: o.killAt } },
    );
    if (ha !== 'none') {
      steps.push(
        { title: 'Detection', text: 'Someone has to notice: the partner, by its closed connection or by missing heartbeats.', speed: 0.01,
          until: { event: (e) => e.kind === 'detection' && (inFrag(e) || e.node === 'coordinator'), orT: o.killAt + 500000 } },
        { title: 'Takeover', text: 'The standby (or spare) becomes the primary of the fragment and tells its neighbours.', speed: 0.01,
          until: { event: (e) => e.kind === 'takeover' && inFrag(e), orT: o.killAt + 500000 } },
        { title: 'Replay', text: 'Tuples the old primary had received but whose effect is lost are asked for again; the producers re-send them from their output queues (blue dots).', speed: 0.01,
          until: { event: (e) => (e.kind === 'batch_sent' && e.replay) || e.kind === 'rebased' || e.kind === 'replay_end', settleUs: 1500, orT: o.killAt + 500000 } },
      );
      if (ha === 'amnesia')
        steps.push({ title: 'What was lost', text: 'The windows that were in progress at the crash are never delivered: their tuples show up as missing (red) in the output strip, once they are 300 ms late.', speed: 0.2,
          until: { missing: 1, settleUs: 150000, orT: o.killAt + 1500000 } });
      else
        steps.push({ title: 'Duplicate elimination', text: 'Some of what is re-computed or re-sent was already received downstream: the consumer recognises the ids and drops the copies.', speed: 0.02,
          until: { event: (e) => e.kind === 'duplicates_dropped' || (e.kind === 'replay_end' && inFrag(e)), orT: o.killAt + 60000, settleUs: 3000 } });
      steps.push(
        { title: 'The failed node comes back', text: `At ${H.fmtTime(o.restartAt, 100000)} the killed process is restarted: it asks to rejoin as the standby.`, speed: 0.2,
          until: { t_us: o.restartAt }, action: { kind: 'restart', fragment: o.fragment, at_us: o.restartAt } },
        { title: 'Pair restored', text: 'The fragment is protected again.', speed: 0.01,
          until: { event: (e) => e.kind === 'pair_restored' && inFrag(e), orT: o.restartAt + 100000 } },
      );
    } else {
      steps.push({ title: 'What was lost', text: 'Nothing replaces the aggregate: every later output is missing.', speed: 0.2, until: { missing: 1, settleUs: 100000, orT: o.killAt + 1500000 } });
    }
    steps.push({ title: 'To the end', text: 'Back to real time until the run ends. The output strip tells the result: missing, duplicate and differing tuples against the failure-free run.', speed: 1,
      until: { end: true }, summary: true });
    return steps;
  };

  H.Narrator = Narrator;
})();

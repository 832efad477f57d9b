// hapair web views: how each trace event kind is drawn (a marker's shape, colour and size) and
// said in plain words (the tooltip and the details panel). The kinds and their fields are those
// of src/protocols/trace.h (docs/TRACE.md); a kind this file does not know is still shown, as a
// small grey dot with its fields.
(function () {
  'use strict';
  const H = window.Hapair;
  const OI = H.OI;

  // size: major (the failover story), medium, minor (context), light (checkpoints: many).
  // A `legend` text puts the marker in the legend.
  const M = (shape, color, size, legend, extra) => Object.assign({ shape, color, size, legend }, extra || {});
  H.MARKERS = {
    failure:              M('cross', OI.vermillion, 'major', 'fault injected (crash, pause, partition)'),
    resume:               M('play', OI.orange, 'medium', null),
    restart:              M('play', OI.green, 'major', 'restart of a crashed node'),
    heal:                 M('ring', OI.purple, 'medium', null),
    detection:            M('diamond', OI.orange, 'major', 'detection: a node declares its partner failed'),
    takeover:             M('star', OI.yellow, 'major', 'takeover: the standby (or spare) becomes primary'),
    replay_request:       M('arrowLeft', OI.blue, 'medium', 'replay request (asks a producer to re-send)'),
    replay_start:         M('bracketL', OI.blue, 'medium', 'replayed tuples arrive (start … end)'),
    replay_end:           M('bracketR', OI.blue, 'medium', null),
    replay_gap:           M('triangleDown', OI.vermillion, 'medium', 'replay gap (cannot re-send)'),
    checkpoint:           M('tick', '#8c8c8c', 'light', 'checkpoint sent to the standby'),
    checkpoint_installed: M('dot', '#8c8c8c', 'light', 'checkpoint installed by the standby'),
    checkpoint_rejected:  M('square', OI.vermillion, 'minor', null),
    checkpoint_retry:     M('dot', OI.orange, 'minor', null),
    bootstrap_installed:  M('circle', OI.green, 'medium', null),
    pair_restored:        M('doubleRing', OI.green, 'major', 'pair restored (a standby again)'),
    hybrid_switch:        M('diamond', OI.blue, 'major', 'hybrid standby switched (active or passive)'),
    approach_switch:      M('diamond', OI.purple, 'major', "live switch of the fragment's approach"),
    candidacy:            M('dot', OI.orange, 'minor', null),
    elected:              M('star', OI.orange, 'medium', 'elected: the most advanced of k standbys takes over'),
    follows:              M('circle', OI.blue, 'medium', null),
    checkpoint_triggered: M('tick', '#8c8c8c', 'light', 'global checkpoint triggered (barriers)'),
    checkpoint_snapshot:  M('dot', OI.blue, 'light', "snapshot: a fragment's barriers aligned, its state sent to the coordinator"),
    checkpoint_completed: M('circle', OI.green, 'medium', 'global checkpoint complete'),
    checkpoint_abandoned: M('square', OI.orange, 'minor', null),
    checkpoint_rollback:  M('triangleDown', OI.vermillion, 'major', 'rollback to the last complete checkpoint'),
    checkpoint_restore:   M('circle', OI.blue, 'medium', null),
    fenced:               M('squareX', OI.purple, 'major', 'fenced (the fragment moved on without it)'),
    standby_lost:         M('triangleDown', OI.vermillion, 'major', 'standby lost: the primary runs unprotected'),
    standby_suspected:    M('triangleDown', OI.orange, 'minor', null),
    standby_heard:        M('dot', OI.green, 'minor', null),
    standby_restarted:    M('dot', OI.yellow, 'minor', null),
    held_output_released: M('arrowUp', OI.orange, 'major', 'held output released unprotected'),
    heartbeat_missed:     M('dot', OI.orange, 'minor', null),
    route_change:         M('tick', OI.blue, 'minor', null),
    claim_renewed:        M('dot', OI.purple, 'minor', null),
    claim_deferred:       M('dot', OI.purple, 'minor', null),
    rebased:              M('triangleUp', OI.purple, 'medium', null),
    backpressure:         M('square', OI.orange, 'minor', null),
    rejoin_requested:     M('dot', OI.yellow, 'minor', null),
    rejoin_accepted:      M('dot', OI.yellow, 'minor', null),
    rejoined:             M('circle', OI.yellow, 'medium', null),
    fatal:                M('cross', OI.black, 'major', null),
    exited:               M('square', '#777777', 'medium', null),
    end_of_output:        M('flag', OI.black, 'medium', 'end of output at the sink'),
  };
  // Kinds drawn otherwise: role changes colour the lane, data-plane kinds are message lines.
  H.NOT_MARKERS = new Set(['start', 'role', 'checkpoint_covers', 'checkpoint_acked',
                           'batch_sent', 'batch_received', 'level0_ack', 'level1_ack', 'trimmed',
                           'duplicates_dropped']);
  H.MESSAGE_KINDS = new Set(['batch_sent', 'batch_received', 'level0_ack', 'level1_ack', 'trimmed', 'duplicates_dropped']);
  H.SIZES = { major: 10, medium: 8, minor: 5.5, light: 4.5 };
  H.markerStyle = function (e) {
    if (e.kind === 'failure') {
      const shapes = { crash: 'cross', pause: 'pause', partition: 'bolt' };
      return Object.assign({}, H.MARKERS.failure, { shape: shapes[e.fault] || 'cross', color: H.faultOf(e.fault).color });
    }
    return H.MARKERS[e.kind] || M('dot', '#9a9a9a', 'minor', null);
  };

  H.MESSAGES = {
    batch:      { color: '#4d4d4d', dash: [], label: 'batch of tuples (sent → received)' },
    replay:     { color: OI.blue, dash: [], label: 'replayed batch', width: 2 },
    ack0:       { color: OI.green, dash: [4, 3], label: 'level-0 ack ("received up to")' },
    ack1:       { color: OI.purple, dash: [4, 3], label: 'level-1 ack ("no longer needed")' },
    checkpoint: { color: '#9a9a9a', dash: [2, 3], label: 'checkpoint (sent → installed)' },
  };

  // ---- plain words ----
  const roleWords = (r) => (H.STATES[r] ? H.STATES[r].label : String(r));
  const detectorWords = { heartbeat: 'no heartbeat for the failure timeout', connection: 'its connection closed' };
  const n = (x) => (x === undefined || x === null ? '?' : x);

  H.describeEvent = function (e) {
    const who = e.node;
    switch (e.kind) {
      case 'start': return `${who} starts as ${roleWords(e.role)}${e.ha ? ` (${H.haWords(e.ha)})` : ''}.`;
      case 'role': return `${who} is now ${roleWords(e.role)}.`;
      case 'end_of_output': return `${who} delivered the end of every input stream: the run's output is complete.`;
      case 'fatal': return `${who} stopped on an error${e.text ? `: ${e.text}` : ''}.`;
      case 'exited': return `${who}'s process ended${e.text ? ` (${e.text})` : ''}.`;
      case 'failure':
        if (e.fault === 'crash') return `${who} is killed (crash): the process is gone, its state is lost.`;
        if (e.fault === 'pause') return `${who} is paused (SIGSTOP)${e.duration_us ? ` for ${H.fmtDuration(e.duration_us)}` : ''}: it is alive but silent.`;
        if (e.fault === 'partition') return `The link between ${who} and ${n(e.peer)} is cut (partition)${e.duration_us ? ` for ${H.fmtDuration(e.duration_us)}` : ''}.`;
        return `Fault ${e.fault} at ${who}.`;
      case 'resume': return `${who} runs again (SIGCONT) after its pause.`;
      case 'restart': return `${who}'s process is started again after its crash; it will ask to rejoin as a standby.`;
      case 'heal': return `The link between ${who} and ${n(e.peer)} works again.`;
      case 'batch_sent': return `${who} sends ${n(e.count)} tuples of ${n(e.stream)} (ids ${n(e.first_id)}–${n(e.last_id)}) to ${n(e.peer)}${e.replay ? ', re-sent in a replay' : ''}.`;
      case 'batch_received': return `${who} receives ${n(e.count)} new tuples of ${n(e.stream)} from ${n(e.peer)} (ids ${n(e.first_id)}–${n(e.last_id)})${e.duplicates ? `, ${e.duplicates} duplicates dropped` : ''}.`;
      case 'duplicates_dropped': return `${who} drops ${n(e.count)} tuples of ${n(e.stream)} from ${n(e.peer)} it already had (ids ${n(e.first_id)}–${n(e.last_id)}).`;
      case 'level0_ack': return `${who} tells ${n(e.peer)}: "${n(e.stream)} received up to ${n(e.position)}" (level-0 ack).`;
      case 'level1_ack': return `${who} tells ${n(e.peer)}: "${n(e.stream)} up to ${n(e.position)} is no longer needed" (level-1 ack): it may trim its output queue.`;
      case 'trimmed': return `${who} trims its output queue of ${n(e.stream)} up to ${n(e.position)} (${n(e.count)} tuples freed).`;
      case 'checkpoint': return `${who} sends checkpoint ${n(e.checkpoint)} of its state to ${e.standby || 'its standby'} (${e.mode || 'full'}, ${e.bytes !== undefined ? H.fmtBytes(e.bytes) : '? bytes'}${e.chunks > 1 ? `, ${e.chunks} chunks` : ''}).`;
      case 'checkpoint_covers': return `Checkpoint ${n(e.checkpoint)} of ${who} covers ${n(e.stream)} up to ${n(e.position)}.`;
      case 'checkpoint_acked': return `${who}'s standby installed checkpoint ${n(e.checkpoint)}: ${who} may trim up to it.`;
      case 'checkpoint_installed': return `${who} (standby) installed checkpoint ${n(e.checkpoint)}: its copy of the state is now that recent.`;
      case 'checkpoint_rejected': return `${who} rejected checkpoint ${n(e.checkpoint)} (${n(e.reason)}).`;
      case 'checkpoint_retry': return `${who} re-sends checkpoint ${n(e.checkpoint)}: no ack came.`;
      case 'bootstrap_installed': return `${who} (a rejoined active standby) installed its primary's state (checkpoint ${n(e.checkpoint)}).`;
      case 'heartbeat_missed': return `${who} has not heard from ${n(e.peer)} for ${H.fmtDuration(e.silent_us || 0)} (half the failure timeout).`;
      case 'standby_suspected': return `${who} (primary) hears nothing from its standby ${n(e.standby)} for ${H.fmtDuration(e.silent_us || 0)}.`;
      case 'standby_heard': return `${who} hears its standby ${n(e.standby)} again.`;
      case 'standby_lost': return `${who} declares its standby ${n(e.standby)} lost (${detectorWords[e.detector] || e.detector || 'silent'}${e.silent_us ? `, silent ${H.fmtDuration(e.silent_us)}` : ''}): it now runs unprotected.`;
      case 'standby_restarted': return `A restarted process of ${who}'s standby ${n(e.standby)} asks to rejoin.`;
      case 'detection': return `${who} detects that ${n(e.failed)} failed: ${detectorWords[e.detector] || e.detector || ''}${e.silent_us ? ` (silent ${H.fmtDuration(e.silent_us)})` : ''}.`;
      case 'takeover': {
        let s = `${who} takes over as primary (${H.haWords(e.ha)})`;
        if (e.checkpoint !== undefined) s += `, from its last installed checkpoint ${e.checkpoint}`;
        s += '.';
        if (e.exact_ids === true) s += ' It regenerates the same tuple ids, so consumers drop what they already had.';
        else if (e.exact_ids === false) s += ' Its output ids are rebased above what consumers accepted.';
        return s;
      }
      case 'route_change': return `${who} now sends to / reads from ${n(e.fragment_primary)}, the new primary of its fragment (epoch ${n(e.epoch)}).`;
      case 'fenced': return `${who} is fenced: its fragment moved on to ${n(e.fragment_primary)} (epoch ${n(e.epoch)}); it stops acting as primary.`;
      case 'claim_deferred': return `${who} heard ${n(e.over)} claim epoch ${n(e.epoch)} too; it waits for its neighbours to say whom they follow.`;
      case 'claim_renewed': return `${who}'s claim to its fragment won an epoch tie over ${n(e.over)} (epoch ${n(e.epoch)}).`;
      case 'rebased': return `${who}'s output ids continue above what its consumers accepted.`;
      case 'replay_request': return `${who} asks ${n(e.peer)} to re-send ${n(e.stream)} after id ${n(e.after_id)} (replay request).`;
      case 'replay_start': return `Replayed tuples of ${n(e.stream)} from ${n(e.peer)} begin to arrive at ${who}, from id ${n(e.first_id)}.`;
      case 'replay_end': return `The replay of ${n(e.stream)} from ${n(e.peer)} to ${who} ended: ${n(e.count)} tuples re-sent.`;
      case 'replay_gap': return `${who} cannot re-send ${n(e.stream)} after id ${n(e.after_id)}: it trimmed up to ${n(e.position)} already.`;
      case 'held_output_released': return `${who} releases ${n(e.count)} output tuples it held for its lost standby: they go out unprotected.`;
      case 'backpressure': return `${who}'s output queue of ${n(e.stream)} is full: it stops taking input (back-pressure).`;
      case 'rejoin_requested': return `${who} (restarted) asks ${n(e.partner)} to take it back as its standby.`;
      case 'rejoin_accepted': return `${who} accepts ${n(e.standby)} as its standby again (epoch ${n(e.epoch)}).`;
      case 'rejoined': return `${who} is a standby of ${n(e.fragment_primary)} again (epoch ${n(e.epoch)}).`;
      case 'pair_restored': return `The pair is whole again: ${who} is primary and ${n(e.standby)} its standby${e.checkpoint !== undefined ? ` (state sent as checkpoint ${e.checkpoint})` : ''}.`;
      case 'hybrid_switch': return e.role === 'active_backup'
        ? `${who} makes its standby ${n(e.standby)} active (${e.reason}): a bootstrap checkpoint${e.checkpoint !== undefined ? ` ${e.checkpoint}` : ''} and its input redirected to it.`
        : `${who} makes its standby ${n(e.standby)} passive again (${e.reason}): its producers stop sending it input.`;
      case 'approach_switch': return e.bytes !== undefined
        ? `${who} switches its fragment from ${H.haWords(e.from_ha)} to ${H.haWords(e.ha)} (epoch ${n(e.epoch)}), sending ${n(e.bytes)} bytes for it at once.`
        : `${who} follows its primary's switch from ${H.haWords(e.from_ha)} to ${H.haWords(e.ha)}: it is the new approach's standby (epoch ${n(e.epoch)}).`;
      case 'candidacy': return `${who} found ${n(e.failed)} failed and tells the other standbys its position ${n(e.position)} (epoch ${n(e.epoch)}).`;
      case 'elected': return `${who} is the most advanced of ${n(e.count)} standbys heard (position ${n(e.position)}, epoch ${n(e.epoch)}) and takes over from ${n(e.failed)}.`;
      case 'follows': return `${who} lost the election and follows ${n(e.fragment_primary)} as its standby (epoch ${n(e.epoch)}).`;
      case 'checkpoint_triggered': return `${who} starts global checkpoint ${n(e.checkpoint)}.`;
      case 'checkpoint_snapshot': return `${who} aligned its inputs and sent its snapshot of checkpoint ${n(e.checkpoint)} (${n(e.bytes)} bytes).`;
      case 'checkpoint_completed': return `Checkpoint ${n(e.checkpoint)} is complete: every snapshot is in the store.`;
      case 'checkpoint_abandoned': return `Checkpoint ${n(e.checkpoint)} is abandoned: it will never complete.`;
      case 'checkpoint_rollback': return `${n(e.failed)} failed: ${n(e.count)} fragments roll back to checkpoint ${n(e.checkpoint)}.`;
      case 'checkpoint_restore': return `${who} installed its snapshot of checkpoint ${n(e.checkpoint)} (rollback ${n(e.count)}).`;
      default: return `${who}: ${e.kind}.`;
    }
  };

  // The fields of an event other than time, node and kind, as "key=value" text.
  H.eventFields = function (e) {
    const out = [];
    for (const k of Object.keys(e)) {
      if (k === 't_us' || k === 'node' || k === 'kind' || k === 'text') continue;
      out.push(`${k}=${e[k]}`);
    }
    if (e.text) out.push(`"${e.text}"`);
    return out.join('  ');
  };
})();

// hapair web views: what an output tuple is and where it comes from, in words (the details
// panel and the strip's tooltip). A tuple's lineage means what `streams[].lineage` says:
//   source  the position of the source tuple it derives from (Filter, Map, Union keep it),
//   window  an Aggregate's result: a hash of (operator, window end, key); the window ends at ts,
//   pair    a Join's result: a hash of its two inputs' lineages.
(function () {
  'use strict';
  const H = window.Hapair;
  const E = (s) => H.escapeHtml(s);

  // The fragment that produces a stream, the operator that made it, and, for source lineage,
  // the source stream at the start of the chain.
  function streamOrigin(model, streamName) {
    const s = model.streams.get(streamName);
    const producer = s ? s.producer : null;
    const frag = model.fragments.find((f) => f.name === producer) || null;
    const ops = frag && frag.operators ? frag.operators : [];
    let op = null;
    if (s && s.lineage === 'window') op = ops.filter((o) => o.kind === 'aggregate').pop() || null;
    else if (s && s.lineage === 'pair') op = ops.filter((o) => o.kind === 'join').pop() || null;
    else op = ops[ops.length - 1] || null;
    // Walk up to the source stream while the lineage is kept (source lineage).
    let source = null;
    if (s && s.lineage === 'source') {
      let cur = s;
      const seen = new Set();
      while (cur && !seen.has(cur.name)) {
        seen.add(cur.name);
        const f = model.fragments.find((x) => x.name === cur.producer);
        if (!f || f.kind === 'source' || !f.inputs || !f.inputs.length) { source = cur.name; break; }
        if (f.inputs.length > 1) { source = f.inputs.join(' or '); break; }
        cur = model.streams.get(f.inputs[0]);
      }
    }
    return { stream: s, fragment: frag, op, source };
  }

  function sourcePosition(lineage) {
    if (!/^[0-9a-f]{1,16}$/i.test(lineage || '')) return null;
    try {
      return BigInt(`0x${lineage}`).toString();
    } catch (e) {
      return null;
    }
  }

  // One sentence: where the tuple comes from.
  H.lineageWords = function (model, item) {
    const o = streamOrigin(model, item.stream);
    const kind = o.stream ? o.stream.lineage : null;
    const opName = o.op ? `${o.op.name} (${o.op.kind}${o.fragment ? ` in ${o.fragment.name}` : ''})` : o.fragment ? o.fragment.name : 'its operator';
    if (kind === 'source') {
      const pos = sourcePosition(item.lineage);
      return `derives from the source tuple at position ${pos !== null ? H.fmtNumber(Number(pos)) : item.lineage}` +
             `${o.source ? ` of ${o.source}` : ''}${o.fragment && o.fragment.kind !== 'source' ? `, kept by ${opName}` : ''}`;
    }
    if (kind === 'window')
      return `the result of ${opName} for key ${item.key} over the window ending at ${H.fmtTime(item.ts_us, 1000)}`;
    if (kind === 'pair') return `a result of ${opName}: one pair of its two inputs (the lineage hashes both)`;
    return `lineage ${item.lineage}`;
  };

  // The other deliveries of the same entry (stream, lineage), in delivery order.
  function copiesOf(model, item) {
    return (model.entryIndex.get(`${item.stream}|${item.lineage}`) || []).map((i) => ({ index: i, o: model.outputs[i] }));
  }

  H.lineageTooltip = function (model, it) {
    const x = it.item;
    const status = it.kind === 'missing' ? 'missing' : x.status || 'exact';
    const st = H.STATUSES[status] || { label: status, color: '#777' };
    const when = it.kind === 'missing' ? `event time ${H.fmtTime(x.ts_us, 1000)} (never delivered)` : `delivered at ${H.fmtTime(x.at_us)}`;
    return `<div class="hp-tip-main"><span class="hp-chip" style="background:${st.color}"></span><b>${E(st.label)}</b> — ` +
           `${E(x.stream)}${it.kind === 'output' ? ` #${E(x.id)}` : ''}, key ${E(x.key)}, value ${E(H.fmtValue(x.value))}</div>` +
           `<div class="hp-tip-time">${E(when)}${it.kind === 'output' && x.from ? `, from ${E(x.from)}` : ''}${x.replayed ? ', in a replay' : ''}</div>` +
           `<div class="hp-tip-fields">click for its lineage</div>`;
  };

  // The details panel: an output or missing tuple, or a marker's event.
  class DetailsPanel {
    constructor(el, view) {
      this.el = el;
      this.view = view;
      this.show(null);
      view.on('select', (d) => this.show(d));
      el.addEventListener('click', (ev) => {
        const a = ev.target.closest('[data-select]');
        if (!a) return;
        ev.preventDefault();
        const [kind, index] = a.getAttribute('data-select').split(':');
        const i = Number(index);
        const m = this.view.model;
        const t = kind === 'missing' ? m.missing[i].ts_us : m.outputs[i].at_us;
        if (t < this.view.t0 || t > this.view.t1) this.view.focus(t);
        this.view.select({ kind, index: i });
      });
    }

    show(d) {
      const m = this.view.model;
      if (!d || !d.kind) {
        this.el.innerHTML = '<h2>Details</h2><p class="hp-muted">Click a tuple in the output strip (or a dot in the latency chart) to see where it comes from. ' +
                            'Click a marker on a lane to read what happened.</p>';
        return;
      }
      if (d.kind === 'marker') {
        const mk = d.marker;
        const f = m.faultBefore(mk.t);
        const since = f && f.at_us !== mk.t ? ` (${H.fmtDuration(mk.t - f.at_us)} after the ${H.faultOf(f.kind).label} of ${f.node})` : '';
        this.el.innerHTML = `<h2>${E(mk.e.kind.replace(/_/g, ' '))} <span class="hp-muted">at ${E(H.fmtTime(mk.t))}</span></h2>` +
          `<p class="hp-big">${E(H.describeEvent(mk.e))}</p>` +
          `<p class="hp-muted">${E(since ? `At ${H.fmtTime(mk.t)}${since}.` : '')}</p>` +
          `<p class="hp-fields">${E(H.eventFields(mk.e))}</p>`;
        return;
      }
      this.el.innerHTML = this.tupleHtml(m, d.kind, d.index, d.item);
    }

    tupleHtml(m, kind, index, x) {
      const status = kind === 'missing' ? 'missing' : x.status || 'exact';
      const st = H.STATUSES[status] || { label: status, color: '#777', words: '' };
      const rows = [];
      const row = (k, v) => rows.push(`<tr><th>${E(k)}</th><td>${v}</td></tr>`);
      row('stream', E(x.stream) + streamNote(m, x.stream));
      if (kind === 'output') row('id', E(x.id));
      row('key', E(x.key));
      row('value', E(H.fmtValue(x.value)));
      row('event time', `${E(H.fmtTime(x.ts_us, 1000))}${kind === 'output' ? ` <span class="hp-muted">(latency ${E(H.fmtDuration(x.at_us - x.ts_us))})</span>` : ''}`);
      if (kind === 'output') {
        row('delivered', `${E(H.fmtTime(x.at_us))}${x.from ? ` from <b>${E(x.from)}</b>` : ''}`);
        row('replayed', x.replayed ? '<b>yes</b>: it arrived in a replayed batch' : 'no');
      }
      row('lineage', `<code>${E(x.lineage)}</code><br>${E(H.lineageWords(m, x))}`);
      // Copies of the same entry: the story of a duplicate.
      const copies = copiesOf(m, x);
      const refMissing = m.missing.map((y, i) => ({ y, i })).filter((z) => z.y.stream === x.stream && z.y.lineage === x.lineage);
      const links = [];
      for (const c of copies) {
        if (kind === 'output' && c.index === index) continue;
        links.push(`<a href="#" data-select="output:${c.index}">${E(H.STATUSES[c.o.status] ? H.STATUSES[c.o.status].label : c.o.status)} #${E(c.o.id)} at ${E(H.fmtTime(c.o.at_us))}${c.o.from ? ` from ${E(c.o.from)}` : ''}, value ${E(H.fmtValue(c.o.value))}</a>`);
      }
      for (const z of refMissing) {
        if (kind === 'missing' && z.i === index) continue;
        links.push(`<a href="#" data-select="missing:${z.i}">the reference's value ${E(H.fmtValue(z.y.value))} (missing)</a>`);
      }
      if (links.length) row(kind === 'missing' ? 'delivered instead' : 'same lineage', links.join('<br>'));
      let why = st.words;
      if (status === 'duplicate' && copies.length) {
        const first = copies.find((c) => c.o.status === 'exact');
        if (first) why += ` (first delivered at ${H.fmtTime(first.o.at_us)}${first.o.from ? ` from ${first.o.from}` : ''})`;
      }
      return `<h2><span class="hp-chip hp-chip-big" style="background:${st.color}"></span>${E(st.label)} ` +
             `<span class="hp-muted">${E(x.stream)}${kind === 'output' ? ` #${E(x.id)}` : ''}</span></h2>` +
             `<p class="hp-big">${E(why)}.</p><table class="hp-kv">${rows.join('')}</table>`;
    }
  }

  function streamNote(m, name) {
    const s = m.streams.get(name);
    if (!s) return '';
    const cons = s.consumers && s.consumers.length ? ` → ${s.consumers.join(', ')}` : '';
    return ` <span class="hp-muted">(${E(s.producer)}${E(cons)}; lineage kind: ${E(s.lineage)})</span>`;
  }

  H.DetailsPanel = DetailsPanel;
  H.streamOrigin = streamOrigin;
})();

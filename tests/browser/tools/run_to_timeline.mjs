#!/usr/bin/env node
// Builds the timeline JSON of docs/TIMELINE.md from a run folder that hapair wrote
// (config.toml, summary.json, trace.jsonl, output.csv) and the output.csv of the same
// configuration run without faults (the reference), for test fixtures and stress pages until
// the C++ writes the JSON itself. It mirrors what the C++ is meant to write; where it has to
// guess (the `from` node, `replayed`, a tuple's status) it says so in a comment.
//
//   node run_to_timeline.mjs RUN_DIR REFERENCE_DIR > data.json
//     [--title TEXT] [--inject-duplicates N]   (N hand-made duplicates, for a fixture; also
//                                                rewrites RUN_DIR/summary.json to match)
import fs from 'node:fs';
import path from 'node:path';

function usage(msg) {
  if (msg) process.stderr.write(`run_to_timeline: ${msg}\n`);
  process.stderr.write('usage: node run_to_timeline.mjs RUN_DIR REFERENCE_DIR [--title TEXT] [--inject-duplicates N]\n');
  process.exit(2);
}

const args = process.argv.slice(2);
const positional = [];
let title = null;
let injectDuplicates = 0;
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--title') title = args[++i];
  else if (args[i] === '--inject-duplicates') injectDuplicates = Number(args[++i]);
  else positional.push(args[i]);
}
if (positional.length !== 2) usage('two folders expected');
const [runDir, refDir] = positional;

// ---- a TOML reader for the effective config.toml (tables, arrays of tables, scalars, arrays) ----
function parseToml(text) {
  const root = {};
  let cur = root;
  for (let raw of text.split('\n')) {
    const line = stripComment(raw).trim();
    if (!line) continue;
    let m;
    if ((m = /^\[\[([\w.]+)\]\]$/.exec(line))) {
      const parts = m[1].split('.');
      let parent = root;
      for (const p of parts.slice(0, -1)) {
        const v = parent[p];
        parent = Array.isArray(v) ? v[v.length - 1] : v;
      }
      const last = parts[parts.length - 1];
      (parent[last] ||= []).push((cur = {}));
    } else if ((m = /^\[([\w.]+)\]$/.exec(line))) {
      cur = root[m[1]] ||= {};
    } else if ((m = /^([\w.]+)\s*=\s*(.*)$/.exec(line))) {
      cur[m[1]] = parseValue(m[2]);
    } else {
      throw new Error(`config.toml: cannot read line: ${raw}`);
    }
  }
  return root;
}
function stripComment(line) {
  let inString = false;
  for (let i = 0; i < line.length; i++) {
    if (line[i] === '"' && line[i - 1] !== '\\') inString = !inString;
    else if (line[i] === '#' && !inString) return line.slice(0, i);
  }
  return line;
}
function parseValue(v) {
  v = v.trim();
  if (v === 'true') return true;
  if (v === 'false') return false;
  if (v.startsWith('"') || v.startsWith('[')) return JSON.parse(v);
  return Number(v);
}

// ---- CSV (output.csv has no quoted fields: names are plain) ----
function readOutputCsv(file) {
  const lines = fs.readFileSync(file, 'utf8').trim().split('\n');
  const head = lines.shift().split(',');
  return lines.map((l) => {
    const cells = l.split(',');
    const row = {};
    head.forEach((h, i) => (row[h] = cells[i]));
    return {
      at_us: Number(row.delivery_us), stream: row.stream, id: Number(row.id), ts_us: Number(row.ts_us),
      key: Number(row.key), value: Number(row.value), lineage: row.lineage,
    };
  });
}

const config = parseToml(fs.readFileSync(path.join(runDir, 'config.toml'), 'utf8'));
const summaryPath = path.join(runDir, 'summary.json');
const summary = JSON.parse(fs.readFileSync(summaryPath, 'utf8'));
const events = fs.readFileSync(path.join(runDir, 'trace.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const delivered = readOutputCsv(path.join(runDir, 'output.csv'));
const reference = readOutputCsv(path.join(refDir, 'output.csv'));

const net = config.network;
const haWords = { none: 'no HA', amnesia: 'amnesia', upstream: 'upstream backup', passive: 'passive standby', active: 'active standby' };

// ---- fragments, nodes, streams ----
const fragments = [];
const streams = new Map(); // name -> {name, producer, consumers, lineage}
for (const s of config.source || []) {
  fragments.push({ name: s.name, kind: 'source', ha: 'none', primary: s.name, standby: null, inputs: [], outputs: [s.stream], operators: [] });
  streams.set(s.stream, { name: s.stream, producer: s.name, consumers: [], lineage: 'source' });
}
for (const f of config.fragment || []) {
  const ha = f.ha === 'default' ? net.ha : f.ha;
  const ops = f.operator || [];
  const produced = new Set(ops.map((o) => o.output));
  const inputs = [];
  for (const o of ops) for (const i of o.inputs || [o.input]) if (!produced.has(i) && !inputs.includes(i)) inputs.push(i);
  const consumedInside = new Set(ops.flatMap((o) => o.inputs || [o.input]));
  const outputs = ops.map((o) => o.output).filter((s) => !consumedInside.has(s));
  // hapair names a standby X.backup (passive, active) and a recovery node X.spare (amnesia,
  // upstream backup).
  const standby = ha === 'none' ? null : ha === 'amnesia' || ha === 'upstream' ? `${f.name}.spare` : `${f.name}.backup`;
  fragments.push({ name: f.name, kind: 'operators', ha, primary: f.name, standby, inputs, outputs,
                   operators: ops.map((o) => ({ name: o.name, kind: o.type })) });
}
for (const s of config.sink || []) {
  fragments.push({ name: s.name, kind: 'sink', ha: 'none', primary: s.name, standby: null,
                   inputs: s.inputs || [s.input], outputs: [], operators: [] });
}
// Lineage kinds follow the operators in order: Filter/Map/Union keep their input's.
for (let pass = 0; pass < 8; pass++) {
  for (const f of config.fragment || []) {
    for (const o of f.operator || []) {
      const ins = o.inputs || [o.input];
      let kind = 'source';
      if (o.type === 'aggregate') kind = 'window';
      else if (o.type === 'join') kind = 'pair';
      else kind = streams.get(ins[0])?.lineage || 'source';
      const s = streams.get(o.output) || { name: o.output, producer: f.name, consumers: [], lineage: kind };
      s.lineage = kind;
      streams.set(o.output, s);
    }
  }
}
for (const f of fragments) for (const i of f.inputs) streams.get(i)?.consumers.includes(f.name) || streams.get(i)?.consumers.push(f.name);
const nodes = [];
for (const f of fragments) {
  nodes.push({ name: f.primary, fragment: f.name, planned: 'primary' });
  if (f.standby) nodes.push({ name: f.standby, fragment: f.name, planned: 'standby' });
}

// ---- faults from the trace ----
const faults = [];
for (const e of events) {
  if (e.kind === 'failure') {
    faults.push({ kind: e.fault, node: e.node, at_us: e.t_us, until_us: null, peer: e.peer ?? null });
  } else if (e.kind === 'resume' || e.kind === 'restart' || e.kind === 'heal') {
    const want = e.kind === 'resume' ? 'pause' : e.kind === 'restart' ? 'crash' : 'partition';
    const f = faults.find((x) => x.kind === want && x.node === e.node && x.until_us === null &&
                                 (want !== 'partition' || (x.peer ?? null) === (e.peer ?? null)));
    if (f) f.until_us = e.t_us;
  }
}

// ---- outputs: from, replayed, status ----
// `from`: the sink's current primary of the producing fragment (its route_change events).
// `replayed`: the first `count` tuples of a stream at or above first_id after a sink's replay_start.
const sinkNames = new Set(fragments.filter((f) => f.kind === 'sink').map((f) => f.name));
const producerOf = new Map([...streams.values()].map((s) => [s.name, s.producer]));
const current = new Map(fragments.map((f) => [f.name, f.primary]));
const fragmentOfNode = new Map(nodes.map((n) => [n.name, n.fragment]));
const sinkEvents = events.filter((e) => sinkNames.has(e.node) && (e.kind === 'route_change' || e.kind === 'replay_start' || e.kind === 'replay_end'));
const replaying = new Map(); // stream -> {first_id, left}
let ei = 0;
const outputs = delivered.map((d) => {
  while (ei < sinkEvents.length && sinkEvents[ei].t_us <= d.at_us) {
    const e = sinkEvents[ei++];
    if (e.kind === 'route_change') current.set(fragmentOfNode.get(e.fragment_primary), e.fragment_primary);
    else if (e.kind === 'replay_start') replaying.set(e.stream, { first_id: e.first_id, left: Infinity });
    else if (e.kind === 'replay_end') { const r = replaying.get(e.stream); if (r) r.left = e.count; }
  }
  let replayed = false;
  const r = replaying.get(d.stream);
  if (r && d.id >= r.first_id && r.left > 0) { replayed = true; r.left--; }
  return { ...d, from: current.get(producerOf.get(d.stream)) ?? null, replayed, status: 'exact' };
});

// Hand-made duplicates for a fixture: the last N tuples the failed node delivered before its
// crash are delivered again right after the takeover, from the new primary, in a replay.
const takeover = events.find((e) => e.kind === 'takeover');
if (injectDuplicates > 0 && takeover) {
  const failure = events.find((e) => e.kind === 'failure');
  const before = outputs.filter((o) => o.at_us < failure.t_us);
  const copies = before.slice(-injectDuplicates).map((o, i) => ({
    ...o, at_us: takeover.t_us + 480 + i * 7, from: takeover.node, replayed: true,
  }));
  const at = outputs.findIndex((o) => o.at_us > copies[0].at_us);
  outputs.splice(at < 0 ? outputs.length : at, 0, ...copies);
}

// Status against the reference, as multisets of entries (stream, lineage, key, value, ts).
const entryKey = (o) => `${o.stream}|${o.lineage}|${o.key}|${o.value}|${o.ts_us}`;
const left = new Map();
for (const r of reference) left.set(entryKey(r), (left.get(entryKey(r)) || 0) + 1);
const seen = new Set();
for (const o of outputs) {
  const k = entryKey(o);
  if ((left.get(k) || 0) > 0) { o.status = 'exact'; left.set(k, left.get(k) - 1); seen.add(k); }
  else o.status = seen.has(k) ? 'duplicate' : 'differing';
}
const missing = [];
for (const r of reference) {
  const k = entryKey(r);
  if ((left.get(k) || 0) > 0) {
    left.set(k, left.get(k) - 1);
    missing.push({ stream: r.stream, ts_us: r.ts_us, key: r.key, value: r.value, lineage: r.lineage });
  }
}
const count = (s) => outputs.filter((o) => o.status === s).length;
const sem = summary.semantics;
if (injectDuplicates > 0) {
  sem.duplicates = count('duplicate');
  sem.delivered_tuples = outputs.length;
  sem.verdict = sem.lost > 0 ? 'gap' : sem.duplicates + sem.differing > 0 ? 'rollback' : 'precise';
  sem.note = `${sem.note}; ${injectDuplicates} duplicates added by hand for this fixture`;
  summary.tuples_out = outputs.length;
  fs.writeFileSync(summaryPath, JSON.stringify(summary, null, 2) + '\n');
}
if (count('duplicate') !== sem.duplicates || count('differing') !== sem.differing || missing.length !== sem.lost)
  process.stderr.write(`run_to_timeline: warning: counts differ from summary.json (dup ${count('duplicate')}/${sem.duplicates}, ` +
                       `differing ${count('differing')}/${sem.differing}, lost ${missing.length}/${sem.lost})\n`);

const run = {
  format: 'hapair-timeline/1',
  title: title || `${haWords[summary.ha] || summary.ha} on the ${summary.network} network, seed ${summary.seed}, ${summary.driver === 'sim' ? 'simulator' : 'real processes'}`,
  run: {
    driver: summary.driver, ha: summary.ha, network: summary.network, seed: summary.seed, version: summary.version,
    duration_us: Math.round(net.duration_s * 1e6), end_us: summary.end_us, completed: summary.completed,
    trace_level: net.trace_level, verdict: sem.verdict, lost: sem.lost, duplicates: sem.duplicates,
    differing: sem.differing, reference_tuples: sem.reference_tuples, delivered_tuples: sem.delivered_tuples,
    multiset_compare: sem.multiset_compare,
  },
  fragments, nodes, streams: [...streams.values()], faults, events,
  outputs: outputs.map((o) => ({ at_us: o.at_us, stream: o.stream, id: o.id, ts_us: o.ts_us, key: o.key, value: o.value,
                                 lineage: o.lineage, from: o.from, replayed: o.replayed, status: o.status })),
  missing,
};
// One output or event a line keeps the fixture diffable.
const lines = [];
lines.push('{');
const keys = Object.keys(run);
keys.forEach((k, i) => {
  const comma = i + 1 < keys.length ? ',' : '';
  if (Array.isArray(run[k]) && ['events', 'outputs', 'missing'].includes(k)) {
    lines.push(`  ${JSON.stringify(k)}: [`);
    run[k].forEach((x, j) => lines.push(`    ${JSON.stringify(x)}${j + 1 < run[k].length ? ',' : ''}`));
    lines.push(`  ]${comma}`);
  } else {
    lines.push(`  ${JSON.stringify(k)}: ${JSON.stringify(run[k])}${comma}`);
  }
});
lines.push('}');
process.stdout.write(lines.join('\n') + '\n');

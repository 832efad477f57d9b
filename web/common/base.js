// hapair web views: the shared namespace, number and time formatting, the palette and the
// words used for roles, modes and statuses. Plain script (no modules): every file of
// web/common attaches to window.Hapair, so a page can be inlined into one self-contained file.
//
// Times are microseconds since the run's start everywhere (the JSON's t_us, at_us, ts_us).
(function () {
  'use strict';
  const H = (window.Hapair = window.Hapair || {});

  // ---- palette: Okabe & Ito, safe for the common colour-vision deficiencies ----
  const OI = {
    black: '#000000', orange: '#E69F00', sky: '#56B4E9', green: '#009E73',
    yellow: '#F0E442', blue: '#0072B2', vermillion: '#D55E00', purple: '#CC79A7',
  };
  H.OI = OI;

  // Lane states: a node's role, or dead (crashed), stopped (ended on its own), unknown.
  H.STATES = {
    primary:        { label: 'primary',         fill: OI.blue,   text: '#ffffff' },
    passive_backup: { label: 'passive standby', fill: OI.sky,    text: '#000000' },
    active_backup:  { label: 'active standby',  fill: OI.green,  text: '#ffffff' },
    spare:          { label: 'spare',           fill: '#d9d9d9', text: '#000000' },
    rejoining:      { label: 'rejoining',       fill: OI.yellow, text: '#000000' },
    fenced:         { label: 'fenced',          fill: OI.purple, text: '#000000' },
    coordinator:    { label: 'coordinator',     fill: OI.orange, text: '#000000' },
    dead:           { label: 'dead',            fill: '#3a3a3a', text: '#ffffff', hatch: true },
    stopped:        { label: 'ended',           fill: '#9a9a9a', text: '#000000' },
    unknown:        { label: 'starting',        fill: '#eeeeee', text: '#000000' },
  };
  H.stateOf = (name) => H.STATES[name] || { label: String(name), fill: '#cccccc', text: '#000000' };

  // Output statuses against the failure-free reference.
  H.STATUSES = {
    exact:     { label: 'exact',     color: OI.green,      words: 'the first delivered copy of a reference tuple' },
    duplicate: { label: 'duplicate', color: OI.orange,     words: 'a further copy of a tuple the sink already had' },
    differing: { label: 'differing', color: OI.purple,     words: 'a tuple the failure-free reference does not have (for example a window computed over incomplete input)' },
    missing:   { label: 'missing',   color: OI.vermillion, words: 'a reference tuple that was never delivered (drawn at its event time)' },
  };
  H.STATUS_ORDER = ['exact', 'duplicate', 'differing', 'missing'];

  H.FAULTS = {
    crash:     { label: 'crash',     color: OI.vermillion, words: 'killed (SIGKILL)' },
    pause:     { label: 'pause',     color: OI.orange,     words: 'paused (SIGSTOP until SIGCONT)' },
    partition: { label: 'partition', color: OI.purple,     words: 'cut off from a peer (network partition)' },
  };
  H.faultOf = (kind) => H.FAULTS[kind] || { label: String(kind), color: '#777777', words: String(kind) };

  H.HA_WORDS = {
    none: 'no HA', amnesia: 'amnesia', upstream: 'upstream backup',
    passive: 'passive standby', active: 'active standby', hybrid: 'hybrid standby',
    checkpoint: 'global checkpoints',
  };
  H.haWords = (ha) => H.HA_WORDS[ha] || String(ha);

  H.VERDICTS = {
    precise:  { label: 'PRECISE',  color: OI.green,      text: '#ffffff', words: 'every reference tuple delivered exactly once' },
    rollback: { label: 'ROLLBACK', color: OI.orange,     text: '#000000', words: 'nothing lost, but duplicate or differing tuples' },
    gap:      { label: 'GAP',      color: OI.vermillion, text: '#ffffff', words: 'some reference tuples were lost' },
  };

  // ---- formatting ----
  // A time since the run's start in seconds, with as many decimals as `stepUs` needs.
  H.fmtTime = function (us, stepUs) {
    const s = us / 1e6;
    let decimals = 6;
    if (stepUs !== undefined) decimals = Math.max(0, Math.min(6, Math.ceil(-Math.log10(stepUs / 1e6) - 1e-9)));
    return s.toFixed(decimals) + ' s';
  };
  // A duration in words-sized units: 850 µs, 20.1 ms, 1.25 s.
  H.fmtDuration = function (us) {
    const a = Math.abs(us);
    if (a < 1000) return `${Math.round(us)} µs`;
    const trim = (t) => t.replace(/\.0+$/, '').replace(/(\.\d*?)0+$/, '$1');
    if (a < 1e6) return `${trim((us / 1000).toFixed(a < 10000 ? 2 : 1))} ms`;
    return `${trim((us / 1e6).toFixed(a < 1e7 ? 3 : 1))} s`;
  };
  H.fmtBytes = function (b) {
    if (b < 1024) return `${b} bytes`;
    if (b < 1024 * 1024) return `${(b / 1024).toFixed(1)} KB`;
    return `${(b / 1024 / 1024).toFixed(2)} MB`;
  };
  H.fmtNumber = (n) => (typeof n === 'number' ? n.toLocaleString('en-US') : String(n));
  H.fmtValue = function (v) {
    if (typeof v !== 'number') return String(v);
    if (Number.isInteger(v)) return String(v);
    return String(Number(v.toPrecision(10)));
  };
  H.escapeHtml = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));

  // Nice axis steps: 1, 2, 5 times a power of ten (in µs), at least minUs.
  H.niceStep = function (minUs) {
    if (!(minUs > 0)) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(minUs)));
    for (const m of [1, 2, 5, 10]) if (m * p >= minUs) return m * p;
    return 10 * p;
  };
  // A nice upper bound for a chart's y axis.
  H.niceMax = function (v) {
    if (!(v > 0)) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= v) return m * p;
    return 10 * p;
  };

  // Binary search: the first index i in [0, n) with key(i) >= x (n when none).
  H.lowerBound = function (n, key, x) {
    let lo = 0, hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (key(mid) < x) lo = mid + 1; else hi = mid;
    }
    return lo;
  };
})();

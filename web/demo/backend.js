// hapair demo: the one door to the simulator. Every backend is an object with
//   kind                    'http' | 'wasm' | whatever an injected one says
//   async call(request)     → response   (docs/DEMO.md: networks, create, advance, step, fault,
//                                         close, real_start, real_kill, real_status)
//   real                    whether real processes can be started (only the server can)
// An answer {"error": "…"} is returned as it is (never thrown); a broken transport throws.
//
// Which backend the page uses (Hapair.chooseBackend):
//   1. window.hapairDemoBackend, when a test (or a page embedding the demo) injected one;
//   2. ?backend=http|wasm in the URL;
//   3. a file:// page: the WebAssembly build;
//   4. otherwise `{"op":"networks"}` is POSTed to /api/demo: a JSON answer with networks means
//      the page is served by `hapair demo` (HTTP); anything else: the WebAssembly build.
(function () {
  'use strict';
  const H = window.Hapair;

  class HttpBackend {
    constructor(url) {
      this.kind = 'http';
      this.real = true;
      this.url = url || '/api/demo';
    }
    async call(request, { timeoutMs } = {}) {
      const ctl = new AbortController();
      const timer = setTimeout(() => ctl.abort(), timeoutMs || 60000);
      try {
        const res = await fetch(this.url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(request),
          signal: ctl.signal,
          cache: 'no-store',
        });
        const text = await res.text();
        let body;
        try {
          body = JSON.parse(text);
        } catch (e) {
          throw new Error(`/api/demo answered ${res.status} with something that is not JSON: ${text.slice(0, 120)}`);
        }
        if (!res.ok && !(body && body.error)) throw new Error(`/api/demo answered HTTP ${res.status}`);
        return body;
      } finally {
        clearTimeout(timer);
      }
    }
  }

  // The WebAssembly build of the same C++ demo service: a global hapair_demo(text) → text,
  // defined by web/demo/wasm/hapair_sim.js once its module is ready.
  class WasmBackend {
    constructor(fn) {
      this.kind = 'wasm';
      this.real = false;
      this.fn = fn;
    }
    async call(request) {
      const text = this.fn(JSON.stringify(request));
      return JSON.parse(text);
    }
    static async load({ src = 'wasm/hapair_sim.js', timeoutMs = 30000 } = {}) {
      const ready = () => typeof window.hapair_demo === 'function';
      if (!ready()) {
        // index.html carries <script src="wasm/hapair_sim.js"> (inlined in the static page); load
        // it here only when it is not there.
        const present = document.querySelector('script[data-hapair-wasm], script[src$="wasm/hapair_sim.js"]') || window.Module || window.hapairSimReady;
        if (!present) {
          await new Promise((resolve, reject) => {
            const s = document.createElement('script');
            s.src = src;
            s.dataset.hapairWasm = '1';
            s.onload = resolve;
            s.onerror = () => reject(new Error(`no simulator: ${src} (the WebAssembly build) did not load, and no hapair demo server answers. ` +
              'Run `hapair demo` and open the address it prints, or build web/demo/wasm/.'));
            document.head.append(s);
          });
        }
        // The glue may define hapair_demo only once its runtime is initialised, or offer a promise.
        if (window.hapairSimReady && typeof window.hapairSimReady.then === 'function') await window.hapairSimReady;
        const t0 = performance.now();
        while (!ready()) {
          if (performance.now() - t0 > timeoutMs) throw new Error(`${src} loaded but defined no hapair_demo() within ${timeoutMs / 1000} s`);
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      return new WasmBackend((text) => window.hapair_demo(text));
    }
  }

  H.chooseBackend = async function () {
    if (window.hapairDemoBackend) {
      const b = window.hapairDemoBackend;
      if (!b.kind) b.kind = 'injected';
      return b;
    }
    const forced = new URLSearchParams(location.search).get('backend');
    if (forced === 'http') return new HttpBackend();
    if (forced === 'wasm' || location.protocol === 'file:') return WasmBackend.load();
    const http = new HttpBackend();
    try {
      const r = await http.call({ op: 'networks' }, { timeoutMs: 4000 });
      if (r && Array.isArray(r.networks)) return http;
    } catch (e) {
      // no server: fall through to the WebAssembly build
    }
    return WasmBackend.load();
  };

  H.HttpBackend = HttpBackend;
  H.WasmBackend = WasmBackend;
})();

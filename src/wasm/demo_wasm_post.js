// Appended to the WebAssembly glue (scripts/build_wasm.sh): the page calls hapair_demo(text) and
// waits for hapairSimReady (a promise that resolves once the module has started).
globalThis.hapairSimReady = new Promise(function (resolve) {
  var started = function () {
    globalThis.hapair_demo = Module.cwrap('hapair_demo', 'string', ['string']);
    resolve(true);
  };
  if (typeof Module.calledRun !== 'undefined' && Module.calledRun) started();
  else {
    var previous = Module.onRuntimeInitialized;
    Module.onRuntimeInitialized = function () {
      if (previous) previous();
      started();
    };
  }
});

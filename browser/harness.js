// Helpers the Go package calls in the page (see session.go). Every function
// returns a promise of {ok: ...} or {err: "the error as the page saw it"}.
'use strict';
(() => {
  // ctors are the typed arrays the Go side's bytes are read into (tensor.go
  // elemSize); float16 goes as its bits, which onnxruntime-web takes in a
  // Uint16Array (and moves to a Float16Array where the browser has one).
  const ctors = {
    float32: Float32Array, float64: Float64Array, float16: Uint16Array,
    int64: BigInt64Array, uint64: BigUint64Array, int32: Int32Array, uint32: Uint32Array,
    int16: Int16Array, uint16: Uint16Array, int8: Int8Array, uint8: Uint8Array, bool: Uint8Array,
  };

  const fromB64 = (s) => {
    const bin = atob(s);
    const u = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) u[i] = bin.charCodeAt(i);
    return u;
  };
  const toB64 = (u) => {
    let s = '';
    for (let i = 0; i < u.length; i += 0x8000) {
      s += String.fromCharCode.apply(null, u.subarray(i, i + 0x8000));
    }
    return btoa(s);
  };
  const errText = (e) => {
    if (e instanceof Error) return e.message || String(e);
    if (typeof e === 'string') return e;
    try { return JSON.stringify(e); } catch (_) { return String(e); }
  };
  const wrap = (f) => async (...args) => {
    try { return { ok: await f(...args) }; } catch (e) { return { err: errText(e) }; }
  };

  const hw = { session: null };

  const sessionOptions = (provider) => {
    let ep;
    switch (provider) {
      case 'wasm': ep = 'wasm'; break;
      case 'webgpu': ep = 'webgpu'; break;
      case 'webnn': ep = { name: 'webnn', deviceType: 'cpu' }; break;
      default: throw new Error('unknown provider ' + provider);
    }
    return { executionProviders: [ep] };
  };
  const fetchModel = async (url) => {
    const resp = await fetch(url);
    if (!resp.ok) throw new Error('fetching ' + url + ': HTTP ' + resp.status);
    return new Uint8Array(await resp.arrayBuffer());
  };

  // open creates the session from the model at url, and times
  // InferenceSession.create (the model is fetched before).
  const initORT = () => {
    if (typeof ort === 'undefined') throw new Error('onnxruntime-web did not load (ort is undefined)');
    const dist = new URL(document.querySelector('script[src]').src);
    ort.env.wasm.wasmPaths = dist.href.replace(/[^/]*$/, '');
  };

  hw.open = wrap(async (url, provider) => {
    initORT();
    const opts = sessionOptions(provider);
    const bytes = await fetchModel(url);
    const t0 = performance.now();
    hw.session = await ort.InferenceSession.create(bytes, opts);
    const createMs = performance.now() - t0;
    hw.url = url;
    hw.provider = provider;
    return {
      createMs,
      inputNames: hw.session.inputNames,
      outputNames: hw.session.outputNames,
      ortVersion: (ort.env.versions && ort.env.versions.web) || '',
      crossOriginIsolated: self.crossOriginIsolated === true,
      numThreads: ort.env.wasm.numThreads || 0,
      userAgent: navigator.userAgent,
    };
  });

  // placement creates a second session of the same model with ORT's
  // verbose log on, so that its node placement lands in the console, and
  // releases it. (Verbose logging slows creation: the timed session has it off.)
  hw.placement = wrap(async () => {
    const level = ort.env.logLevel;
    const opts = sessionOptions(hw.provider);
    opts.logSeverityLevel = 0;
    opts.logVerbosityLevel = 0;
    ort.env.logLevel = 'verbose';
    try {
      const s = await ort.InferenceSession.create(await fetchModel(hw.url), opts);
      await s.release();
    } finally {
      ort.env.logLevel = level;
    }
    return true;
  });

  // feedsOf makes session.run's feeds from [{name, type, shape, b64 | strings}].
  const feedsOf = (inputs) => {
    const feeds = {};
    for (const x of inputs) {
      if (x.type === 'string') {
        feeds[x.name] = new ort.Tensor('string', x.strings, x.shape);
        continue;
      }
      const C = ctors[x.type];
      if (!C) throw new Error('input ' + x.name + ': unsupported type ' + x.type);
      const b = fromB64(x.b64 || '');
      feeds[x.name] = new ort.Tensor(x.type, new C(b.buffer, 0, b.byteLength / C.BYTES_PER_ELEMENT), x.shape);
    }
    return feeds;
  };

  // outputsOf reads session.run's results, in the session's output order, as
  // [{name, type, shape, b64 | strings}].
  const outputsOf = async (session, res) => {
    const outputs = [];
    for (const name of session.outputNames) {
      const t = res[name];
      if (!t) throw new Error('output ' + name + ': not in the results');
      const d = t.location === 'cpu' || t.location === undefined ? t.data : await t.getData(true);
      if (t.type === 'string') {
        outputs.push({ name, type: t.type, shape: Array.from(t.dims), strings: Array.from(d) });
        continue;
      }
      if (!ctors[t.type]) throw new Error('output ' + name + ': unsupported type ' + t.type);
      outputs.push({ name, type: t.type, shape: Array.from(t.dims),
        b64: toB64(new Uint8Array(d.buffer, d.byteOffset, d.byteLength)) });
    }
    return outputs;
  };

  // run runs the session on [{name, type, shape, b64}] and returns the
  // outputs the same way, with the time of session.run in ms.
  hw.run = wrap(async (inputs) => {
    if (!hw.session) throw new Error('no session');
    const feeds = feedsOf(inputs);
    const t0 = performance.now();
    const res = await hw.session.run(feeds, { logSeverityLevel: 3 });
    const ms = performance.now() - t0;
    return { ms, outputs: await outputsOf(hw.session, res) };
  });

  // bind keeps [{name, type, shape, b64}] in the page as the feeds of measure.
  hw.bind = wrap(async (inputs) => {
    if (!hw.session) throw new Error('no session');
    hw.feeds = feedsOf(inputs);
    return true;
  });

  // measure times session.run on the bound feeds back to back, as a user's
  // own loop would, until maxRuns runs or budgetMs have passed (one run at
  // least), and returns each run's time in ms. Nothing happens between runs:
  // no round trip to Go (the page idling between runs made the next one up to
  // 1.5x slower), no tensors built, no outputs read.
  hw.measure = wrap(async (maxRuns, budgetMs) => {
    const session = hw.session, feeds = hw.feeds, ms = [];
    if (!session) throw new Error('no session');
    if (!feeds) throw new Error('no bound inputs (hw.bind)');
    const end = performance.now() + budgetMs;
    do {
      const t0 = performance.now();
      await session.run(feeds);
      ms.push(performance.now() - t0);
    } while (ms.length < maxRuns && performance.now() < end);
    return ms;
  });

  // watchDevice notes when the WebGPU device onnxruntime-web made is lost (a
  // GPU process crash, a reset): every later session in the page would fail
  // for that, not for its model, so the page must be replaced.
  const watchDevice = () => {
    let dev;
    try { dev = ort.env.webgpu && ort.env.webgpu.device; } catch (_) { return; }
    if (!dev || !dev.lost || dev === hw.watched) return;
    hw.watched = dev;
    // 'destroyed' is onnxruntime-web letting go of its own device (the next
    // session makes a new one), not a loss.
    dev.lost.then((info) => {
      if (info.reason !== 'destroyed') hw.lost = 'WebGPU device lost (' + info.reason + '): ' + info.message;
    });
  };

  // A promise that onnxruntime-web never settles, but whose work failed,
  // shows up only as an unhandled rejection (WebNN's MLGraphBuilder.build
  // refusing a graph leaves InferenceSession.create pending for ever).
  // abandoned rejects with it, so that the case gets that error at once.
  let onUnhandled = null;
  self.addEventListener('unhandledrejection', (e) => { if (onUnhandled) onUnhandled(e.reason); });
  const abandoned = () => new Promise((_, reject) => {
    onUnhandled = (reason) => reject(new Error(errText(reason)));
  });

  // cases runs cases [{name, model, inputs}] (model: the file's bytes in
  // base64) one after the other: InferenceSession.create with provider, run
  // once, release. The models come in the call: fetching each from the
  // server cost 7.5 ms a case, three times create and run together. Each
  // case's result goes to Go as soon as it is known, through the binding
  // hwCase (a CDP event, no round trip): {i, created} when its session exists,
  // then {i, stage, err, createMs, runMs, pageMs, outputs, lost}. A case
  // that hangs or kills the page leaves the results before it with Go. It
  // stops early, after the case that saw it, when the WebGPU device is lost.
  // Returns how many cases it ran.
  // On WebNN the page makes one MLContext (deviceType cpu) for all its
  // sessions, as an app would: a context per session cost 600 ms each.
  hw.cases = wrap(async (provider, cases) => {
    initORT();
    const opts = sessionOptions(provider);
    if (provider === 'webnn') {
      hw.mlContext = hw.mlContext || await navigator.ml.createContext({ deviceType: 'cpu' });
      opts.executionProviders = [{ name: 'webnn', context: hw.mlContext }];
    }
    const report = (m) => self.hwCase(JSON.stringify(m));
    for (let k = 0; k < cases.length; k++) {
      const c = cases[k], i = k;
      const tCase = performance.now();
      const r = { i, stage: 'create', createMs: 0, runMs: 0 };
      let session = null;
      const abandon = abandoned();
      abandon.catch(() => {}); // handled: a rejection before the race is no new unhandled one
      try {
        const bytes = fromB64(c.model);
        const t0 = performance.now();
        session = await Promise.race([ort.InferenceSession.create(bytes, opts), abandon]);
        r.createMs = performance.now() - t0;
        r.stage = 'run';
        report({ i, created: true });
        const feeds = feedsOf(c.inputs);
        const t1 = performance.now();
        const res = await Promise.race([session.run(feeds), abandon]);
        r.runMs = performance.now() - t1;
        r.outputs = await outputsOf(session, res);
        r.stage = '';
      } catch (e) {
        r.err = errText(e) || 'failed with no message';
      }
      onUnhandled = null;
      if (session) {
        try {
          await session.release();
        } catch (e) {
          if (!r.err) { r.err = 'release: ' + errText(e); r.stage = 'run'; }
        }
      }
      watchDevice();
      if (hw.lost) r.lost = hw.lost;
      r.pageMs = performance.now() - tCase;
      report(r);
      // An abandoned call does not stop the batch: on WebNN (100 such cases
      // of 902) every other case gave the same result as on a fresh page
      // per abandoned case, in 17 s instead of 130 s.
      if (r.lost) return k + 1;
    }
    return cases.length;
  });

  hw.close = wrap(async () => {
    hw.feeds = null;
    if (hw.session) await hw.session.release();
    hw.session = null;
    return true;
  });

  // adapter describes navigator.gpu's adapter.
  hw.adapter = wrap(async () => {
    if (!navigator.gpu) throw new Error('navigator.gpu is undefined (WebGPU not exposed; needs --enable-unsafe-webgpu on Linux)');
    const a = await navigator.gpu.requestAdapter();
    if (!a) throw new Error('navigator.gpu.requestAdapter() returned null (no WebGPU adapter)');
    const i = a.info || {};
    const fallback = i.isFallbackAdapter !== undefined ? i.isFallbackAdapter : a.isFallbackAdapter;
    return { vendor: i.vendor || '', architecture: i.architecture || '', device: i.device || '',
      description: i.description || '', isFallbackAdapter: fallback === true,
      features: Array.from(a.features || []).sort() };
  });

  // webnn tries navigator.ml.createContext for each device type.
  hw.webnn = wrap(async () => {
    const out = {};
    for (const deviceType of ['cpu', 'gpu', 'npu']) {
      try {
        if (!navigator.ml) throw new Error('navigator.ml is undefined (WebNN not exposed; needs --enable-features=WebMachineLearningNeuralNetwork)');
        await navigator.ml.createContext({ deviceType });
        out[deviceType] = '';
      } catch (e) {
        out[deviceType] = errText(e) || 'createContext failed';
      }
    }
    return out;
  });

  self.hw = hw;
})();

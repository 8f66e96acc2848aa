#!/usr/bin/env node
// Peer baseline: end-to-end latency of an ONNX model on ONNX Runtime's CPU provider
// (onnxruntime-node; install it with scripts/fetch_onnxruntime.sh).
//
//   node bench/peer/ort_bench.js MODEL.onnx [THREADS] [--runs N] [--warmup N]
//                                [--input-shape name=1x3x224x224]... [--seed S] [--profile OUT.json]
//                                [--input name=FILE.npy]... [--output-dir DIR]
//
// THREADS sets intraOpNumThreads (default 1; inter-op threads are 1, execution sequential).
// Inputs are seeded uniform random values in [-1, 1) (integers in [0, 8)) with the model's input
// shapes; symbolic dimensions take --input-shape, else 1. Prints one JSON line:
//   {"model": ..., "median_ms": ..., "runs": ..., ...}
// --profile OUT.json: ORT's own per-node profile (SessionOptions.enableProfiling) over the timed runs,
// reduced to one row per executed node: {"nodes": [{"name", "op", "provider", "input_shapes",
// "output_shapes", "median_ms"}], "run_median_ms"}. The nodes are ORT's after its graph
// optimizations (FusedConv, NCHWc Conv and the ReorderInput/ReorderOutput it inserts), which is
// what ORT runs; scripts/profile_vs_ort.py maps them to op families.
// --input name=FILE.npy: that input's values from a NumPy .npy file (v1-3, little-endian, C order,
// its dtype the input's) instead of random ones. --output-dir DIR: each model output of the last
// timed run written as DIR/<name>.npy (NumPy v1.0; characters outside [A-Za-z0-9._-] become '_'),
// as `tessera run --output-dir` names them, so the two can be compared file by file. Profiling costs a few
// microseconds per node, so the headline median_ms is timed without it, in a session of its own.
'use strict';

const path = require('path');

function usage(msg) {
  if (msg) process.stderr.write(`ort_bench: ${msg}\n`);
  process.stderr.write('usage: node ort_bench.js MODEL.onnx [THREADS] [--runs N] [--warmup N] ' +
                       '[--input-shape name=AxBxC]... [--seed S] [--profile OUT.json] ' +
                       '[--input name=FILE.npy]... [--output-dir DIR]\n');
  process.exit(2);
}

function parseArgs(argv) {
  const opts = {model: null, threads: 1, runs: 50, warmup: 5, seed: 0, shapes: {}, profile: null,
                files: {}, outputDir: null};
  const positional = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => (i + 1 < argv.length ? argv[++i] : usage(`${a} needs a value`));
    const int = (s, what) => {
      const v = Number(s);
      if (!Number.isInteger(v) || v < 0) usage(`${what} must be a non-negative integer, got '${s}'`);
      return v;
    };
    if (a === '--runs') opts.runs = int(next(), '--runs');
    else if (a === '--warmup') opts.warmup = int(next(), '--warmup');
    else if (a === '--threads') opts.threads = int(next(), '--threads');
    else if (a === '--seed') opts.seed = int(next(), '--seed');
    else if (a === '--profile') opts.profile = next();
    else if (a === '--output-dir') opts.outputDir = next();
    else if (a === '--input') {
      const m = /^([^=]+)=(.+)$/.exec(next());
      if (!m) usage('--input wants name=FILE.npy');
      opts.files[m[1]] = m[2];
    }
    else if (a === '--input-shape') {
      const m = /^([^=]+)=(\d+(?:x\d+)*)$/.exec(next());
      if (!m) usage('--input-shape wants name=AxBxC');
      opts.shapes[m[1]] = m[2].split('x').map(Number);
    } else if (a === '-h' || a === '--help') usage();
    else if (a.startsWith('--')) usage(`unknown option ${a}`);
    else positional.push(a);
  }
  if (positional.length < 1 || positional.length > 2) usage();
  opts.model = positional[0];
  if (positional.length === 2) opts.threads = int2(positional[1]);
  if (opts.runs < 1) usage('--runs must be at least 1');
  return opts;

  function int2(s) {
    const v = Number(s);
    if (!Number.isInteger(v) || v < 1) usage(`THREADS must be a positive integer, got '${s}'`);
    return v;
  }
}

// mulberry32: small, fast, seedable; the same seed gives the same inputs on every machine.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TYPED = {
  float32: Float32Array, float64: Float64Array, int32: Int32Array, int8: Int8Array,
  uint8: Uint8Array, bool: Uint8Array, int64: BigInt64Array,
};

function randomTensor(ort, meta, shape, next) {
  const Ctor = TYPED[meta.type];
  if (!Ctor) throw new Error(`input '${meta.name}': unsupported type ${meta.type}`);
  const n = shape.reduce((p, d) => p * d, 1);
  const data = new Ctor(n);
  for (let i = 0; i < n; i++) {
    if (meta.type === 'float32' || meta.type === 'float64') data[i] = next() * 2 - 1;
    else if (meta.type === 'int64') data[i] = BigInt(Math.floor(next() * 8));
    else if (meta.type === 'bool') data[i] = next() < 0.5 ? 1 : 0;
    else data[i] = Math.floor(next() * 8);
  }
  return new ort.Tensor(meta.type, data, shape);
}

// NumPy .npy files: the dtypes ONNX models take as inputs and give as outputs.
const NPY = {'<f4': 'float32', '<f8': 'float64', '<i4': 'int32', '<i8': 'int64', '|i1': 'int8',
             '|u1': 'uint8', '|b1': 'bool', '<f2': 'float16'};
const ARRAYS = {...TYPED, float16: Uint16Array};

function readNpy(file) {
  const buf = require('fs').readFileSync(file);
  if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !shape || /'fortran_order':\s*True/.test(header)) throw new Error(`${file}: unsupported .npy header ${header.trim()}`);
  const type = NPY[descr[1]];
  if (!type) throw new Error(`${file}: unsupported dtype ${descr[1]}`);
  const dims = shape[1].split(',').map((d) => d.trim()).filter((d) => d.length).map(Number);
  const n = dims.reduce((p, d) => p * d, 1);
  const Ctor = ARRAYS[type];
  const bytes = buf.subarray(start + headerLen, start + headerLen + n * Ctor.BYTES_PER_ELEMENT);
  if (bytes.length !== n * Ctor.BYTES_PER_ELEMENT) throw new Error(`${file}: truncated data`);
  const data = new Ctor(n);
  new Uint8Array(data.buffer).set(bytes);
  return {type, dims, data};
}

function writeNpy(file, tensor) {
  const descr = Object.keys(NPY).find((k) => NPY[k] === tensor.type);
  if (!descr) throw new Error(`output type ${tensor.type} cannot be written as .npy`);
  const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';   // data 64-byte aligned
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  const data = Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
  const fs = require('fs');
  fs.writeFileSync(file + '.tmp', Buffer.concat([head, Buffer.from(header, 'latin1'), data]));
  fs.renameSync(file + '.tmp', file);
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  let ort;
  try {
    ort = require('onnxruntime-node');
  } catch (e) {
    process.stderr.write('ort_bench: onnxruntime-node not installed; run scripts/fetch_onnxruntime.sh\n');
    process.exit(1);
  }
  const sessionOptions = {
    executionProviders: ['cpu'],
    intraOpNumThreads: opts.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  };
  const session = await ort.InferenceSession.create(path.resolve(opts.model), sessionOptions);

  const next = rng(opts.seed);
  const feeds = {};
  const shapes = {};
  for (const name of Object.keys(opts.files)) {
    if (!session.inputNames.includes(name)) usage(`--input ${name}: the model has no input '${name}'`);
  }
  for (const meta of session.inputMetadata) {
    if (opts.files[meta.name]) {
      const t = readNpy(opts.files[meta.name]);
      if (t.type !== meta.type) throw new Error(`${opts.files[meta.name]}: dtype ${t.type}, input '${meta.name}' is ${meta.type}`);
      shapes[meta.name] = t.dims;
      feeds[meta.name] = new ort.Tensor(t.type, t.data, t.dims);
      continue;
    }
    let shape = opts.shapes[meta.name];
    if (!shape) {
      shape = meta.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : 1));
      const symbolic = meta.shape.filter((d) => typeof d !== 'number' || d < 0);
      if (symbolic.length) {
        process.stderr.write(`ort_bench: input '${meta.name}': symbolic dimensions ` +
                             `${symbolic.join(', ')} set to 1 (use --input-shape)\n`);
      }
    }
    shapes[meta.name] = shape;
    feeds[meta.name] = randomTensor(ort, meta, shape, next);
  }

  for (let i = 0; i < opts.warmup; i++) await session.run(feeds);
  const times = [];
  let results = null;
  for (let i = 0; i < opts.runs; i++) {
    const t0 = process.hrtime.bigint();
    results = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  if (opts.outputDir) {
    require('fs').mkdirSync(opts.outputDir, {recursive: true});
    for (const name of session.outputNames) {
      writeNpy(path.join(opts.outputDir, name.replace(/[^A-Za-z0-9._-]/g, '_') + '.npy'), results[name]);
    }
  }
  const round = (x) => Math.round(x * 1000) / 1000;
  console.log(JSON.stringify({
    model: opts.model,
    median_ms: round(median(times)),
    runs: opts.runs,
    min_ms: round(Math.min(...times)),
    max_ms: round(Math.max(...times)),
    threads: opts.threads,
    inputs: shapes,
    ort_version: ort.env.versions.node,
  }));
  await session.release();
  if (opts.profile) await writeProfile(ort, opts, sessionOptions, feeds);
}

// Runs the model warmup + runs times with ORT's profiler on and writes the per-node medians of the
// timed runs. The profiler's trace has one "model_run" event per run and one "<node>_kernel_time"
// event per executed node; nodes are attributed to the run whose interval holds them.
async function writeProfile(ort, opts, sessionOptions, feeds) {
  const fs = require('fs');
  const os = require('os');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ort_profile_'));
  const prefix = path.join(dir, 'trace');
  const session = await ort.InferenceSession.create(path.resolve(opts.model),
                                                    {...sessionOptions, enableProfiling: true, profileFilePrefix: prefix});
  for (let i = 0; i < opts.warmup + opts.runs; i++) await session.run(feeds);
  session.endProfiling();
  await session.release();
  const file = fs.readdirSync(dir).filter((f) => f.startsWith('trace')).map((f) => path.join(dir, f))[0];
  if (!file) throw new Error('onnxruntime wrote no profile');
  const events = JSON.parse(fs.readFileSync(file, 'utf8'));
  fs.rmSync(dir, {recursive: true, force: true});
  const runs = events.filter((e) => e.cat === 'Session' && e.name === 'model_run').slice(-opts.runs);
  const nodes = new Map();   // name -> {row, samples per run}
  runs.forEach((run, r) => {
    for (const e of events) {
      if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time') || e.ts < run.ts || e.ts > run.ts + run.dur) continue;
      const name = e.name.slice(0, -'_kernel_time'.length);
      if (!nodes.has(name)) {
        nodes.set(name, {row: {name, op: e.args.op_name, provider: e.args.provider,
                               input_shapes: (e.args.input_type_shape || []).map((t) => Object.values(t)[0]),
                               output_shapes: (e.args.output_type_shape || []).map((t) => Object.values(t)[0])},
                         sums: new Array(runs.length).fill(0)});
      }
      nodes.get(name).sums[r] += e.dur / 1000;
    }
  });
  const out = {model: opts.model, threads: opts.threads, runs: runs.length,
               run_median_ms: median(runs.map((e) => e.dur / 1000)),
               nodes: [...nodes.values()].map(({row, sums}) => ({...row, median_ms: median(sums)}))};
  fs.writeFileSync(opts.profile, JSON.stringify(out, null, 1) + '\n');
}

main().catch((e) => {
  process.stderr.write(`ort_bench: ${e && e.message ? e.message : e}\n`);
  process.exit(1);
});

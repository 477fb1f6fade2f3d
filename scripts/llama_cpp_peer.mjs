// llama.cpp itself on a .gguf file, for the cross-check of AttnLab's GGUF
// models: the token ids its tokenizer gives and its next-token
// probabilities, through npm's node-llama-cpp 3.6.0 (the last release that
// runs on Node 18, Debian 12's), whose @node-llama-cpp/linux-x64 bundles a
// prebuilt llama.cpp (release b4753). CPU backend, one thread, nothing
// built or downloaded: scripts/test.sh installs the packages into
// build/npm/llama-cpp (a folder of their own: build/npm's @node-llama-cpp/linux-x64
// is a newer one, whose libggml-base.so the quants test loads).
//
//   node scripts/llama_cpp_peer.mjs MODEL.gguf (--text TEXT | --ids 1,2,3)
//        [--top-k 10] [--all-positions] [--full] [--modules DIR]
//
// prints one JSON object:
//   model       {architecture, vocab, bos, eos, add_bos, add_eos, context_train}
//   ids         the text as llama.cpp tokenizes it, no special tokens (--text)
//   ids_with_bos  the same with bos first when the file's metadata asks for
//               it (tokenizer.ggml.add_bos_token), else equal to ids (--text)
//   input       the ids evaluated: ids_with_bos for --text, --ids as given
//   positions   [{position, top: [{id, probability}], probabilities?}]: the
//               next token after each position (--all-positions) or the
//               last: the softmax of the raw logits over the whole
//               vocabulary (no sampling, no penalties), its top-k, and with
//               --full every id's probability (index = id)
//   seconds     {load, evaluate}
// What differs from a float reference by construction: llama.cpp keeps its
// KV cache in F16 (node-llama-cpp 3.6 cannot change it), and on the CPU its
// quantized matrix products quantize the activations too (to Q8_0, or Q8_K
// for the K-quants): on a Q8_0 file the probabilities moved by ~2 % of their
// size against the same dequantized weights in float64, on F32 by ~0.1 %.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const usage = 'usage: node llama_cpp_peer.mjs MODEL.gguf (--text TEXT | --ids 1,2,3) [--top-k K] [--all-positions] ' +
  '[--full] [--modules NODE_MODULES_DIR]';
function fail(message, status = 1) {
  process.stderr.write('llama_cpp_peer: ' + message + '\n');
  process.exit(status);
}
const args = process.argv.slice(2);
const option = {
  model: null, text: null, ids: null, topK: 10, allPositions: false, full: false,
  modules: path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'build', 'npm', 'llama-cpp', 'node_modules'),
};
for (let i = 0; i < args.length; ++i) {
  const a = args[i];
  const value = () => {
    if (i + 1 >= args.length) fail(a + ': expected a value\n' + usage, 2);
    return args[++i];
  };
  if (a === '--text') option.text = value();
  else if (a === '--ids') option.ids = value().split(',').filter((s) => s !== '').map(Number);
  else if (a === '--top-k') option.topK = Number(value());
  else if (a === '--all-positions') option.allPositions = true;
  else if (a === '--full') option.full = true;
  else if (a === '--modules') option.modules = value();
  else if (!a.startsWith('--') && option.model === null) option.model = a;
  else fail('unknown argument ' + a + '\n' + usage, 2);
}
if (option.model === null || (option.text === null) === (option.ids === null)) fail(usage, 2);
if (option.ids !== null && (option.ids.length === 0 || !option.ids.every((id) => Number.isInteger(id) && id >= 0)))
  fail('--ids: expected comma-separated token ids', 2);
if (!Number.isInteger(option.topK) || option.topK < 1) fail('--top-k: expected a positive integer', 2);

const entry = path.join(option.modules, 'node-llama-cpp', 'dist', 'index.js');
if (!fs.existsSync(entry)) fail(entry + ': not installed (scripts/test.sh installs node-llama-cpp 3.6.0 into build/npm/llama-cpp)');
const { getLlama, LlamaLogLevel } = await import(pathToFileURL(entry).href);

const t0 = performance.now();
// The prebuilt CPU binary only: no GPU probe, no build, no download.
const llama = await getLlama({ gpu: false, build: 'never', usePrebuiltBinaries: true, skipDownload: true,
  progressLogs: false, logLevel: LlamaLogLevel.error, maxThreads: 1 });
const model = await llama.loadModel({ modelPath: path.resolve(option.model), gpuLayers: 0, useMmap: true })
  .catch((e) => fail(option.model + ': ' + e.message + ' (llama.cpp says why above)'));

const out = { model: {}, seconds: {} };
out.model = {
  architecture: model.fileInfo.metadata.general.architecture,
  bos: model.tokens.bos,
  eos: model.tokens.eos,
  add_bos: model.tokens.shouldPrependBosToken,
  add_eos: model.tokens.shouldAppendEosToken,
  context_train: model.trainContextSize,
};
let input;
if (option.text !== null) {
  out.ids = Array.from(model.tokenize(option.text, false));
  out.ids_with_bos = model.tokens.shouldPrependBosToken && model.tokens.bos !== null ? [model.tokens.bos, ...out.ids] : out.ids;
  input = out.ids_with_bos;
} else {
  input = option.ids;
}
out.input = input;

// One sequence, evaluated in one batch on one thread. The context holds one
// position more than the input: a full context makes node-llama-cpp shift it
// (drop the first tokens) before the last token, whose probabilities then
// came out wrong.
const context = await model.createContext({ contextSize: input.length + 1, batchSize: input.length,
  sequences: 1, threads: 1, flashAttention: false });
const sequence = context.getSequence();
out.seconds.load = (performance.now() - t0) / 1e3;

const t1 = performance.now();
const wanted = (i) => option.allPositions || i === input.length - 1;
const items = input.map((id, i) => wanted(i) ? [id, { generateNext: { probabilities: true, options: { temperature: 0 } } }] : id);
const results = await sequence.controlledEvaluate(items);
out.seconds.evaluate = (performance.now() - t1) / 1e3;

out.positions = [];
for (let i = 0; i < input.length; ++i) {
  if (!wanted(i)) continue;
  const probabilities = results[i].next.probabilities;  // Map id → probability, most likely first
  const row = { position: i, top: [] };
  for (const [id, p] of probabilities) {
    if (row.top.length === option.topK) break;
    row.top.push({ id, probability: p });
  }
  if (option.full) {
    row.probabilities = new Array(probabilities.size).fill(0);
    for (const [id, p] of probabilities) row.probabilities[id] = p;
  }
  out.positions.push(row);
}
out.model.vocab = results[input.length - 1].next.probabilities.size;  // the logits' length
// Out as soon as the output is written (a pipe takes 64 KiB at a time; the
// rest is written asynchronously), without disposing: the addon's handles
// under a later garbage collection crashed V8 now and then (1 run in 20:
// "Check failed: Heap::InFromPage") after the output was written.
process.stdout.write(JSON.stringify(out) + '\n', () => process.exit(0));

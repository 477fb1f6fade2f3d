// tokenizer.json files and expected ids for tests/engine/model/tokenizers/tokenizer_json_test.cpp,
// from two npm packages with the real LLaMA vocabularies:
//   llama-tokenizer-js  (Llama 1/2: SentencePiece-style BPE, byte fallback)
//   llama3-tokenizer-js (Llama 3: byte-level BPE, split regex, ignore_merges)
// From each package's own vocabulary and merges it writes a tokenizer.json
// in Hugging Face's layout, and records the package's encode() ids (no
// bos/eos) for many strings. Llama 2 once more as transformers 5 writes it
// (no normalizer; Metaspace with prepend_scheme "first"), with the ids
// Hugging Face's own `tokenizers` (npm) gives on it, chat prompts included.
//   node tokenizer_json_expected.js NODE_MODULES_DIR OUT_DIR
// writes OUT_DIR/llama2/tokenizer.json, OUT_DIR/llama2_first/tokenizer.json,
// OUT_DIR/llama3/tokenizer.json and OUT_DIR/llama_expected.json. scripts/test.sh runs it.
'use strict';
const fs = require('fs');
const path = require('path');
const { pathToFileURL } = require('url');

const [modulesDir, outDir] = process.argv.slice(2);
if (!modulesDir || !outDir) {
  console.error('usage: node tokenizer_json_expected.js NODE_MODULES_DIR OUT_DIR');
  process.exit(2);
}

// The packages' merges: a Map "left right" → priority, in rank order.
function mergePairs(merges) {
  return [...merges.entries()].sort((a, b) => a[1] - b[1]).map(([key]) => {
    const parts = key.split(' ');
    if (parts.length !== 2) throw new Error('merge with a space inside a token: ' + JSON.stringify(key));
    return parts;
  });
}

function addedToken(id, content) {
  return { id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true };
}

function templateWith(bos, bosId) {
  return {
    type: 'TemplateProcessing',
    single: [{ SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
    pair: [{ SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
           { SpecialToken: { id: bos, type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }],
    special_tokens: { [bos]: { id: bos, ids: [bosId], tokens: [bos] } },
  };
}

function vocabObject(tokens) {
  const vocab = {};
  tokens.forEach((t, id) => {
    if (Object.prototype.hasOwnProperty.call(vocab, t)) throw new Error('token twice: ' + JSON.stringify(t));
    vocab[t] = id;
  });
  return vocab;
}

// Llama 2 (as in meta-llama/Llama-2-7b-hf's tokenizer.json): merges as "a b" strings.
function llama2Json(tok) {
  const tokens = tok.vocabById;
  if (tokens.length !== 32000) throw new Error('llama-tokenizer-js: expected 32000 tokens, got ' + tokens.length);
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [addedToken(0, '<unk>'), addedToken(1, '<s>'), addedToken(2, '</s>')],
    normalizer: {
      type: 'Sequence',
      normalizers: [{ type: 'Prepend', prepend: '▁' }, { type: 'Replace', pattern: { String: ' ' }, content: '▁' }],
    },
    pre_tokenizer: null,
    post_processor: templateWith('<s>', 1),
    decoder: {
      type: 'Sequence',
      decoders: [{ type: 'Replace', pattern: { String: '▁' }, content: ' ' }, { type: 'ByteFallback' }, { type: 'Fuse' },
                 { type: 'Strip', content: ' ', start: 1, stop: 0 }],
    },
    model: {
      type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: true, byte_fallback: true, ignore_merges: false,
      vocab: vocabObject(tokens),
      merges: mergePairs(tok.merges).map((p) => p.join(' ')),
    },
  };
}

// Llama 2 as transformers 5 converts it (legacy=False): no normalizer, Metaspace
// replacing spaces and prepending '▁' only where the text starts ("first").
function llama2FirstJson(tok) {
  const json = llama2Json(tok);
  json.normalizer = null;
  json.pre_tokenizer = { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: false };
  json.decoder = { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: '▁' }, content: ' ' },
                                                { type: 'ByteFallback' }, { type: 'Fuse' }, { type: 'Strip', content: ' ', start: 1, stop: 0 }] };
  return json;
}

// Llama 3 (as in meta-llama/Meta-Llama-3-8B's tokenizer.json): merges as [a, b] pairs.
const LLAMA3_PATTERN = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
function llama3Json(tok) {
  const all = tok.vocabById;
  if (all.length !== 128256) throw new Error('llama3-tokenizer-js: expected 128256 tokens, got ' + all.length);
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: all.slice(128000).map((t, k) => addedToken(128000 + k, t)),
    normalizer: null,
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: LLAMA3_PATTERN }, behavior: 'Isolated', invert: false },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
      ],
    },
    post_processor: { type: 'Sequence', processors: [{ type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
                                                     templateWith('<|begin_of_text|>', 128000)] },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: false, byte_fallback: false, ignore_merges: true,
      vocab: vocabObject(all.slice(0, 128000)),
      merges: mergePairs(tok.merges),
    },
  };
}

// Texts for both. Left out: U+FEFF and U+0085, where JavaScript's \s (the
// Llama 3 package's regex) and Unicode's White_Space (Hugging Face's,
// PCRE2's) disagree; '▁' itself, which SentencePiece reads as a space.
const texts = [
  'Hello world', 'The quick brown fox jumps over the lazy dog.', 'hello', 'Hello', 'HELLO', ' hello', 'a', 'I',
  'Llama 2 was released in July 2023; Llama 3 in April 2024.',
  'Numbers: 0 7 42 123 1234 12345 1234567890 3.14159 -273.15 1,000,000 ½ ² Ⅻ ١٢٣ ４５６',
  '2024-05-01T12:34:56Z 0x7fffffff 1e-9 007',
  'Punctuation!?... "quoted" \'single\' (paren) [bracket] {brace} <angle> @#$%^&*_+=|\\/~`',
  'a,,b a,b ,, ,,, ..., --- -> => :: ;;',
  "it's they're we've I'm you'll he'd can't IT'S THEY'RE We'Ve",
  "'s 't 're 've 'm 'll 'd ' s 'x ''s '''",
  'two  spaces', 'three   spaces and four    spaces', '        eight leading', 'trailing spaces   ', 'trailing one ',
  ' ', '  ', '   ', '\t', '\n', '\n\n', '\n\n\n', ' \n', '\n ', ' \t \n ', '\r\n', 'a\r\nb\r\n',
  'tab\tseparated\t\tdouble tab', 'line one\nline two\n\nafter a blank line\r\nCRLF',
  'word \n word', 'x\n\n\ny', 'end with newline\n', '  \n\n  indented\n    more\n',
  'non\u00a0breaking\u00a0space and\u3000ideographic\u2003em\u2028line\u2029para',
  'Héllo café naïve résumé Ångström Straße Œuvre façade coöperate',
  'Cafe\u0301 with a combining acute, n\u0303 and a\u0308',
  'Ελληνικά Русский язык עברית العربية हिन्दी ไทย ქართული Հայերեն',
  '日本語のテキスト、中文文本。한국어 텍스트', '我爱北京天安门', 'こんにちは世界', '𠜎𠜱𠝹 𪚥',
  'Emoji 😀👍🏽 family 👨‍👩‍👧 flag 🇩🇪 heart ❤️ 🦙🦙🦙',
  'Math ∑∫√∞ ≠ ≤ ≥ arrows ← → symbols © ® ™ € £ ¥ ∮ E⋅da = Q',
  'mixed123abc 456def ghi789 x² H₂O',
  '\u200bzero\u200dwidth\u00adsoft',
  'def f(x):\n    return x ** 2  # square\n',
  'for (int i = 0; i < n; ++i) {\n\tsum += a[i] * b[i];\n}\n',
  'const tok = require("llama"); // comment\nconsole.log(`${tok}`);',
  '#include <stdio.h>\nint main(void) { printf("%d\\n", 42); return 0; }',
  'SELECT name, COUNT(*) FROM users WHERE age >= 18 GROUP BY name;',
  'https://example.com/path?query=1&b=two#frag user@example.org',
  '<html><body class="x">Hi&nbsp;there</body></html>',
  '{"key": [1, 2.5, null, true], "nested": {"a": "b"}}',
  'MixedCase camelCase snake_case kebab-case SCREAMING_CASE',
  'Mr. O\'Neil paid $1,234.56 (approx. €1.1k) on 3/4/2021.',
  'ａｂｃ ＡＢＣ fullwidth',
  'ﬁ ligature ﬂ and Ⅳ',
  'A' + 'a'.repeat(40),
  'supercalifragilisticexpialidocious antidisestablishmentarianism',
  '...', '!!!', '???', '\'', '"', '-', '_', '0', '00', '000', '0000', '99999',
];

async function main() {
  const llama2 = (await import(pathToFileURL(path.join(modulesDir, 'llama-tokenizer-js', 'llama-tokenizer.js')).href)).default;
  const llama3 = (await import(pathToFileURL(path.join(modulesDir, 'llama3-tokenizer-js', 'bundle',
                                                       'llama3-tokenizer-with-baked-data.js')).href)).default;
  for (const [name, json] of [['llama2', llama2Json(llama2)], ['llama2_first', llama2FirstJson(llama2)],
                               ['llama3', llama3Json(llama3)]]) {
    fs.mkdirSync(path.join(outDir, name), { recursive: true });
    fs.writeFileSync(path.join(outDir, name, 'tokenizer.json'), JSON.stringify(json));
  }
  const check = (ids, text) => {
    if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'number')) throw new Error('bad ids for ' + JSON.stringify(text));
    return ids;
  };
  // Hugging Face's `tokenizers` on the transformers 5 form: special tokens in
  // the text split out, and '▁' prepended only at the text's start.
  const { Tokenizer } = require(path.resolve(modulesDir, 'tokenizers'));
  const first = Tokenizer.fromFile(path.join(outDir, 'llama2_first', 'tokenizer.json'));
  const chat = ['<s>[INST] Hello [/INST]', '<s>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi there [/INST] Hello</s><s>[INST] Again [/INST]',
                '[INST] no bos [/INST]', 'a</s>b', '<s> spaced', '<s>', '</s></s>'];
  const llama2First = [];
  for (const text of texts.concat(chat)) {
    const enc = await first.encode(text, null, { addSpecialTokens: false });
    llama2First.push({ text, ids: check(Array.from(enc.getIds()), text) });
  }
  // The Llama 3 package splits out its special tokens as Hugging Face does
  // with added tokens; the Llama 2 package reads "<s>" as plain text, so
  // those strings are Llama 3's alone.
  const llama3Only = ['<|begin_of_text|>Hello<|eot_id|>', 'a<|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>'];
  const out = {
    llama2: texts.map((text) => ({ text, ids: check(llama2.encode(text, false, true), text) })),
    llama3: texts.concat(llama3Only).map((text) => ({ text, ids: check(llama3.encode(text, { bos: false, eos: false }), text) })),
    llama2_first: llama2First,
  };
  fs.writeFileSync(path.join(outDir, 'llama_expected.json'), JSON.stringify(out));
  console.log(`tokenizer_json_expected.js: ${out.llama2.length} Llama 2, ${out.llama2_first.length} Llama 2 (prepend_scheme first) ` +
              `and ${out.llama3.length} Llama 3 strings → ${outDir}`);
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});

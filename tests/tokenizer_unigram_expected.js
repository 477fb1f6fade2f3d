// The ids Hugging Face's `tokenizers` (its npm package, the Rust library
// itself) gives on the Unigram tokenizer.json files that
// scripts/unigram_reference.py writes, for tests/engine/model/tokenizers/tokenizer_unigram_test.cpp.
//   node tokenizer_unigram_expected.js NODE_MODULES_DIR DIR
// reads DIR/unigram_t5/tokenizer.json and DIR/unigram_modern/tokenizer.json,
// writes DIR/unigram_expected.json: {"strings": [...], "t5": [[ids]], "modern": [[ids]]}
// (without the post-processor's </s>). scripts/test.sh runs it.
'use strict';
const fs = require('fs');
const path = require('path');

const [modulesDir, dir] = process.argv.slice(2);
if (!modulesDir || !dir) {
  console.error('usage: node tokenizer_unigram_expected.js NODE_MODULES_DIR DIR');
  process.exit(2);
}
const { Tokenizer } = require(path.resolve(modulesDir, 'tokenizers'));

const strings = [
  'The quick brown fox jumps over the lazy dog.',
  'Hello world',
  '  leading spaces',
  'trailing spaces   ',
  'runs    of     spaces\tand\ttabs\nand\n\nnewlines',
  ' ',
  '   ',
  '\n',
  ' \t\n ',
  'a',
  'Café déjà vu naïve façade',
  'Cafe\u0301 with a combining accent, e\u0301e\u0301',
  'Ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３',
  '①②③ ⑽ ㎏ ㍻ ﬁ ﬂ ß ẞ Å Å',
  '12345 67 8.90 1,000,000 3.14159',
  'In 2024 there were 365 days.',
  '東京は日本の首都です。',
  '北京欢迎你',
  '한국어 문장',
  'Числа: 1, 22, 333',
  'Emoji 🙂 😀 🚀 ✨ ❤️ 👍🏽 👨‍👩‍👧 🇫🇷',
  'unknown letters: ꙮ ᚠᚢᚦ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
  'Mixed: naïve 東京 🙂 123 ｆｕｌｌ',
  'translate English to German: The house is wonderful.',
  'summarize: encoder-decoder models attend from the target to the source.',
  'soft\u00adhyphen zero\u200bwidth no\u00a0break',
  'control \u0007 bell and \u001b escape',
  '<pad> is a token, </s> too, and <extra_id_0> marks a span',
  'x'.repeat(40),
  'ﾊﾝｶｸ ｶﾀｶﾅ',
  'Ǆemal ǅ ǆ',
  '\u2028line\u2029separators',
];

async function idsOf(file) {
  const tok = Tokenizer.fromFile(file);
  const out = [];
  for (const s of strings) {
    const enc = await tok.encode(s, null, { addSpecialTokens: false });
    out.push(Array.from(enc.getIds()));
  }
  return out;
}

(async () => {
  const t5 = await idsOf(path.join(dir, 'unigram_t5', 'tokenizer.json'));
  const modern = await idsOf(path.join(dir, 'unigram_modern', 'tokenizer.json'));
  fs.writeFileSync(path.join(dir, 'unigram_expected.json'), JSON.stringify({ strings, t5, modern }));
})().catch((e) => {
  console.error(e);
  process.exit(1);
});

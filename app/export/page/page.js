'use strict';
// AttnLab's offline attention page: decodes the embedded maps (one byte per weight, gzip, base64)
// and draws them on canvases. No library and no network, so the file opens anywhere.
(function () {
  const $ = (id) => document.getElementById(id);
  const meta = JSON.parse($('attnlab-meta').textContent);
  const dpr = window.devicePixelRatio || 1;
  const FONT = '"DejaVu Sans", sans-serif';
  const LABEL_PX = 13;
  const PAGE_BG = '#f7f7f5'; // page.css's background, so a map's empty margins do not show

  // b = 0 → 0; b = 1 … 255 → 10^(−4 + 4·(b − 1)/254), the contract's log scale over four decades.
  const DECODE = new Float32Array(256);
  for (let b = 1; b < 256; ++b) DECODE[b] = Math.pow(10, -4 + (4 * (b - 1)) / 254);
  const decode = (b) => DECODE[b];
  const RGB = meta.colormap.map((h) => [1, 3, 5].map((k) => parseInt(h.substr(k, 2), 16)));

  // A set whose queries are its keys: the query's own token is marked in its row.
  const selfAttention = meta.sets.map((s) => s.rows.length === s.cols.length && s.rows.every((t, k) => t === s.cols[k]));
  // Keys that carry their own spaces (GPT-2's " the", SentencePiece's "▁the") read as text when joined;
  // others (numbered positions, word pieces) need a gap between them.
  const spaced = meta.sets.map((s) => s.cols.filter((t) => /^[\s▁Ġ]/.test(t)).length * 4 >= s.cols.length);

  let B = new Uint8Array(0);
  const state = {
    set: 0, layer: 0, head: 0, view: 'head',
    log: meta.sets.map((s) => s.scale.mode === 'log'),
    query: null, // the pinned query row (a click), shown when nothing is hovered
    hover: null, // {view, i, j}
  };

  // ---- decoding ----

  // atob over slices of whole 4-character groups keeps each binary string small.
  function base64Bytes(text) {
    const s = text.replace(/[^A-Za-z0-9+/=]/g, '');
    const pad = s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0;
    const out = new Uint8Array((s.length / 4) * 3 - pad);
    const STEP = 1 << 20;
    let o = 0;
    for (let p = 0; p < s.length; p += STEP) {
      const bin = atob(s.slice(p, p + STEP));
      for (let k = 0; k < bin.length; ++k) out[o++] = bin.charCodeAt(k);
    }
    return out;
  }

  async function inflate(gz) {
    if (gz.length === 0) return gz;
    const stream = new Blob([gz]).stream().pipeThrough(new DecompressionStream('gzip'));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  }

  // ---- maps ----

  // A map's bytes: `tri` rows hold columns 0 … i only (causal self-attention).
  function mapRef(offset, rows, cols, tri) { return { offset, rows, cols, tri }; }
  const rowStart = (m, i) => m.offset + (m.tri ? (i * (i + 1)) / 2 : i * m.cols);
  const rowLen = (m, i) => (m.tri ? i + 1 : m.cols);

  // Undoes the writer's Up filter (PNG's) on the maps stored with it: row i was stored as its bytes minus
  // row i − 1's, mod 256, where both have them. In place, top to bottom, once, before anything reads B.
  function restoreRows() {
    const restore = (list, rows, cols, tri) => {
      list.maps.forEach((off, k) => {
        if (off == null || !list.up[k]) return;
        const m = mapRef(off, rows, cols, tri);
        for (let i = 1; i < rows; ++i) {
          const p = rowStart(m, i), q = rowStart(m, i - 1), n = rowLen(m, i - 1);
          for (let j = 0; j < n; ++j) B[p + j] += B[q + j];  // a Uint8Array wraps mod 256
        }
      });
    };
    for (const s of meta.sets) {
      restore(s, s.rows.length, s.cols.length, s.triangle);
      if (s.pooled) restore(s.pooled, s.pooled.blocks, s.pooled.blocks, false);
      if (s.rollout) restore(s.rollout, s.rows.length, s.rows.length, s.rollout.triangle);
    }
  }

  function rowValues(m, i) {
    const out = new Float32Array(m.cols);
    const p = rowStart(m, i), n = rowLen(m, i);
    for (let j = 0; j < n; ++j) out[j] = DECODE[B[p + j]];
    return out;
  }

  // What a view shows: a map, its labels, its colour range and words for the readout.
  function headSource(si, l, h) {
    const s = meta.sets[si], k = l * s.heads + h;
    const base = { set: si, layer: l, head: h, kind: 'head' };
    if (s.maps[k] != null)
      return Object.assign(base, { map: mapRef(s.maps[k], s.rows.length, s.cols.length, s.triangle),
        rows: s.rows, cols: s.cols, max: s.max[k], what: `L${l} H${h}`, unit: ['query', 'key'] });
    const p = s.pooled;
    return Object.assign(base, { map: mapRef(p.maps[k], p.blocks, p.blocks, false), rows: p.labels, cols: p.labels,
      max: p.max[k], pooled: true, what: `L${l} H${h}, pooled (mean of ${p.block} × ${p.block} positions)`,
      unit: ['query block', 'key block'] });
  }

  function rolloutSource(si, l) {
    const s = meta.sets[si], r = s.rollout;
    return { set: si, layer: l, head: null, kind: 'rollout', map: mapRef(r.maps[l], s.rows.length, s.rows.length, r.triangle),
      rows: s.rows, cols: s.rows, max: r.max[l], what: `rollout through L${l}`, unit: ['query', 'key'] };
  }

  // widgets/value_range.cpp's scaleToUnit over [0, max].
  function scaleToUnit(w, max, log, decades) {
    const u = max > 0 ? Math.min(Math.max(w / max, 0), 1) : 0;
    if (!log) return u;
    return u > 0 ? Math.min(Math.max(1 + Math.log10(u) / decades, 0), 1) : 0;
  }

  // byte → RGBA (little-endian Uint32) for one colour range, so images fill with one lookup per cell.
  function lut(max, si) {
    const out = new Uint32Array(256), log = state.log[si], dec = meta.sets[si].scale.decades || 3;
    for (let b = 0; b < 256; ++b) {
      const c = RGB[Math.round(255 * scaleToUnit(DECODE[b], max, log, dec))];
      out[b] = (255 << 24) | (c[2] << 16) | (c[1] << 8) | c[0];
    }
    return out;
  }

  // The whole map at one pixel per cell; views scale it by an integer.
  function mapImage(src) {
    const m = src.map, table = lut(src.max, src.set);
    const cv = document.createElement('canvas');
    cv.width = m.cols; cv.height = m.rows;
    const ctx = cv.getContext('2d');
    const img = ctx.createImageData(m.cols, m.rows);
    const px = new Uint32Array(img.data.buffer);
    px.fill(table[0]);
    for (let i = 0; i < m.rows; ++i) {
      const p = rowStart(m, i), n = rowLen(m, i), o = i * m.cols;
      for (let j = 0; j < n; ++j) px[o + j] = table[B[p + j]];
    }
    ctx.putImageData(img, 0, 0);
    return cv;
  }

  // ---- text helpers ----

  const tokenText = (t) => (t === '' ? '∅' : t.replace(/\n/g, '↵').replace(/\t/g, '⇥'));
  const sig4 = (w) => w.toPrecision(4);
  const bound = (w) => Math.max(meta.quantisation.relative * w, meta.quantisation.absolute);
  const short = (w) => (w === 0 || w >= 1e-3 ? String(+w.toPrecision(2)) : w.toExponential(1)); // fits the colour bar

  // A ViT's patch k as "(row, column)", short enough to stand beside the cells; other tokens as they are.
  function shortLabel(list, k) {
    const p = meta.picture, first = p && p.cls ? 1 : 0;
    if (!p || k < first || list.length !== first + p.grid[0] * p.grid[1]) return tokenText(list[k]);
    return `(${Math.floor((k - first) / p.grid[1])}, ${(k - first) % p.grid[1]})`;
  }
  const axisLabels = (list) => list.map((_, k) => shortLabel(list, k));

  function clip(ctx, text, width) {
    if (ctx.measureText(text).width <= width) return text;
    let lo = 0, hi = text.length;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (ctx.measureText(text.slice(0, mid) + '…').width <= width) lo = mid; else hi = mid - 1;
    }
    return text.slice(0, lo) + '…';
  }

  function setCanvasSize(cv, w, h) {
    cv.style.width = w + 'px'; cv.style.height = h + 'px';
    cv.width = Math.max(1, Math.round(w * dpr)); cv.height = Math.max(1, Math.round(h * dpr));
  }

  // ---- a map view: cells at an integer size, labels in the margins, zoom and pan ----

  class MapView {
    constructor(canvas, caption) {
      this.cv = canvas; this.caption = caption; this.src = null;
      this.c = 1; this.ox = 0; this.oy = 0; this.ml = 0; this.mt = 0;
      this.listen();
    }

    show(src) {
      const same = this.src && this.src.rows === src.rows && this.src.cols === src.cols;
      this.src = src; this.img = mapImage(src);
      this.labels();
      if (!same) this.fit();
      this.caption.textContent = `${meta.sets[src.set].label} · ${src.what} · largest ŵ ${sig4(src.max)}`;
      this.caption.title = this.caption.textContent;
      this.draw();
    }

    // Margins wide enough for the labels, and the labels clipped to them.
    labels() {
      const ctx = this.cv.getContext('2d');
      const widest = (list) => list.reduce((w, t) => Math.max(w, ctx.measureText(t).width), 0);
      // Wide enough for the corner's "key →" / "query ↓" too.
      ctx.font = `${12 * dpr}px ${FONT}`;
      const corner = widest([`${this.src.unit[0]} ↓`, `${this.src.unit[1]} →`]) + 12 * dpr;
      ctx.font = `${LABEL_PX * dpr}px ${FONT}`;
      const rows = axisLabels(this.src.rows), cols = axisLabels(this.src.cols);
      this.ml = Math.round(Math.max(corner, Math.min(widest(rows), 150 * dpr) + 16 * dpr));
      this.mt = Math.round(Math.min(widest(cols), 110 * dpr) + 16 * dpr);
      this.rowText = rows.map((t) => clip(ctx, t, this.ml - 14 * dpr));
      this.colText = cols.map((t) => clip(ctx, t, this.mt - 14 * dpr));
    }

    // A new size fits the map again; the same size keeps the user's zoom and pan.
    resize(w, h) {
      if (this.cv.style.width === w + 'px' && this.cv.style.height === h + 'px') return;
      setCanvasSize(this.cv, w, h);
      if (this.src) { this.fit(); this.draw(); }
    }

    fit() {
      const m = this.src.map;
      const aw = this.cv.width - this.ml - 10 * dpr, ah = this.cv.height - this.mt - 4 * dpr; // room for the last key label
      this.c = Math.max(1, Math.floor(Math.min(aw / m.cols, ah / m.rows)));
      this.ox = this.ml; this.oy = this.mt;
    }

    // Zoom by whole cell sizes about a canvas point, so every cell stays an integer number of pixels.
    zoom(dir, px, py) {
      if (px === undefined) { px = this.ml; py = this.mt; }
      const c0 = this.c, c1 = Math.min(256, Math.max(1, dir > 0 ? c0 + Math.max(1, Math.round(c0 / 4)) : c0 - Math.max(1, Math.round(c0 / 5))));
      if (c1 === c0) return;
      this.ox = Math.round(px - ((px - this.ox) * c1) / c0);
      this.oy = Math.round(py - ((py - this.oy) * c1) / c0);
      this.c = c1; this.clampPan(); this.draw();
    }

    // Keep at least part of the map in the view.
    clampPan() {
      const m = this.src.map, w = m.cols * this.c, h = m.rows * this.c;
      this.ox = Math.round(Math.min(this.ml, Math.max(this.ox, Math.min(this.ml, this.cv.width - w))));
      this.oy = Math.round(Math.min(this.mt, Math.max(this.oy, Math.min(this.mt, this.cv.height - h))));
    }

    cellAt(clientX, clientY) {
      const r = this.cv.getBoundingClientRect();
      const x = (clientX - r.left) * dpr, y = (clientY - r.top) * dpr;
      if (x < this.ml || y < this.mt) return null;
      const i = Math.floor((y - this.oy) / this.c), j = Math.floor((x - this.ox) / this.c);
      const m = this.src.map;
      return i >= 0 && j >= 0 && i < m.rows && j < m.cols ? { i, j } : null;
    }

    // Pans the cell into the view if needed and returns its centre in client coordinates.
    cellCenter(i, j) {
      const c = this.c, W = this.cv.width, H = this.cv.height;
      if (this.ox + j * c < this.ml || this.ox + (j + 1) * c > W) this.ox = Math.round(this.ml + (W - this.ml) / 2 - j * c);
      if (this.oy + i * c < this.mt || this.oy + (i + 1) * c > H) this.oy = Math.round(this.mt + (H - this.mt) / 2 - i * c);
      this.clampPan(); this.draw();
      this.cv.scrollIntoView({ block: 'nearest', inline: 'nearest' });
      const r = this.cv.getBoundingClientRect();
      return { x: r.left + (this.ox + (j + 0.5) * c) / dpr, y: r.top + (this.oy + (i + 0.5) * c) / dpr };
    }

    draw() {
      const ctx = this.cv.getContext('2d'), m = this.src.map, c = this.c, W = this.cv.width, H = this.cv.height;
      ctx.imageSmoothingEnabled = false;
      ctx.fillStyle = PAGE_BG; ctx.fillRect(0, 0, W, H);
      // Only the visible cells, at whole-pixel positions.
      const i0 = Math.max(0, Math.floor((this.mt - this.oy) / c)), i1 = Math.min(m.rows, Math.ceil((H - this.oy) / c));
      const j0 = Math.max(0, Math.floor((this.ml - this.ox) / c)), j1 = Math.min(m.cols, Math.ceil((W - this.ox) / c));
      if (i1 > i0 && j1 > j0) {
        ctx.save(); ctx.beginPath(); ctx.rect(this.ml, this.mt, W - this.ml, H - this.mt); ctx.clip();
        ctx.drawImage(this.img, j0, i0, j1 - j0, i1 - i0, this.ox + j0 * c, this.oy + i0 * c, (j1 - j0) * c, (i1 - i0) * c);
        ctx.restore();
      }
      this.drawLabels(ctx, i0, i1, j0, j1);
      if (this === views[0]) drawColorbar();
    }

    // Labels every `step` cells so they never overlap; the hovered and pinned rows are always named.
    drawLabels(ctx, i0, i1, j0, j1) {
      const c = this.c, line = (LABEL_PX + 3) * dpr, step = Math.ceil(line / c);
      const hov = state.hover && state.hover.view === this ? state.hover : null;
      // The pinned query is a row of the focused kind of attention; the maps view's other two have other rows.
      const pin = state.query != null && this.src.set === state.set && state.query < this.src.map.rows ? state.query : null;
      ctx.font = `${LABEL_PX * dpr}px ${FONT}`;
      // The clips let the first and last labels reach half a line past the map's edge.
      ctx.save(); ctx.beginPath(); ctx.rect(0, this.mt - line / 2, this.ml, this.cv.height - this.mt + line / 2); ctx.clip();
      ctx.textAlign = 'right'; ctx.textBaseline = 'middle';
      const mark = (i, colour) => {
        ctx.fillStyle = colour; ctx.fillRect(0, this.oy + (i + 0.5) * c - line / 2, this.ml - 2 * dpr, line);
      };
      if (pin != null) mark(pin, '#cfe3f7');
      if (hov) mark(hov.i, '#ffe08a');
      for (let i = i0; i < i1; ++i) {
        const named = i === pin || (hov && i === hov.i);
        if (i % step && !named) continue;
        if (!named && ((pin != null && Math.abs(i - pin) * c < line) || (hov && Math.abs(i - hov.i) * c < line))) continue;
        ctx.fillStyle = named ? '#000' : '#333';
        ctx.fillText(this.rowText[i], this.ml - 8 * dpr, this.oy + (i + 0.5) * c);
      }
      ctx.restore();
      ctx.save(); ctx.beginPath(); ctx.rect(this.ml - line / 2, 0, this.cv.width - this.ml + line / 2, this.mt); ctx.clip();
      if (hov) { ctx.fillStyle = '#ffe08a'; ctx.fillRect(this.ox + (hov.j + 0.5) * c - line / 2, 0, line, this.mt - 2 * dpr); }
      ctx.textAlign = 'left'; ctx.textBaseline = 'middle';
      for (let j = j0; j < j1; ++j) {
        const named = hov && j === hov.j;
        if ((j % step && !named) || (!named && hov && Math.abs(j - hov.j) * c < line)) continue;
        ctx.save(); ctx.translate(this.ox + (j + 0.5) * c, this.mt - 8 * dpr); ctx.rotate(-Math.PI / 2);
        ctx.fillStyle = named ? '#000' : '#333'; ctx.fillText(this.colText[j], 0, 0); ctx.restore();
      }
      ctx.restore();
      ctx.fillStyle = '#666'; ctx.textAlign = 'left'; ctx.textBaseline = 'top';
      ctx.font = `${12 * dpr}px ${FONT}`;
      ctx.fillText(`${this.src.unit[1]} →`, 4 * dpr, 4 * dpr);
      ctx.fillText(`${this.src.unit[0]} ↓`, 4 * dpr, 20 * dpr);
    }

    // Drag pans; a press without a drag pins the query. Pointer capture keeps a drag going outside the canvas.
    listen() {
      let drag = null;
      this.cv.addEventListener('pointerdown', (e) => {
        if (e.button !== 0) return;
        drag = { x: e.clientX, y: e.clientY, ox: this.ox, oy: this.oy, moved: false };
        this.cv.setPointerCapture(e.pointerId);
        e.preventDefault();
      });
      this.cv.addEventListener('pointerup', (e) => {
        const cell = drag && !drag.moved ? this.cellAt(e.clientX, e.clientY) : null;
        drag = null;
        if (cell) pinQuery(cell.i);
      });
      this.cv.addEventListener('pointermove', (e) => {
        if (drag) {
          const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
          if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
          if (drag.moved) {
            this.ox = Math.round(drag.ox + dx * dpr); this.oy = Math.round(drag.oy + dy * dpr);
            this.clampPan(); this.draw();
            return;
          }
        }
        const cell = this.cellAt(e.clientX, e.clientY);
        setHover(cell ? { view: this, i: cell.i, j: cell.j } : null);
      });
      this.cv.addEventListener('pointerleave', () => setHover(null));
      this.cv.addEventListener('wheel', (e) => {
        e.preventDefault();
        const r = this.cv.getBoundingClientRect();
        this.zoom(e.deltaY < 0 ? 1 : -1, (e.clientX - r.left) * dpr, (e.clientY - r.top) * dpr);
      }, { passive: false });
    }
  }

  // ---- the views area: one focused map, or the encoder–decoder's three ----

  const area = $('views-area');
  const views = [];

  function makeView(id) {
    const box = document.createElement('div'), cap = document.createElement('div'), cv = document.createElement('canvas');
    box.className = 'view'; cap.className = 'caption';
    if (id) cv.id = id;
    cv.title = 'Hover a cell to read its weight; click to keep the query; wheel zooms, drag pans';
    box.append(cap, cv); area.append(box);
    return new MapView(cv, cap);
  }

  // The sets shown side by side in the "maps" view: the focused set first, then the others in order.
  function shownSets() {
    if (state.view !== 'maps') return [state.set];
    return [state.set].concat(meta.sets.map((_, k) => k).filter((k) => k !== state.set));
  }

  function sourceFor(si) {
    const s = meta.sets[si], l = Math.min(state.layer, s.layers - 1), h = Math.min(state.head, s.heads - 1);
    if (state.view === 'rollout' && s.rollout) return rolloutSource(si, l);
    return headSource(si, l, h);
  }

  function showViews() {
    const sets = shownSets();
    const count = views.length;
    while (views.length < sets.length) views.push(makeView(views.length ? null : 'focus'));
    while (views.length > sets.length) views.pop().cv.parentNode.remove();
    if (views.length !== count) layoutViews();
    sets.forEach((si, k) => views[k].show(sourceFor(si)));
    updateSide();
  }

  // ---- the grid of heads ----

  const grid = { cv: $('grid'), t: 0, px: 0, lw: 34, th: 22, gap: 3, cells: [], token: 0 };

  // One head's thumbnail bytes: the largest byte of each block, so a sharp head stays visible when shrunk.
  function thumbBytes(src, t) {
    const m = src.map, out = new Uint8Array(t * t);
    for (let y = 0; y < t; ++y) {
      const r0 = Math.floor((y * m.rows) / t), r1 = Math.max(r0 + 1, Math.floor(((y + 1) * m.rows) / t));
      for (let x = 0; x < t; ++x) {
        const c0 = Math.floor((x * m.cols) / t), c1 = Math.max(c0 + 1, Math.floor(((x + 1) * m.cols) / t));
        let best = 0;
        for (let i = r0; i < r1; ++i) {
          const p = rowStart(m, i), end = Math.min(c1, rowLen(m, i));
          for (let j = c0; j < end; ++j) if (B[p + j] > best) best = B[p + j];
        }
        out[y * t + x] = best;
      }
    }
    return out;
  }

  // For a pooled set the thumbnails are the pooled maps.
  function thumbSource(si, l, h) {
    const s = meta.sets[si], k = l * s.heads + h;
    if (!s.pooled) return headSource(si, l, h);
    return { set: si, map: mapRef(s.pooled.maps[k], s.pooled.blocks, s.pooled.blocks, false), max: s.pooled.max[k] };
  }

  // The thumbnail size that fits the grid in width × height (CSS pixels).
  function thumbSize(width, height) {
    const s = meta.sets[state.set];
    const t = Math.floor(Math.min((width - grid.lw) / s.heads, (height - grid.th) / s.layers)) - grid.gap;
    return Math.max(8, Math.min(128, t));
  }

  function layoutGrid(t) {
    const s = meta.sets[state.set];
    grid.t = t;
    setCanvasSize(grid.cv, grid.lw + s.heads * (t + grid.gap), grid.th + s.layers * (t + grid.gap));
    grid.px = Math.round(t * dpr);
    grid.cells = [];
  }

  function gridCellOrigin(l, h) {
    return [Math.round((grid.lw + h * (grid.t + grid.gap)) * dpr), Math.round((grid.th + l * (grid.t + grid.gap)) * dpr)];
  }

  // Thumbnails are computed a layer at a time after the first paint, so the focused head shows at once.
  function drawGrid() {
    const token = ++grid.token, s = meta.sets[state.set], ctx = grid.cv.getContext('2d');
    outlined = null;
    ctx.fillStyle = '#ffffff'; ctx.fillRect(0, 0, grid.cv.width, grid.cv.height);
    ctx.font = `${13 * dpr}px ${FONT}`; ctx.fillStyle = '#333';
    ctx.textAlign = 'center'; ctx.textBaseline = 'middle';
    const step = Math.ceil(30 / (grid.t + grid.gap));
    for (let h = 0; h < s.heads; h += step) ctx.fillText(`H${h}`, gridCellOrigin(0, h)[0] + grid.px / 2, (grid.th / 2) * dpr);
    ctx.textAlign = 'right';
    const lstep = Math.ceil(16 / (grid.t + grid.gap));
    for (let l = 0; l < s.layers; l += lstep) ctx.fillText(`L${l}`, (grid.lw - 5) * dpr, gridCellOrigin(l, 0)[1] + grid.px / 2);
    let l = 0;
    const next = () => {
      if (token !== grid.token) return;
      for (let h = 0; h < s.heads; ++h) drawThumb(l, h);
      drawFocusOutline();
      if (++l < s.layers) setTimeout(next, 0);
    };
    next();
  }

  function drawThumb(l, h) {
    const s = meta.sets[state.set], k = l * s.heads + h, ctx = grid.cv.getContext('2d'), t = grid.px;
    if (!grid.cells[k]) {
      const src = thumbSource(state.set, l, h);
      grid.cells[k] = { bytes: thumbBytes(src, t), max: src.max };
    }
    const cell = grid.cells[k], table = lut(cell.max, state.set);
    const img = ctx.createImageData(t, t), px = new Uint32Array(img.data.buffer);
    for (let q = 0; q < px.length; ++q) px[q] = table[cell.bytes[q]];
    const [x, y] = gridCellOrigin(l, h);
    ctx.putImageData(img, x, y);
    // In a pooled set, a white corner marks the heads whose whole map the page holds.
    if (s.pooled && s.maps[k] != null) {
      const d = Math.max(6, Math.round(t / 3));
      ctx.fillStyle = '#ffffff';
      ctx.beginPath(); ctx.moveTo(x + t - d, y); ctx.lineTo(x + t, y); ctx.lineTo(x + t, y + d); ctx.fill();
    }
  }

  // The focused head's frame, in the gap around its thumbnail; the previous one is wiped in the gap colour.
  // Whole-pixel rectangles, since an antialiased stroke would leave traces when wiped.
  let outlined = null;
  function drawFocusOutline() {
    const ctx = grid.cv.getContext('2d'), w = Math.max(2, Math.round(2 * dpr)), t = grid.px;
    const frame = (l, h, colour) => {
      const [x, y] = gridCellOrigin(l, h);
      ctx.fillStyle = colour;
      ctx.fillRect(x - w, y - w, t + 2 * w, w); ctx.fillRect(x - w, y + t, t + 2 * w, w);
      ctx.fillRect(x - w, y, w, t); ctx.fillRect(x + t, y, w, t);
    };
    if (outlined) frame(outlined[0], outlined[1], '#ffffff');
    outlined = [state.layer, state.head];
    frame(state.layer, state.head, '#d62728');
  }

  grid.cv.addEventListener('click', (e) => {
    const hit = gridHit(e);
    if (hit) focusHead(state.set, hit[0], hit[1]);
  });
  grid.cv.addEventListener('mousemove', (e) => {
    const hit = gridHit(e), s = meta.sets[state.set];
    if (!hit) { grid.cv.title = ''; return; }
    const k = hit[0] * s.heads + hit[1], whole = s.maps[k] != null;
    grid.cv.title = `L${hit[0]} H${hit[1]} · largest ŵ ${sig4(whole ? s.max[k] : s.pooled.max[k])}` +
      (s.pooled ? (whole ? ' · whole map in the page' : ' · pooled') : '') + ' · click to focus';
  });

  function gridHit(e) {
    const r = grid.cv.getBoundingClientRect(), s = meta.sets[state.set];
    const h = Math.floor((e.clientX - r.left - grid.lw) / (grid.t + grid.gap));
    const l = Math.floor((e.clientY - r.top - grid.th) / (grid.t + grid.gap));
    return l >= 0 && h >= 0 && l < s.layers && h < s.heads ? [l, h] : null;
  }

  // ---- colour bar ----

  function drawColorbar() {
    const cv = $('colorbar'), ctx = cv.getContext('2d'), v = views[0], src = v.src, si = src.set;
    const log = state.log[si], dec = meta.sets[si].scale.decades || 3;
    // Beside the map: from its top to its bottom, but never shorter than 200 pixels.
    const top = Math.max(40 * dpr, v.mt), bot = Math.min(cv.height - 10 * dpr, Math.max(top + 200 * dpr, v.oy + src.map.rows * v.c));
    const W = cv.width, bw = 18 * dpr;
    // Just right of the map, or at the panel's edge when the map fills the view or three maps share it.
    const mapRight = views.length > 1 ? Infinity : v.cv.offsetLeft + (v.ox + src.map.cols * v.c) / dpr;
    cv.style.left = Math.round(Math.min(mapRight + 14, cv.parentNode.clientWidth - cv.width / dpr)) + 'px';
    ctx.fillStyle = PAGE_BG; ctx.fillRect(0, 0, W, cv.height);
    for (let y = top; y < bot; ++y) {
      ctx.fillStyle = meta.colormap[Math.round((255 * (bot - 1 - y)) / (bot - 1 - top))];
      ctx.fillRect(4 * dpr, y, bw, 1);
    }
    ctx.strokeStyle = '#555'; ctx.lineWidth = 1; ctx.strokeRect(4 * dpr + 0.5, top + 0.5, bw - 1, bot - top - 1);
    ctx.font = `${13 * dpr}px ${FONT}`; ctx.fillStyle = '#222'; ctx.textBaseline = 'middle'; ctx.textAlign = 'left';
    const ticks = log ? Array.from({ length: dec + 1 }, (_, k) => [1 - k / dec, src.max * Math.pow(10, -k)])
      : [0, 0.25, 0.5, 0.75, 1].map((t) => [t, src.max * t]);
    for (const [t, w] of ticks) {
      const y = Math.round(bot - 1 - t * (bot - 1 - top)) + 0.5;
      ctx.beginPath(); ctx.moveTo(4 * dpr + bw, y); ctx.lineTo(8 * dpr + bw, y); ctx.stroke();
      ctx.fillText(short(w), 11 * dpr + bw, y);
    }
    ctx.textBaseline = 'top';
    ctx.fillText('ŵ', 4 * dpr, 4 * dpr);
    ctx.fillStyle = '#666'; ctx.font = `${12 * dpr}px ${FONT}`;
    ctx.fillText(log ? `log, ${dec} dec.` : 'linear', 4 * dpr, 20 * dpr);
  }

  // ---- hover, readout, token lines, top keys, picture ----

  let hoverFrame = 0;
  function setHover(h) {
    const old = state.hover;
    if (old && h && old.view === h.view && old.i === h.i && old.j === h.j) return;
    state.hover = h;
    updateSide(); // at once, so the readout is current as soon as the pointer event is handled
    if (hoverFrame) return;
    hoverFrame = requestAnimationFrame(() => {
      hoverFrame = 0;
      views.forEach((v) => v.draw());
    });
  }

  function pinQuery(i) {
    state.query = i;
    views.forEach((v) => v.draw());
    updateSide();
  }

  // The row the side panel describes: the hovered cell's, else the pinned query of the focused view.
  function sideRow() {
    if (state.hover) return { src: state.hover.view.src, i: state.hover.i, j: state.hover.j };
    const src = views[0].src, rows = src.map.rows;
    return { src, i: state.query != null && state.query < rows ? state.query : rows - 1, j: null };
  }

  function updateSide() {
    const { src, i, j } = sideRow(), row = rowValues(src.map, i);
    const n = rowLen(src.map, i);
    const tok = (list, k) => `“${tokenText(list[k])}” (${k})`;
    const who = src.kind === 'rollout' ? src.what : `L${src.layer} H${src.head}`;
    const out = $('readout');
    if (j != null) {
      const w = row[j];
      out.innerHTML = '';
      out.append(line(`${meta.sets[src.set].label}, ${who}`, 'who'),
        line(`${src.unit[0]} ${tok(src.rows, i)}`), line(`${src.unit[1]} ${tok(src.cols, j)}`),
        line(`ŵ = ${sig4(w)} ± ${bound(w).toPrecision(2)}`, 'weight'));
    } else {
      out.innerHTML = '';
      out.append(line(`${meta.sets[src.set].label}, ${who}`, 'who'), line(`${src.unit[0]} ${tok(src.rows, i)}`),
        line('hover a cell to read its weight', 'hint'));
    }
    $('row-who').textContent = `of ${tokenText(src.rows[i])} (${i})`;
    if (!meta.picture) tokenLines(src, row, n, i);
    topKeys(src, row, n);
    if (meta.picture) drawOverlay(src, i, row);
  }

  function line(text, cls) {
    const d = document.createElement('div');
    d.textContent = text; if (cls) d.className = cls;
    return d;
  }

  // BertViz-style lines: every key token with a background as strong as its share of the row's largest weight.
  function tokenLines(src, row, n, i) {
    const box = $('tokens'), frag = document.createDocumentFragment();
    box.classList.toggle('apart', !!src.pooled || !spaced[src.set]);
    let top = 0;
    for (let j = 0; j < n; ++j) top = Math.max(top, row[j]);
    for (let j = 0; j < n; ++j) {
      const s = document.createElement('span');
      s.textContent = tokenText(src.cols[j]);
      const a = top > 0 ? row[j] / top : 0;
      s.style.background = `rgba(31, 119, 180, ${(0.85 * a).toFixed(3)})`;
      if (a > 0.55) s.style.color = '#fff';
      if (selfAttention[src.set] && j === i) s.className = 'self';
      s.title = `${j}: ŵ = ${sig4(row[j])}`;
      frag.append(s);
    }
    box.innerHTML = ''; box.append(frag);
    // Keep the query's own token in sight in a long text.
    const self = box.querySelector('.self');
    if (self) box.scrollTop = self.offsetTop - box.clientHeight / 2;
  }

  function topKeys(src, row, n) {
    const order = Array.from({ length: n }, (_, j) => j).sort((a, b) => row[b] - row[a]).slice(0, 5);
    const ol = $('topkeys'); ol.innerHTML = '';
    const top = row[order[0]] || 1;
    for (const j of order) {
      const li = document.createElement('li'), bar = document.createElement('span'), name = document.createElement('span'), v = document.createElement('span');
      name.className = 'key'; name.textContent = `${shortLabel(src.cols, j)} (${j})`;
      v.className = 'w'; v.textContent = sig4(row[j]);
      bar.className = 'bar'; bar.style.width = `${(100 * row[j]) / top}%`;
      li.append(bar, name, v); ol.append(li);
    }
  }

  // ---- vision: the query's attention over the patches ----

  function setupPicture() {
    const p = meta.picture;
    $('picture-box').hidden = false; $('row-box').hidden = true;
    $('picture').src = p.src;
    $('picture-wrap').addEventListener('click', (e) => {
      const r = $('picture-wrap').getBoundingClientRect();
      const rr = Math.floor(((e.clientY - r.top) / r.height) * p.grid[0]), cc = Math.floor(((e.clientX - r.left) / r.width) * p.grid[1]);
      if (rr >= 0 && cc >= 0 && rr < p.grid[0] && cc < p.grid[1]) pinQuery((p.cls ? 1 : 0) + rr * p.grid[1] + cc);
    });
    $('cls').hidden = !p.cls;
    $('cls').addEventListener('click', () => pinQuery(0));
  }

  function sizePicture(width) {
    const p = meta.picture, w = Math.round(width), h = Math.round((w * p.height) / p.width);
    $('picture-wrap').style.width = w + 'px'; $('picture-wrap').style.height = h + 'px';
    setCanvasSize($('overlay'), w, h);
  }

  function drawOverlay(src, i, row) {
    const p = meta.picture, cv = $('overlay'), ctx = cv.getContext('2d');
    const first = p.cls ? 1 : 0, ph = cv.height / p.grid[0], pw = cv.width / p.grid[1];
    const log = state.log[src.set], dec = meta.sets[src.set].scale.decades || 3;
    ctx.clearRect(0, 0, cv.width, cv.height);
    if (src.map.cols !== first + p.grid[0] * p.grid[1]) return; // a pooled or cross map has no patches
    // Scaled to the row's largest patch weight, so the pattern shows however much goes to [CLS].
    let top = 0;
    for (let k = first; k < row.length; ++k) top = Math.max(top, row[k]);
    for (let r = 0; r < p.grid[0]; ++r)
      for (let c = 0; c < p.grid[1]; ++c) {
        // As the figures' heatOverPatch (widgets/patch_layouts.cpp): the colour map with opacity 0.15 + 0.75·t
        // over the picture dimmed to 0.85 (page.css), so a light patch leaves the picture readable.
        const t = scaleToUnit(row[first + r * p.grid[1] + c], top, log, dec), rgb = RGB[Math.round(255 * t)];
        ctx.fillStyle = `rgba(${rgb[0]}, ${rgb[1]}, ${rgb[2]}, ${(0.15 + 0.75 * t).toFixed(3)})`;
        ctx.fillRect(Math.round(c * pw), Math.round(r * ph), Math.round((c + 1) * pw) - Math.round(c * pw), Math.round((r + 1) * ph) - Math.round(r * ph));
      }
    if (i >= first) {
      const q = i - first, r = Math.floor(q / p.grid[1]), c = q % p.grid[1];
      ctx.strokeStyle = '#ff2d2d'; ctx.lineWidth = 3 * dpr;
      ctx.strokeRect(c * pw + 1.5 * dpr, r * ph + 1.5 * dpr, pw - 3 * dpr, ph - 3 * dpr);
    }
    $('cls').classList.toggle('on', i === 0 && p.cls);
    $('cls-weight').textContent = p.cls ? `query ${tokenText(src.rows[i])} · ŵ to [CLS] ${sig4(row[0])}` : '';
  }

  // ---- pickers, tabs, view buttons ----

  function fillSelect(sel, n, prefix) {
    sel.innerHTML = '';
    for (let k = 0; k < n; ++k) sel.add(new Option(`${prefix}${k}`, String(k)));
  }

  function setupSets() {
    const tabs = $('sets');
    tabs.hidden = meta.sets.length < 2;
    // The help lists only the keys this page answers.
    $('key-maps').hidden = meta.sets.length < 2;
    $('key-rollout').hidden = !meta.sets.some((s) => s.rollout);
    meta.sets.forEach((s, k) => {
      const b = document.createElement('button');
      b.textContent = s.name; b.title = s.label; b.setAttribute('role', 'tab');
      b.addEventListener('click', () => focusHead(k, state.layer, state.head));
      tabs.append(b);
    });
  }

  function updateControls() {
    const s = meta.sets[state.set];
    [...$('sets').children].forEach((b, k) => b.setAttribute('aria-selected', String(k === state.set)));
    $('layer').value = String(state.layer); $('head').value = String(state.head);
    for (const b of $('views').children) {
      const v = b.dataset.view;
      b.hidden = (v === 'rollout' && !s.rollout) || (v === 'maps' && meta.sets.length < 2);
      b.classList.toggle('on', v === state.view);
    }
    $('views').hidden = [...$('views').children].filter((b) => !b.hidden).length < 2;
    $('scale').textContent = state.log[state.set] ? 'log scale' : 'linear scale';
  }

  function focusHead(si, l, h) {
    const changedSet = si !== state.set, s = meta.sets[si];
    // A pinned query is a token of a whole map and a block of a pooled one: it does not carry between them.
    const whole = (set, layer, head) => set >= 0 && meta.sets[set].maps[layer * meta.sets[set].heads + head] != null;
    if (whole(state.set, state.layer, state.head) !== whole(si, l, h)) state.query = null;
    state.set = si;
    state.layer = Math.max(0, Math.min(l, s.layers - 1)); state.head = Math.max(0, Math.min(h, s.heads - 1));
    if (state.view === 'rollout' && !s.rollout) state.view = 'head';
    state.hover = null;
    if (changedSet) {
      state.query = null;
      fillSelect($('layer'), s.layers, 'L'); fillSelect($('head'), s.heads, 'H');
      buildTable(); layout();
    } else {
      drawFocusOutline();
      showViews();
    }
    markTableRow();
    updateControls();
  }

  function setView(v) {
    if (v === 'rollout' && !meta.sets[state.set].rollout) return;
    if (v === 'maps' && meta.sets.length < 2) return;
    const was = state.view;
    state.view = state.view === v ? 'head' : v;
    state.hover = null;
    updateControls();
    if (was === 'maps' || state.view === 'maps') layout(); else showViews();
  }

  function toggleScale() {
    state.log[state.set] = !state.log[state.set];
    updateControls(); showViews(); drawGrid(); // the thumbnails' bytes stay; only their colours change
  }

  // Next or previous head in layer-major order, across layers.
  function stepHead(d) {
    const s = meta.sets[state.set], n = s.layers * s.heads;
    const k = (state.layer * s.heads + state.head + d + n) % n;
    focusHead(state.set, Math.floor(k / s.heads), k % s.heads);
  }

  function stepLayer(d) {
    const s = meta.sets[state.set];
    focusHead(state.set, (state.layer + d + s.layers) % s.layers, state.head);
  }

  function toggleTable() {
    const p = $('table-panel');
    p.hidden = !p.hidden;
    $('tablebtn').classList.toggle('on', !p.hidden);
    if (!p.hidden) p.scrollIntoView({ behavior: 'smooth', block: 'start' });
  }

  function toggleHelp(show) { $('help').hidden = show === undefined ? !$('help').hidden : !show; }

  // ---- the head table ----

  const sorting = { col: -1, desc: true };

  const numeric = (v) => v === '—' || Number.isFinite(parseFloat(v));

  // Numbers numerically; "—" (not meaningful) below every number.
  function cellValue(text) {
    const v = parseFloat(text);
    return Number.isFinite(v) ? v : -Infinity;
  }

  function buildTable() {
    const t = meta.sets[state.set].table, head = $('table').tHead, body = $('table').tBodies[0];
    head.innerHTML = ''; body.innerHTML = '';
    sorting.col = -1;
    const tr = head.insertRow();
    t.columns.forEach((c, k) => {
      const th = document.createElement('th');
      th.textContent = c; th.title = `Sort by ${c} (click again to reverse)`; th.dataset.col = String(k);
      th.addEventListener('click', () => sortTable(k));
      tr.append(th);
    });
    const li = t.columns.indexOf('layer'), hi = t.columns.indexOf('head');
    t.rows.forEach((r) => {
      const row = body.insertRow();
      row.dataset.layer = r[li]; row.dataset.head = r[hi];
      r.forEach((v) => { const c = row.insertCell(); c.textContent = v; if (numeric(v)) c.className = 'num'; });
      row.title = `Focus L${r[li]} H${r[hi]}`;
      row.addEventListener('click', () => focusHead(state.set, +row.dataset.layer, +row.dataset.head));
    });
  }

  function sortTable(col) {
    sorting.desc = sorting.col === col ? !sorting.desc : true;
    sorting.col = col;
    const body = $('table').tBodies[0], rows = [...body.rows];
    const key = (r) => cellValue(r.cells[col].textContent), sign = sorting.desc ? -1 : 1;
    rows.sort((a, b) => {
      const x = key(a), y = key(b);
      return x === y ? 0 : x === -Infinity ? 1 : y === -Infinity ? -1 : sign * (x - y);
    });
    body.append(...rows);
    [...$('table').tHead.rows[0].cells].forEach((th, k) => {
      th.classList.toggle('sorted', k === col);
      th.dataset.dir = k === col ? (sorting.desc ? '▼' : '▲') : '';
    });
  }

  function markTableRow() {
    for (const r of $('table').tBodies[0].rows)
      r.classList.toggle('on', +r.dataset.layer === state.layer && +r.dataset.head === state.head);
  }

  // ---- layout: the page uses the window ----

  const SIDE_MIN_H = 360; // the readout, top keys and a few lines of the row

  // Three columns (grid, map, side panel), or, where the grid leaves room below it, the side panel under
  // the grid and the map taking the rest of the width.
  function layout() {
    const main = $('main'), s = meta.sets[state.set];
    const top = main.getBoundingClientRect().top + window.scrollY;
    const H = Math.max(440, window.innerHeight - top - 10), W = main.clientWidth;
    main.style.height = H + 'px';
    const sideBySide = state.view === 'maps'; // the three maps take the grid's room
    const leftW = Math.max(320, Math.min(W * 0.3, 128 * s.heads + 40)), columnsW = Math.min(W * 0.24, 128 * s.heads + 40);
    const tStacked = thumbSize(leftW, H - SIDE_MIN_H - 12), tColumns = thumbSize(columnsW, H - 8);
    const stacked = !sideBySide && !meta.picture && tStacked >= tColumns;
    layoutGrid(stacked ? tStacked : tColumns);
    const gridW = Math.ceil(grid.cv.width / dpr), sideW = stacked ? Math.max(gridW, Math.round(leftW)) : W >= 1500 ? 360 : 300;
    $('grid-panel').hidden = sideBySide;
    main.classList.toggle('stacked', stacked);
    main.style.gridTemplateColumns = stacked ? `${sideW}px minmax(0, 1fr)`
      : `${sideBySide ? '' : gridW + 'px '}minmax(0, 1fr) ${sideW}px`;
    main.style.gridTemplateRows = stacked ? `${Math.ceil(grid.cv.height / dpr)}px minmax(0, 1fr)` : 'minmax(0, 1fr)';
    if (meta.picture) sizePicture(Math.min(sideW - 24, 0.45 * H));
    layoutViews();
    showViews();
    drawGrid();
  }

  const capH = 26; // a view's caption, page.css's .caption

  function layoutViews() {
    const cb = $('colorbar'), panel = $('view-panel');
    const w = panel.clientWidth - 104, h = panel.clientHeight;
    setCanvasSize(cb, 96, h - capH);
    const each = Math.floor((w - 10 * (views.length - 1)) / views.length);
    views.forEach((v) => v.resize(each, h - capH));
  }

  // ---- keys, as in the desktop window ----

  function onKey(e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.target instanceof HTMLSelectElement || e.target instanceof HTMLInputElement) return;
    const zoom = (d) => { views.forEach((v) => v.zoom(d)); };
    const keys = {
      ArrowLeft: () => stepHead(-1), ArrowRight: () => stepHead(1),
      ArrowUp: () => stepLayer(-1), ArrowDown: () => stepLayer(1),
      '+': () => zoom(1), '=': () => zoom(1), '-': () => zoom(-1), '−': () => zoom(-1),
      0: () => { views.forEach((v) => { v.fit(); v.draw(); }); },
      r: () => setView('rollout'), m: () => setView('maps'), l: toggleScale, t: toggleTable,
      '?': () => toggleHelp(), Escape: () => toggleHelp(false),
    };
    const f = keys[e.key] || keys[e.key.toLowerCase()];  // Shift or Caps Lock: the same key
    if (f) { e.preventDefault(); f(); }
  }

  function wire() {
    // Blur after a pick, so the arrow keys go back to stepping heads and layers.
    $('layer').addEventListener('change', (e) => { e.target.blur(); focusHead(state.set, +e.target.value, state.head); });
    $('head').addEventListener('change', (e) => { e.target.blur(); focusHead(state.set, state.layer, +e.target.value); });
    for (const b of $('views').children) b.addEventListener('click', () => setView(b.dataset.view));
    $('scale').addEventListener('click', toggleScale);
    $('zoomin').addEventListener('click', () => views.forEach((v) => v.zoom(1)));
    $('zoomout').addEventListener('click', () => views.forEach((v) => v.zoom(-1)));
    $('zoomfit').addEventListener('click', () => views.forEach((v) => { v.fit(); v.draw(); }));
    $('tablebtn').addEventListener('click', toggleTable);
    $('helpbtn').addEventListener('click', () => toggleHelp());
    $('help').addEventListener('click', () => toggleHelp(false));
    document.addEventListener('keydown', onKey);
    let pending = 0;
    window.addEventListener('resize', () => { clearTimeout(pending); pending = setTimeout(layout, 100); });
  }

  function header() {
    $('title').textContent = meta.title;
    $('subtitle').textContent = meta.subtitle; $('subtitle').title = meta.subtitle;
    $('quant').textContent = meta.quantisation.text;
    $('note').textContent = meta.note; $('note').hidden = !meta.note;
  }

  // The head the writer asks for (--layer, --head; a pooled page's first --heads).
  const openingHead = () => [meta.focus.set, meta.focus.layer, meta.focus.head];

  // ---- start ----

  const api = {
    meta, bytes: B, decode, firstPaintMs: null,
    row(si, l, h, i) {
      const s = meta.sets[si], off = s.maps[l * s.heads + h];
      return off == null ? null : rowValues(mapRef(off, s.rows.length, s.cols.length, s.triangle), i);
    },
    focus(si, l, h) { if (state.view === 'rollout') state.view = 'head'; focusHead(si, l, h); },
    focused() { return { set: state.set, layer: state.layer, head: state.head }; },
    cellCenter(i, j) { return views[0].cellCenter(i, j); },
  };
  window.attnlab = api;

  api.ready = (async () => {
    header();
    if (typeof DecompressionStream === 'undefined')
      throw new Error('this browser cannot decompress the maps (DecompressionStream: Chrome 80, Firefox 113, Safari 16.4 or later)');
    setupSets(); wire();
    if (meta.picture) setupPicture();
    B = await inflate(base64Bytes($('attnlab-maps').textContent));
    restoreRows();
    api.bytes = B;
    const [si, l, h] = openingHead();
    state.set = -1;
    focusHead(si, l, h);
    await new Promise((done) => requestAnimationFrame(() => { api.firstPaintMs = performance.now(); done(); }));
  })().catch((e) => {
    // A page that cannot start says why where the reader looks, rather than leaving empty canvases.
    $('note').textContent = 'This page could not open its maps: ' + e.message;
    $('note').hidden = false;
    throw e;
  });
})();

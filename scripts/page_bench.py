"""The interactive page (`attnlab render --format html`) at GPT-2 small's size, measured live: 12 layers × 12
heads on 512 tokens, two sets of maps.

  gpt2-shape: `model run` of a GPT-2-small-shaped folder with random weights (peer_bench.py writes it), whose heads
              spread their weight nearly evenly;
  spread:     a [12, 12, 512, 512] causal file of softmax rows over Gaussian scores (σ 0.5 to 4 by head, a sink or a
              previous-token band on some heads), whose weights span many decades: the hard case for the bytes.

For each: the page's size; `render --attention FOLDER --out page.html`'s whole process (read, store, gzip, write),
median of 3; and the page's first paint in Debian's chromium (puppeteer-core from build/npm), a fresh browser each
time, median of 5. The peer in the same run is BertViz's payload: the same maps as the JSON its head_view and
model_view embed (`attn.tolist()` through json.dumps), its size and the time Python takes to write it.
Run through scripts/page_bench.sh.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_bench import write_gpt2_folder  # noqa: E402

LAYERS, HEADS, L = 12, 12, 512

FIRST_PAINT = r"""
const puppeteer = require(process.argv[1]);
(async () => {
  const b = await puppeteer.launch({executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox']});
  const p = await b.newPage();
  await p.setViewport({width: 1600, height: 1000});
  const t0 = Date.now();
  await p.goto('file://' + process.argv[2]);
  await p.evaluate(() => window.attnlab.ready);
  const inPage = await p.evaluate(() => window.attnlab.firstPaintMs);
  console.log(JSON.stringify({navigation_to_paint_ms: Date.now() - t0, first_paint_ms: inPage}));
  await b.close();
})();
"""


def spread_maps(seed=0):
    rng = np.random.default_rng(seed)
    out = np.zeros((LAYERS, HEADS, L, L), np.float32)
    mask = np.tril(np.ones((L, L), bool))
    for l in range(LAYERS):
        for h in range(HEADS):
            s = rng.normal(0, 0.5 + 3.5 * h / (HEADS - 1), (L, L))
            if l % 3 == 0:
                s[:, 0] += 4
            elif l % 3 == 1:
                s[np.arange(1, L), np.arange(L - 1)] += 5
            s = np.where(mask, s, -np.inf)
            w = np.exp(s - s.max(1, keepdims=True))
            out[l, h] = w / w.sum(1, keepdims=True)
    return out


def timed(cmd):
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return (time.perf_counter() - t0) * 1e3


def measure(attnlab, modules, folder, maps, tmp, reps):
    page = os.path.join(tmp, "page.html")
    render = [attnlab, "render", "--attention", folder, "--out", page]
    render_ms = statistics.median(timed(render) for _ in range(reps))
    paints = []
    for _ in range(5):
        out = subprocess.run(["node", "-e", FIRST_PAINT, os.path.abspath(os.path.join(modules, "puppeteer-core")), page], check=True,
                             capture_output=True, text=True).stdout
        paints.append(json.loads(out))
    t0 = time.perf_counter()
    bertviz = json.dumps({"attn": maps.tolist()})
    bertviz_ms = (time.perf_counter() - t0) * 1e3
    return {"page_bytes": os.path.getsize(page), "render_ms": render_ms,
            "first_paint_ms": statistics.median(p["first_paint_ms"] for p in paints),
            "navigation_to_paint_ms": statistics.median(p["navigation_to_paint_ms"] for p in paints),
            "bertviz_json_bytes": len(bertviz), "bertviz_json_ms": bertviz_ms}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--attnlab", required=True)
    ap.add_argument("--modules", required=True, help="node_modules holding puppeteer-core")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "gpt2-small-shape")
        os.makedirs(model)
        write_gpt2_folder(model)
        words = "the quick brown fox jumps over a lazy dog while heads look back at earlier tokens".split()
        text = " ".join(words[i % len(words)] for i in range(200))[:L]  # byte-level vocabulary: a token per byte
        run = os.path.join(tmp, "run")
        subprocess.run([args.attnlab, "model", "run", model, "--text", text, "--out", run], check=True,
                       capture_output=True)
        maps = np.load(os.path.join(run, "attention.npy"))
        assert maps.shape == (LAYERS, HEADS, L, L), maps.shape
        results["gpt2-shape"] = measure(args.attnlab, args.modules, run, maps, tmp, args.reps)
        spread = os.path.join(tmp, "spread")
        os.makedirs(spread)
        maps = spread_maps()
        np.save(os.path.join(spread, "attention.npy"), maps)
        results["spread"] = measure(args.attnlab, args.modules, spread, maps, tmp, args.reps)
    print(f"{'maps (12 × 12 heads, 512 tokens)':<34}{'page MB':>9}{'render ms':>11}{'paint ms':>10}"
          f"{'BertViz JSON MB':>17}{'ratio':>7}")
    for name, r in results.items():
        print(f"{name:<34}{r['page_bytes'] / 1e6:>9.1f}{r['render_ms']:>11.0f}{r['first_paint_ms']:>10.0f}"
              f"{r['bertviz_json_bytes'] / 1e6:>17.0f}{r['bertviz_json_bytes'] / r['page_bytes']:>7.0f}")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

"""AttnLab against PyTorch, measured live: same shapes, threads and machine,
in the same run, cold (the first call in a fresh process) and warm (the
median of repeated calls after a warm-up).

  multi-head self-attention, d = 512, h = 8, L = 1024 and 4096:
    attnlab `compute multi-head --no-weights` (meta.json compute_seconds) and
    `bench --only multi_head` against torch.nn.MultiheadAttention
  GPT-2-small shape (12 layers, 12 heads, d = 768, vocabulary 50,257), 128
  tokens, random weights written here as a Hugging Face folder:
    attnlab `model run` (every attention map, top-5 at every position) and
    `bench --only model` against a torch forward with the same outputs

Cold times are engine times: attnlab's compute_seconds, torch's first call
after its module is built; process start-up and input generation are left
out of both. Run through scripts/peer_bench.sh, which installs torch.
"""

import argparse
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time

D_MHA, H_MHA = 512, 8
GPT2 = dict(layers=12, heads=12, d=768, vocab=50257, positions=1024)
TOKENS = 128


# [SECTION] Children: each cold figure is a fresh process


def child_mha(length, reps):
    import torch

    torch.set_num_threads(os.cpu_count())
    torch.manual_seed(7)
    mha = torch.nn.MultiheadAttention(D_MHA, H_MHA, batch_first=True).eval()
    x = torch.randn(1, length, D_MHA)
    out = {}
    with torch.no_grad():
        t0 = time.perf_counter()
        mha(x, x, x, need_weights=False)  # cold: the output only, as `compute --no-weights`
        out["cold_ms"] = (time.perf_counter() - t0) * 1e3
        for key, need in (("warm_output_only_ms", False), ("warm_weights_ms", True)):
            mha(x, x, x, need_weights=need, average_attn_weights=False)  # warm-up
            times = []
            for _ in range(reps):
                t0 = time.perf_counter()
                mha(x, x, x, need_weights=need, average_attn_weights=False)
                times.append((time.perf_counter() - t0) * 1e3)
            out[key] = statistics.median(times)
    print(json.dumps(out))


def load_safetensors(path):
    """Name -> float32 numpy view into the file (memory-mapped, no copy)."""
    import numpy as np

    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + n)
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        out[name] = data[a:b].view(np.float32).reshape(t["shape"])
    return out


def child_gpt2(folder, reps):
    import numpy as np
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(os.cpu_count())
    w = {k: torch.from_numpy(np.asarray(v)) for k, v in load_safetensors(os.path.join(folder, "model.safetensors")).items()}
    L, d, H = TOKENS, GPT2["d"], GPT2["heads"]
    dh = d // H
    ids = torch.tensor(token_ids())
    mask = torch.full((L, L), float("-inf")).triu(1)

    def forward(predict_at):
        # x = wte[ids] + wpe[0 … L)                                    [L, d]
        x = w["wte.weight"][ids] + w["wpe.weight"][:L]
        maps = []
        for layer in range(GPT2["layers"]):
            p = f"h.{layer}."
            a = F.layer_norm(x, (d,), w[p + "ln_1.weight"], w[p + "ln_1.bias"], 1e-5)
            qkv = torch.addmm(w[p + "attn.c_attn.bias"], a, w[p + "attn.c_attn.weight"])  # Conv1D: a W + b
            q, k, v = (t.view(L, H, dh).transpose(0, 1) for t in qkv.split(d, dim=1))
            prob = torch.softmax(q @ k.transpose(1, 2) / dh**0.5 + mask, dim=-1)  # kept: every map
            maps.append(prob)
            o = (prob @ v).transpose(0, 1).reshape(L, d)
            x = x + torch.addmm(w[p + "attn.c_proj.bias"], o, w[p + "attn.c_proj.weight"])
            a = F.layer_norm(x, (d,), w[p + "ln_2.weight"], w[p + "ln_2.bias"], 1e-5)
            f = F.gelu(torch.addmm(w[p + "mlp.c_fc.bias"], a, w[p + "mlp.c_fc.weight"]), approximate="tanh")
            x = x + torch.addmm(w[p + "mlp.c_proj.bias"], f, w[p + "mlp.c_proj.weight"])
        h = F.layer_norm(x, (d,), w["ln_f.weight"], w["ln_f.bias"], 1e-5)
        logits = h[predict_at] @ w["wte.weight"].t()  # tied LM head
        top = torch.topk(torch.softmax(logits, dim=-1), 5)
        return maps, h, top

    every = torch.arange(L)
    last = torch.tensor([L - 1])
    out = {}
    with torch.no_grad():
        t0 = time.perf_counter()
        forward(every)  # cold: the same outputs as `model run` (maps, hidden, top-5 at every position)
        out["cold_ms"] = (time.perf_counter() - t0) * 1e3
        for key, at in (("warm_every_ms", every), ("warm_last_ms", last)):
            forward(at)
            times = []
            for _ in range(reps):
                t0 = time.perf_counter()
                forward(at)
                times.append((time.perf_counter() - t0) * 1e3)
            out[key] = statistics.median(times)
    print(json.dumps(out))


# [SECTION] The GPT-2-small-shaped folder both sides read


def byte_symbols():
    """GPT-2's printable stand-in for each byte (bytes_to_unicode)."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    symbols, extra = {}, 0
    for b in range(256):
        if b in keep:
            symbols[b] = chr(b)
        else:
            symbols[b] = chr(256 + extra)
            extra += 1
    return symbols


def text():
    """TOKENS characters of printable ASCII: with no merges, one token each."""
    s = "".join(chr(ord("a") + (i * 7) % 26) for i in range(TOKENS))
    return s


def token_ids():
    return [ord(c) for c in text()]  # the vocabulary maps byte b's symbol to id b


def write_gpt2_folder(folder):
    import numpy as np

    rng = np.random.default_rng(11)
    d, V, P, layers = GPT2["d"], GPT2["vocab"], GPT2["positions"], GPT2["layers"]
    tensors = [("wte.weight", (V, d)), ("wpe.weight", (P, d))]
    for l in range(layers):
        p = f"h.{l}."
        tensors += [(p + "ln_1.weight", (d,)), (p + "ln_1.bias", (d,)), (p + "attn.c_attn.weight", (d, 3 * d)),
                    (p + "attn.c_attn.bias", (3 * d,)), (p + "attn.c_proj.weight", (d, d)), (p + "attn.c_proj.bias", (d,)),
                    (p + "ln_2.weight", (d,)), (p + "ln_2.bias", (d,)), (p + "mlp.c_fc.weight", (d, 4 * d)),
                    (p + "mlp.c_fc.bias", (4 * d,)), (p + "mlp.c_proj.weight", (4 * d, d)), (p + "mlp.c_proj.bias", (d,))]
    tensors += [("ln_f.weight", (d,)), ("ln_f.bias", (d,))]
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, shape in tensors:
        n = int(np.prod(shape)) * 4
        header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [offset, offset + n]}
        offset += n
    blob = json.dumps(header).encode()
    blob += b" " * ((8 - len(blob) % 8) % 8)
    with open(os.path.join(folder, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(blob)))
        f.write(blob)
        for name, shape in tensors:
            gain = name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name == "ln_f.weight"
            a = rng.normal(1.0 if gain else 0.0, 0.02, size=shape).astype(np.float32)
            f.write(a.tobytes())
    config = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_layer": layers, "n_head": GPT2["heads"],
              "n_embd": d, "n_positions": P, "vocab_size": V, "activation_function": "gelu_new"}
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f)
    with open(os.path.join(folder, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump({s: b for b, s in byte_symbols().items()}, f, ensure_ascii=False)
    with open(os.path.join(folder, "merges.txt"), "w") as f:
        f.write("#version: 0.2\n")


# [SECTION] The parent: run both sides and print the ratios


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def torch_child(args):
    return run_json([sys.executable, os.path.abspath(__file__)] + args)


def attnlab_cold(attnlab, args, tmp):
    out = os.path.join(tmp, "run")
    subprocess.run([attnlab] + args + ["--out", out], check=True, capture_output=True)
    with open(os.path.join(out, "meta.json")) as f:
        return json.load(f)["compute_seconds"] * 1e3


def median_of(n, f):
    return statistics.median(f() for _ in range(n))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--attnlab", help="the attnlab binary (scripts/peer_bench.sh passes build/attnlab)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--quick", action="store_true", help="one cold process per side and fewer warm repeats")
    ap.add_argument("--child", choices=["mha", "gpt2"], help=argparse.SUPPRESS)
    ap.add_argument("--length", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--folder", help=argparse.SUPPRESS)
    ap.add_argument("--reps", type=int, default=7, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child == "mha":
        return child_mha(a.length, a.reps)
    if a.child == "gpt2":
        return child_gpt2(a.folder, a.reps)

    if not a.attnlab:
        ap.error("--attnlab is required")
    import torch

    colds = 1 if a.quick else 3
    reps = 3 if a.quick else 7
    threads = os.cpu_count()
    rows = []
    with tempfile.TemporaryDirectory(prefix="attnlab-peer-") as tmp:
        bench = run_json([a.attnlab, "bench", "--json", "--only", "multi_head"])["multi_head"]
        warm = {c["L"]: c for c in bench["cases"]}
        for L in (1024, 4096):
            ours = median_of(colds, lambda: attnlab_cold(a.attnlab, ["compute", "multi-head", "--seed", "7", "--length", str(L),
                                                                     "--dim", str(D_MHA), "--heads", str(H_MHA), "--no-weights"], tmp))
            theirs = [torch_child(["--child", "mha", "--length", str(L), "--reps", str(reps)]) for _ in range(colds)]
            t_cold = statistics.median(t["cold_ms"] for t in theirs)
            rows.append((f"multi-head L={L}, cold, output only", ours, t_cold, 0.8))
            rows.append((f"multi-head L={L}, warm, with weights", warm[L]["warm_ms"],
                         statistics.median(t["warm_weights_ms"] for t in theirs), 0.3))
            rows.append((f"multi-head L={L}, warm, output only", warm[L]["warm_output_only_ms"],
                         statistics.median(t["warm_output_only_ms"] for t in theirs), 0.3))

        folder = os.path.join(tmp, "gpt2-small-shape")
        os.makedirs(folder)
        write_gpt2_folder(folder)
        ours = median_of(colds, lambda: attnlab_cold(a.attnlab, ["model", "run", folder, "--text", text(), "--predict-at", "all"], tmp))
        theirs = [torch_child(["--child", "gpt2", "--folder", folder, "--reps", str(reps)]) for _ in range(colds)]
        model = run_json([a.attnlab, "bench", "--json", "--only", "model"])["model"]
        rows.append(("GPT-2 small, 128 tokens, cold: maps + top-5 everywhere", ours,
                     statistics.median(t["cold_ms"] for t in theirs), 0.8))
        rows.append(("GPT-2 small, warm: maps + top-5 at the last position", model["forward_last_position_head_ms"],
                     statistics.median(t["warm_last_ms"] for t in theirs), 0.8))
        rows.append(("GPT-2 small, warm: maps + top-5 everywhere", model["forward_with_lm_head_ms"],
                     statistics.median(t["warm_every_ms"] for t in theirs), None))

    result = {"threads": threads, "torch": torch.__version__, "cold_processes": colds, "warm_repeats": reps,
              "l16384_output_only_peak_rss_mib": bench["long"]["cold_peak_rss_bytes"] / 2**20,
              "rows": [{"what": w, "attnlab_ms": o, "torch_ms": t, "ratio": o / t, "target": g} for w, o, t, g in rows]}
    if a.json:
        print(json.dumps(result, indent=2))
        return
    print(f"AttnLab against PyTorch {torch.__version__}, {threads} threads each, same machine, same run")
    print(f"cold: median of {colds} fresh processes (engine time); warm: median of repeated calls\n")
    print(f"{'':56} {'attnlab ms':>11} {'torch ms':>10} {'ratio':>7}  target")
    for w, o, t, g in rows:
        verdict = "" if g is None else (f"≤ {g:.1f}  " + ("met" if o / t <= g else "MISSED"))
        print(f"{w:56} {o:11.1f} {t:10.1f} {o / t:7.2f}  {verdict}")
    peak = result["l16384_output_only_peak_rss_mib"]
    print(f"\nmulti-head L=16384 output only, peak RSS {peak:.0f} MiB (target < 512 MiB: {'met' if peak < 512 else 'MISSED'})")


if __name__ == "__main__":
    main()

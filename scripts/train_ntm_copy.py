#!/usr/bin/env python3
"""Trains the Neural Turing Machine of the copy task (Graves et al. 2014, §4.1,
Figure 6) that AttnLab ships as assets/trained/ntm-copy.safetensors, and writes
tests/data/ntm_copy_forward.json, the torch forward pass on one fixed sequence
that the C++ engine (engine/variants/ntm_copy.cpp) must reproduce.

The machine, at every time step t:
  h_t, c_t = LSTMCell([x_t; r_{t-1}], (h_{t-1}, c_{t-1}))     controller
  write head: from h_t, k, β, g, s, γ, e, a; w^w_t by the addressing below;
              M_t = M_{t-1} ∘ (1 − w^w_t e_tᵀ) + w^w_t a_tᵀ    (3), (4)
  read head:  from h_t, k, β, g, s, γ; w^r_t over M_t;  r_t = M_tᵀ w^r_t   (2)
  y_t = σ(W_y [h_t; r_t] + b_y)
with the head parameters (the paper's constraints): k linear, β = softplus,
g = σ, s = softmax over the shifts −1, 0, +1, γ = 1 + softplus, e = σ, a linear,
and the addressing of engine/variants/ntm.cpp:
  w_c(i) = softmax_i(β · k·M_i / (‖k‖ ‖M_i‖ + 1e-8))
  w_g = g w_c + (1 − g) w_{t-1}
  w̃(i) = Σ_j w_g(j) s(i − j) mod N, s = [s(−1), s(0), s(+1)] (s(+1) moves row j to j + 1)
  w = w̃^γ / Σ w̃^γ.

The copy task: a sequence of 1…max_length random vectors of `bits` bits, then
one step with the delimiter channel (input bits + 1 channels), then as many
steps of zeros during which the target is the sequence again. The loss is the
binary cross-entropy on those output steps only. Lengths grow by a curriculum:
from 1…6 (long enough that the LSTM alone cannot hold the sequence) by 2 up to
1…max_length, each time fewer than --promote bits per sequence are wrong; it
stops at 1…max_length once fewer than --finish are.

What made it learn (docs/variants.md, ntm-copy): M_0 constant and both heads' w_0
starting focused on row 0 (a flat w_0 over a constant M_0 keeps every row alike
forever); the curriculum's start at 6; Adam 2e-3. The shipped model is seed 2:
seed 1 diverged once it reached lengths 1…16.

The file holds everything the forward pass needs, F32: the controller
(controller.weight_ih [4H, bits + 1 + W], weight_hh, bias_ih, bias_hh), the
head layers (write_head.weight [3W + 6, H] rows k, β, g, s(−1), s(0), s(+1), γ,
e, a; read_head.weight [W + 6, H] rows k, β, g, s, γ; and their .bias), the
output layer (output.weight [bits, H + W], output.bias), the initial memory
memory0 [N, W], the initial read vector read0 [W], and the initial weightings
write_w0 and read_w0 [N] (already normalised), plus in __metadata__ bits,
max_length, memory_rows, memory_width, controller, memory_init, seed, steps,
curriculum_reached, copy_error (bits wrong per sequence over --eval-sequences
sequences of 1…max_length) and train_seconds.

Run by scripts/train_ntm_copy.sh (Debian's python3-torch); reproducible from
--seed with one thread.
"""

import argparse
import json
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from train_default_model import write_safetensors  # noqa: E402

EPS = 1e-8
SHIFTS = 3  # s(−1), s(0), s(+1)


def address(memory, k, beta, g, s, gamma, w_prev):
    """One head's addressing (§3.3); memory [B, N, W], k [B, W], beta/g/gamma [B, 1],
    s [B, 3], w_prev [B, N]. Returns the four stages, each [B, N]."""
    dot = torch.einsum("bnw,bw->bn", memory, k)
    norms = memory.norm(dim=2) * k.norm(dim=1, keepdim=True)
    w_c = torch.softmax(beta * dot / (norms + EPS), dim=1)                      # (5), (6)
    w_g = g * w_c + (1 - g) * w_prev                                            # (7)
    # (8): w̃(i) = s(−1) w_g(i + 1) + s(0) w_g(i) + s(+1) w_g(i − 1)
    w_tilde = s[:, 0:1] * torch.roll(w_g, -1, 1) + s[:, 1:2] * w_g + s[:, 2:3] * torch.roll(w_g, 1, 1)
    # (9): w̃^γ / Σ w̃^γ as softmax(γ log w̃), as the engine computes it
    w = torch.softmax(gamma * torch.log(w_tilde.clamp_min(1e-30)), dim=1)
    return w_c, w_g, w_tilde, w


def head_params(raw, width, write):
    """Split a head layer's output [B, W + 6 (+ 2W)] into the constrained parameters."""
    k = raw[:, :width]
    beta = F.softplus(raw[:, width:width + 1])
    g = torch.sigmoid(raw[:, width + 1:width + 2])
    s = torch.softmax(raw[:, width + 2:width + 2 + SHIFTS], dim=1)
    gamma = 1 + F.softplus(raw[:, width + 5:width + 6])
    p = {"k": k, "beta": beta, "g": g, "s": s, "gamma": gamma}
    if write:
        p["e"] = torch.sigmoid(raw[:, width + 6:2 * width + 6])
        p["a"] = raw[:, 2 * width + 6:3 * width + 6]
    return p


class Ntm(nn.Module):
    def __init__(self, bits, rows, width, hidden, memory_init, w0_focus):
        super().__init__()
        self.bits, self.rows, self.width = bits, rows, width
        self.controller = nn.LSTMCell(bits + 1 + width, hidden)
        self.write_head = nn.Linear(hidden, 3 * width + 6)
        self.read_head = nn.Linear(hidden, width + 6)
        self.output = nn.Linear(hidden + width, bits)
        if memory_init == "learned":
            self.memory0 = nn.Parameter(torch.randn(rows, width) * 0.5)
        else:  # a constant M_0, which Collier & Beel (2018) found to train fastest and most reliably
            self.register_buffer("memory0", torch.full((rows, width), 1e-6))
        self.read0 = nn.Parameter(torch.zeros(width))
        # w_0 = softmax(·), stored normalised. Both heads start focused on row 0: with a
        # constant M_0 a flat w_0 would keep every row alike forever (each write adds the
        # same vector to all of them), so no head could ever address one.
        focus = torch.zeros(rows)
        focus[0] = w0_focus
        self.write_logits0 = nn.Parameter(focus.clone())
        self.read_logits0 = nn.Parameter(focus.clone())

    def forward(self, x, trace=None):
        """x [B, T, bits + 1] → y [B, T, bits]; `trace`, a list, receives each step's
        weightings, head parameters and the final memory (batch row 0)."""
        B, T, _ = x.shape
        H = self.controller.hidden_size
        h, c = x.new_zeros(B, H), x.new_zeros(B, H)
        memory = self.memory0.expand(B, -1, -1)
        r = self.read0.expand(B, -1)
        w_write = torch.softmax(self.write_logits0, 0).expand(B, -1)
        w_read = torch.softmax(self.read_logits0, 0).expand(B, -1)
        ys = []
        for t in range(T):
            h, c = self.controller(torch.cat([x[:, t], r], 1), (h, c))
            pw = head_params(self.write_head(h), self.width, True)
            sw = address(memory, pw["k"], pw["beta"], pw["g"], pw["s"], pw["gamma"], w_write)
            w_write = sw[3]
            memory = memory * (1 - w_write.unsqueeze(2) * pw["e"].unsqueeze(1)) \
                + w_write.unsqueeze(2) * pw["a"].unsqueeze(1)                        # (3), (4)
            pr = head_params(self.read_head(h), self.width, False)
            sr = address(memory, pr["k"], pr["beta"], pr["g"], pr["s"], pr["gamma"], w_read)
            w_read = sr[3]
            r = torch.einsum("bn,bnw->bw", w_read, memory)                          # (2)
            ys.append(torch.sigmoid(self.output(torch.cat([h, r], 1))))
            if trace is not None:
                trace.append({"write": (pw, sw), "read": (pr, sr), "y": ys[-1], "memory": memory})
        return torch.stack(ys, 1)


def copy_batch(batch, lengths, bits, gen):
    """Inputs [B, 2L + 1, bits + 1], targets [B, L, bits] and the per-row length mask [B, L]
    for lengths drawn from `lengths` (a pair lo, hi); sequences shorter than the longest
    in the batch put their delimiter and copy right after their own end."""
    lo, hi = lengths
    lens = torch.randint(lo, hi + 1, (batch,), generator=gen)
    L = int(lens.max())
    seq = torch.randint(0, 2, (batch, L, bits), generator=gen).float()
    x = torch.zeros(batch, 2 * L + 1, bits + 1)
    target = torch.zeros(batch, 2 * L + 1, bits)
    mask = torch.zeros(batch, 2 * L + 1)
    for b in range(batch):
        n = int(lens[b])
        x[b, :n, :bits] = seq[b, :n]
        x[b, n, bits] = 1
        target[b, n + 1:2 * n + 1] = seq[b, :n]
        mask[b, n + 1:2 * n + 1] = 1
    return x, target, mask


def bits_wrong(y, target, mask):
    """Per sequence: output bits on the wrong side of 0.5 during its copy.        [B]"""
    wrong = ((y > 0.5).float() != target).float().sum(2) * mask
    return wrong.sum(1)


def evaluate(model, sequences, max_length, bits, seed):
    gen = torch.Generator().manual_seed(seed)
    errors = []
    with torch.no_grad():
        for _ in range(sequences // 100):
            x, target, mask = copy_batch(100, (1, max_length), bits, gen)
            errors.append(bits_wrong(model(x), target, mask))
    return float(torch.cat(errors).mean())


def write_crosscheck(model, bits, length, seed, path):
    gen = torch.Generator().manual_seed(seed)
    seq = torch.randint(0, 2, (length, bits), generator=gen).float()
    x = torch.zeros(1, 2 * length + 1, bits + 1)
    x[0, :length, :bits] = seq
    x[0, length, bits] = 1
    trace = []
    with torch.no_grad():
        y = model(x, trace)

    def rows(t):
        return [[round(v, 7) for v in row] for row in t.tolist()]

    def head(name):
        out = {"w_c": [], "w_g": [], "w_tilde": [], "w": [], "k": [], "beta": [], "g": [], "s": [], "gamma": []}
        if name == "write":
            out.update({"e": [], "a": []})
        for step in trace:
            p, stages = step[name]
            for key, v in zip(("w_c", "w_g", "w_tilde", "w"), stages):
                out[key].append([round(u, 7) for u in v[0].tolist()])
            for key, v in p.items():
                vals = [round(u, 7) for u in v[0].tolist()]
                out[key].append(vals[0] if key in ("beta", "g", "gamma") else vals)
        return out

    data = {
        "comment": "assets/trained/ntm-copy.safetensors on one sequence, computed by scripts/train_ntm_copy.py in "
                   "torch float32 from the stored weights: the C++ forward pass must match. Steps are "
                   "[length inputs, delimiter, length outputs]; weightings are [steps][N].",
        "length": length,
        "input": rows(x[0]),
        "output": rows(y[0]),
        "write": head("write"),
        "read": head("read"),
        "final_memory": rows(trace[-1]["memory"][0]),
    }
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(data, f, indent=0)
        f.write("\n")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, default=2)
    p.add_argument("--bits", type=int, default=8)
    p.add_argument("--max-length", type=int, default=16)
    p.add_argument("--rows", type=int, default=32, help="memory rows N")
    p.add_argument("--width", type=int, default=12, help="memory width W")
    p.add_argument("--controller", type=int, default=80, help="LSTM hidden size")
    p.add_argument("--memory-init", choices=["constant", "learned"], default="constant",
                   help="M_0: every entry 1e-6, or learned from a random start")
    p.add_argument("--w0-focus", type=float, default=6.0,
                   help="initial logit of row 0 in both heads' w_0 (the others 0): 6 gives w_0(0) ≈ 0.93 for N = 32")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=12000, help="most training steps (batches)")
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--clip", type=float, default=10.0, help="gradient norm clipping")
    p.add_argument("--eval-every", type=int, default=100)
    p.add_argument("--start-length", type=int, default=6,
                   help="curriculum: the longest sequence at first (--max-length: no curriculum)")
    p.add_argument("--promote", type=float, default=0.3,
                   help="curriculum: lengthen when the bits wrong per sequence of the last window are below this")
    p.add_argument("--finish", type=float, default=0.02,
                   help="stop once the bits wrong per sequence of a window at --max-length are below this")
    p.add_argument("--max-seconds", type=float, default=0, help="wall-clock budget of the training loop (0: none)")
    p.add_argument("--eval-sequences", type=int, default=1000)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", default=os.path.join(ROOT, "assets", "trained", "ntm-copy.safetensors"))
    p.add_argument("--crosscheck", default=os.path.join(ROOT, "tests", "data", "ntm_copy_forward.json"))
    a = p.parse_args()

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    gen = torch.Generator().manual_seed(a.seed)
    model = Ntm(a.bits, a.rows, a.width, a.controller, a.memory_init, a.w0_focus)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    top = min(a.start_length, a.max_length)  # curriculum: lengths 1…top
    start = time.time()
    window = []
    step = 0
    for step in range(1, a.steps + 1):
        x, target, mask = copy_batch(a.batch, (1, top), a.bits, gen)
        y = model(x)
        bce = F.binary_cross_entropy(y.clamp(1e-6, 1 - 1e-6), target, reduction="none").sum(2)
        loss = (bce * mask).sum() / mask.sum()
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), a.clip)
        opt.step()
        window.append(float(bits_wrong(y.detach(), target, mask).mean()))
        if step % a.eval_every == 0:
            err = sum(window) / len(window)
            window = []
            print(f"step {step}  lengths 1…{top}  loss {loss.item():.4f}  bits wrong/seq {err:.3f}  "
                  f"{time.time() - start:.0f} s", flush=True)
            if top == a.max_length:
                if err < a.finish:
                    break
            elif err < a.promote:
                top = min(a.max_length, top + 2)
        if a.max_seconds and time.time() - start > a.max_seconds:
            break
    seconds = time.time() - start
    copy_error = evaluate(model, a.eval_sequences, a.max_length, a.bits, a.seed + 1000)
    print(f"trained {step} steps in {seconds:.0f} s; curriculum reached 1…{top}; "
          f"copy error {copy_error:.4f} bits wrong per sequence over {a.eval_sequences} sequences of "
          f"1…{a.max_length}", flush=True)

    sd = model.state_dict()
    tensors = {k: v for k, v in sd.items() if k.startswith(("controller.", "write_head.", "read_head.", "output."))}
    tensors["memory0"] = sd["memory0"]
    tensors["read0"] = sd["read0"]
    tensors["write_w0"] = torch.softmax(sd["write_logits0"], 0)
    tensors["read_w0"] = torch.softmax(sd["read_logits0"], 0)
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    write_safetensors(a.out, tensors, "F32", {
        "bits": a.bits, "max_length": a.max_length, "memory_rows": a.rows, "memory_width": a.width,
        "controller": a.controller, "memory_init": a.memory_init, "seed": a.seed, "steps": step, "curriculum_reached": top,
        "copy_error": f"{copy_error:.4f}", "train_seconds": f"{seconds:.0f}",
    })
    # The cross-check runs the model as stored: reload the file's normalised w_0 as logits.
    with torch.no_grad():
        model.write_logits0.copy_(torch.log(tensors["write_w0"]))
        model.read_logits0.copy_(torch.log(tensors["read_w0"]))
    write_crosscheck(model, a.bits, min(10, a.max_length), a.seed + 2000, a.crosscheck)
    print(f"wrote {a.out} and {a.crosscheck}")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Trains the pointer network that sorts numbers and writes assets/trained/pointer-sort.safetensors.

Runs with Debian's own interpreter and python3-torch (Debian 12: torch 1.13);
scripts/train_pointer_sort.sh installs the packages and calls
`/usr/bin/python3 scripts/train_pointer_sort.py`.

The task (Vinyals et al. 2015, "Pointer Networks", §4.4 sorting): n numbers
x_1 … x_n drawn uniformly from [0, 1), n in [--min-length, --max-length]; the
answer is the permutation C_1 … C_n of input positions that lists them in
ascending order.

The model, in the names the C++ engine reads (engine/variants/pointer_sort.h):
  embedding   a_j = W_x x_j + b_x                     embed.weight [E, 1], embed.bias [E]
  encoder     (e_j, c_j) = LSTM(a_j, e_{j-1}, c_{j-1}), from zeros    encoder.* (torch nn.LSTMCell)
  decoder     (d_i, s_i) = LSTM(g_i, d_{i-1}, s_{i-1}), from (e_n, c_n)   decoder.*
              g_1 = start (a learned vector [E]), g_{i+1} = a_{C_i}: the embedding of the number pointed to
  pointer     u_j^i = vᵀ tanh(W₁ e_j + W₂ d_i)         pointer.w_1.weight [A, H], pointer.w_2.weight [A, H],
                                                       pointer.v [A]
              p(C_i = j) = softmax_j(u^i) over the positions not chosen yet
The mask is our choice, not the paper's: its p(C_i | C_1 … C_{i-1}, P) puts
mass on every input, and a decoder can then name a number twice. Here u_j^i of
an already-chosen j is left out of the softmax (p = 0 there), in training and
decoding alike, so the output is always a permutation; what the network must
learn is which of the remaining numbers is the smallest.

Training: teacher forcing (g_{i+1} is the embedding of the true i-th smallest),
cross-entropy of the masked p at every step, one length per batch drawn
uniformly from the range, Adam with a cosine decay of the learning rate to 5 %,
gradient clipping at 1. Decoding (evaluation, the cross-check and the engine)
is greedy: C_i = argmax_j p(C_i = j).

Accuracy: on --eval-sequences fresh sequences per length from a generator
seeded apart from training (the same test sets for every --seed): exact
(the whole output sorted) and per step (output step i names the i-th smallest
number). Both go into the file's __metadata__ and are printed.

Outputs:
  assets/trained/pointer-sort.safetensors   F32 tensors above; __metadata__: min_length,
      max_length, embedding (E), hidden (H), attention (A), seed, steps, batch, lr,
      accuracy_exact_n<n> and accuracy_step_n<n> (percent, one decimal)
  tests/data/pointer_sort_crosscheck.json   a fixed input; torch's u and p at every
      step and the chosen pointers, for the C++ forward pass

Reproducible: --seed drives the initialisation and the training data; with
the same torch build and --threads the weights come out bit-identical.

The shipped file is --seed 1 with the defaults: 8,000 steps, 8 minutes of CPU
on one thread (23 minutes of wall time on a 2-core machine shared with two
builds); exact accuracy 99.7 % at n = 5 down to 98.0 % at n = 12.
"""

import argparse
import json
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_default_model import write_safetensors  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EVAL_SEED = 20150609  # the test sets do not depend on --seed
# The cross-check input: eight numbers, two of them close (0.31, 0.33).
CROSSCHECK_NUMBERS = [0.42, 0.07, 0.93, 0.31, 0.58, 0.33, 0.76, 0.15]


class PointerSort(nn.Module):
    def __init__(self, embedding, hidden, attention):
        super().__init__()
        self.embed = nn.Linear(1, embedding)
        self.encoder = nn.LSTMCell(embedding, hidden)
        self.decoder = nn.LSTMCell(embedding, hidden)
        self.start = nn.Parameter(torch.empty(embedding).uniform_(-1, 1))
        self.pointer = Pointer(hidden, attention)

    def forward(self, x, target=None):
        """x [B, n]. target [B, n] (the sorting permutation): teacher forcing;
        None: greedy decoding. Returns u [B, n, n] (step i, position j, before
        the mask), log p [B, n, n] (masked: −inf at chosen positions) and the
        chosen positions [B, n]."""
        B, n = x.shape
        a = self.embed(x.unsqueeze(-1))                    # a_j             [B, n, E]
        h = c = x.new_zeros(B, self.encoder.hidden_size)
        enc = []
        for j in range(n):
            h, c = self.encoder(a[:, j], (h, c))
            enc.append(h)
        e = torch.stack(enc, 1)                            # e_j             [B, n, H]
        w1e = self.pointer.w_1(e)                          # W₁ e_j          [B, n, A]
        chosen = torch.zeros(B, n, dtype=torch.bool)
        g = self.start.expand(B, -1)                       # g_1
        us, logps, picks = [], [], []
        rows = torch.arange(B)
        for i in range(n):
            h, c = self.decoder(g, (h, c))                 # d_i
            u = self.pointer.scores(w1e, h)                # u_j^i           [B, n]
            logp = F.log_softmax(u.masked_fill(chosen, float("-inf")), -1)
            pick = target[:, i] if target is not None else logp.argmax(-1)
            chosen = chosen.clone()
            chosen[rows, pick] = True
            g = a[rows, pick]                              # g_{i+1} = a_{C_i}
            us.append(u)
            logps.append(logp)
            picks.append(pick)
        return torch.stack(us, 1), torch.stack(logps, 1), torch.stack(picks, 1)


class Pointer(nn.Module):
    """u_j = vᵀ tanh(W₁ e_j + W₂ d), Vinyals et al. 2015, eq. 3 (no biases, as there)."""

    def __init__(self, hidden, attention):
        super().__init__()
        self.w_1 = nn.Linear(hidden, attention, bias=False)
        self.w_2 = nn.Linear(hidden, attention, bias=False)
        self.v = nn.Parameter(torch.empty(attention).uniform_(-1 / math.sqrt(attention), 1 / math.sqrt(attention)))

    def scores(self, w1e, d):
        return torch.tanh(w1e + self.w_2(d).unsqueeze(1)) @ self.v


def batch(n, size, gen):
    x = torch.rand(size, n, generator=gen)
    return x, x.argsort(-1)


def accuracy(model, n, count):
    """Exact and per-step accuracy (%) of greedy decoding on `count` sequences of length n."""
    gen = torch.Generator().manual_seed(EVAL_SEED + n)
    x, order = batch(n, count, gen)
    with torch.no_grad():
        _, _, picks = model(x)
    right = picks == order
    return 100.0 * right.all(-1).float().mean().item(), 100.0 * right.float().mean().item()


def write_crosscheck(model, a, path):
    x = torch.tensor([CROSSCHECK_NUMBERS])
    with torch.no_grad():
        u, logp, picks = model(x)
    p = logp.exp()
    data = {
        "comment": "The shipped pointer-sort model (assets/trained/pointer-sort.safetensors) on one input, computed "
                   "by scripts/train_pointer_sort.py in torch float32 with greedy decoding: u is before the mask "
                   "(every position), p after it (0 at positions chosen before); the C++ forward must match.",
        "seed": a.seed,
        "numbers": CROSSCHECK_NUMBERS,
        "u": [[round(v, 6) for v in row] for row in u[0].tolist()],  # [step i][position j]
        "p": [[round(v, 7) for v in row] for row in p[0].tolist()],
        "chosen": picks[0].tolist(),
        "sorted": sorted(range(len(CROSSCHECK_NUMBERS)), key=lambda j: CROSSCHECK_NUMBERS[j]),
    }
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--min-length", type=int, default=5)
    p.add_argument("--max-length", type=int, default=12)
    p.add_argument("--embedding", type=int, default=32, help="E: size of the numbers' embedding a_j")
    p.add_argument("--hidden", type=int, default=128, help="H: encoder and decoder LSTM size")
    p.add_argument("--attention", type=int, default=128, help="A: rows of W₁, W₂ and v")
    p.add_argument("--steps", type=int, default=8000)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--eval-every", type=int, default=1000)
    p.add_argument("--eval-sequences", type=int, default=2000, help="test sequences per length")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", default=os.path.join(ROOT, "assets", "trained", "pointer-sort.safetensors"))
    p.add_argument("--crosscheck", default=os.path.join(ROOT, "tests", "data", "pointer_sort_crosscheck.json"))
    a = p.parse_args()
    lengths = range(a.min_length, a.max_length + 1)

    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    gen = torch.Generator().manual_seed(a.seed)
    model = PointerSort(a.embedding, a.hidden, a.attention)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: 0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * min(s, a.steps) / a.steps)))
    t0 = time.time()
    total = 0.0
    for step in range(1, a.steps + 1):
        n = int(torch.randint(a.min_length, a.max_length + 1, (1,), generator=gen))
        x, order = batch(n, a.batch, gen)
        _, logp, _ = model(x, order)
        loss = F.nll_loss(logp.reshape(-1, n), order.reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        total += loss.item()
        if step % a.eval_every == 0 or step == a.steps:
            model.eval()
            acc = [accuracy(model, m, 500) for m in (a.min_length, a.max_length)]
            model.train()
            print(f"step {step}: loss {total / a.eval_every:.4f}, exact n={a.min_length} {acc[0][0]:.1f} %, "
                  f"n={a.max_length} {acc[1][0]:.1f} % ({time.time() - t0:.0f} s)", flush=True)
            total = 0.0

    model.eval()
    meta = {"task": "sort numbers drawn uniformly from [0, 1) into ascending order",
            "min_length": a.min_length, "max_length": a.max_length, "embedding": a.embedding,
            "hidden": a.hidden, "attention": a.attention, "seed": a.seed, "steps": a.steps, "batch": a.batch,
            "lr": a.lr, "eval_sequences": a.eval_sequences}  # no time: the file is the same on every run
    for n in lengths:
        exact, per_step = accuracy(model, n, a.eval_sequences)
        meta[f"accuracy_exact_n{n}"] = f"{exact:.1f}"
        meta[f"accuracy_step_n{n}"] = f"{per_step:.1f}"
        print(f"n = {n}: exact {exact:.1f} %, per step {per_step:.1f} % ({a.eval_sequences} sequences)", flush=True)

    tensors = {name: t for name, t in model.state_dict().items()}
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    write_safetensors(a.out, tensors, "F32", meta)
    write_crosscheck(model, a, a.crosscheck)
    print(f"wrote {a.out} and {a.crosscheck} in {time.time() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()

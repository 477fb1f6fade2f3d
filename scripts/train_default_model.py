#!/usr/bin/python3
"""Trains AttnLab's embedded default model and writes assets/model/.

Runs with Debian's own interpreter and python3-torch (Debian 12: torch 1.13),
not a pyenv/venv python: scripts/train_default_model.sh installs the Debian
packages and calls `/usr/bin/python3 scripts/train_default_model.py`.

Corpus: the King James Version of the Bible (1611; public domain), from the
Debian packages bible-kjv-text (the text, in the Bible Retrieval System's
compressed format) and bible-kjv (the `bible` program that reads it). Their
copyright file: "The copyright for the King James Version text of the Bible is
expired"; the BRS data file "is provided for unrestricted use ... Users may
copy, modify or distribute this file at will." The script strips the markup
(book/chapter headings and verse numbers) and keeps the running prose:
31,102 verses, 66 books, 1,189 chapters, about 4.3 MB of ASCII English.
Every 20th chapter is held out for validation.

Outputs, in the Hugging Face GPT-2 layout that AttnLab's engine reads:
  assets/model/config.json         GPT2LMHeadModel config
  assets/model/model.safetensors   F16 weights, HF names, lm_head tied to wte
  assets/model/vocab.json          byte-level BPE vocabulary (GPT-2 layout)
  assets/model/merges.txt          "#version: 0.2" then one merge per line
  assets/model/head_scores.json    every head's summaries (engine/model/blocks/head_metrics.h)
and tests/data/default_model_forward.json, a cross-check of the forward pass
(token ids, attention rows, final hidden rows, argmax next tokens) for the
C++ engine.

Training recipe (standard practice for making the previous-token and
induction heads of Olsson et al. (2022), "In-context learning and induction
heads", form quickly in a small model on one CPU core):
  - GPT-2 architecture, 2 layers x 4 heads, d=128, 256 learned positions
    (initialised with sinusoids, see Gpt2), tied LM head.
  - Windows of 128 tokens, 16 per step; every 4th step instead 8 windows of
    256 tokens, so that positions 128-255 are trained too.
  - The windows: 30 % random ids tiled with a period of 8 to half the window
    (copying is their only signal), 30 % text that repeats itself (a text
    span tiled, or copied further on), 40 % plain text (see batch()). With
    20 % random ids and 40 % repeating text the previous-token head stalled
    at 0.33 on held-out text (seeds 1 and 2); with 30 % random ids, where
    only the exact previous token tells what comes next, it reached 0.77.
  - AdamW (beta2 0.95), lr 1.5e-3, 100 warm-up steps, cosine decay to 10 %
    over --steps (8,000), weight decay 0.01 on matrices, gradient clipping at 1.
  - Every 200 steps the head summaries below (the very table the script
    writes) and the loss on 32 held-out windows are printed. The checkpoint
    kept is the first with a previous-token score >= 0.5 and an induction
    score >= 0.3, then the one of lowest held-out loss among those (before
    that: the one closest to both bars). Training stops early once both heads
    are there and the held-out loss fell less than 0.02 over 5 evaluations,
    or at --max-seconds (the message names the --stop-at that reproduces it).

Reproducible: one seed drives the tokenizer's tie-breaks, the weight init,
the data order and the repeated spans; with the same torch build and thread
count the weights come out bit-identical.
"""

import argparse
import collections
import json
import math
import os
import re
import struct
import subprocess
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EOS = "<|endoftext|>"

# ---------------------------------------------------------------------------
# [SECTION] Corpus: the KJV through the `bible` program of package bible-kjv
# ---------------------------------------------------------------------------


def read_kjv():
    """Chapters of the KJV as running prose, verses joined by a space."""
    # -l100000: one verse per line (no wrapping). Output: "Genesis 1" headings,
    # blank lines, and "  1 In the beginning ..." verses.
    out = subprocess.run(["bible", "-l100000", "gen1:1-rev22:21"], check=True,
                         capture_output=True, text=True, encoding="ascii").stdout
    chapters, verses, n_verses = [], [], 0
    for line in out.split("\n"):
        m = re.fullmatch(r" +\d+ (.*)", line)
        if m:
            verses.append(m.group(1).strip())
            n_verses += 1
        elif line.strip():  # a heading: the previous chapter ends
            if verses:
                chapters.append(" ".join(verses))
            verses = []
    if verses:
        chapters.append(" ".join(verses))
    if n_verses != 31102 or len(chapters) != 1189:
        sys.exit(f"bible: expected 31102 verses in 1189 chapters, got {n_verses} in {len(chapters)}")
    for c in chapters:
        if not all(" " <= ch <= "~" for ch in c):
            sys.exit("bible: expected printable ASCII text")
    return chapters


# ---------------------------------------------------------------------------
# [SECTION] Byte-level BPE in the GPT-2 file layout
# ---------------------------------------------------------------------------

def bytes_to_unicode():
    """GPT-2's byte → printable character table (openai/gpt-2 encoder.py)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


BYTE_ENCODER = bytes_to_unicode()

# GPT-2's pre-tokenizer is
#   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
# On ASCII text \p{L} is [A-Za-z], \p{N} is [0-9] and \s (White_Space) is
# [ \t\n\v\f\r], so this pattern gives the very pieces of the real one (which
# the C++ tokenizer runs with ICU). The corpus and every text this script
# encodes are checked to be ASCII.
PRETOKENIZE = re.compile(
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+""", re.ASCII)


def pieces(text):
    if not text.isascii():
        raise ValueError("the ASCII pre-tokenizer got non-ASCII text")
    return ["".join(BYTE_ENCODER[b] for b in p.encode("ascii")) for p in PRETOKENIZE.findall(text)]


def train_bpe(texts, n_merges):
    """Most frequent pair first, ties broken by the pair itself (deterministic)."""
    word_counts = collections.Counter()
    for t in texts:
        word_counts.update(pieces(t))
    words = [list(w) for w in word_counts]
    counts = list(word_counts.values())
    pair_count = collections.Counter()
    where = collections.defaultdict(set)
    for i, w in enumerate(words):
        for p in zip(w, w[1:]):
            pair_count[p] += counts[i]
            where[p].add(i)
    merges = []
    for _ in range(n_merges):
        if not pair_count:
            break
        best = max(pair_count.items(), key=lambda kv: (kv[1], kv[0]))[0]
        merges.append(best)
        a, b = best
        for i in sorted(where.pop(best)):
            w = words[i]
            for p in zip(w, w[1:]):
                pair_count[p] -= counts[i]
                if pair_count[p] == 0:
                    del pair_count[p]
            merged, j = [], 0
            while j < len(w):
                if j + 1 < len(w) and w[j] == a and w[j + 1] == b:
                    merged.append(a + b)
                    j += 2
                else:
                    merged.append(w[j])
                    j += 1
            words[i] = merged
            for p in zip(merged, merged[1:]):
                pair_count[p] += counts[i]
                where[p].add(i)
        pair_count.pop(best, None)
    return merges


class Bpe:
    """GPT-2's encoder: merge the lowest-ranked pair until none is left."""

    def __init__(self, merges):
        self.ranks = {p: r for r, p in enumerate(merges)}
        symbols = list(BYTE_ENCODER.values())  # ids 0–255 in GPT-2's order
        self.vocab = {s: i for i, s in enumerate(symbols)}
        for a, b in merges:
            self.vocab[a + b] = len(self.vocab)
        self.vocab[EOS] = len(self.vocab)
        self.eos = self.vocab[EOS]
        self.id_to_token = {i: s for s, i in self.vocab.items()}
        self.byte_decoder = {c: b for b, c in BYTE_ENCODER.items()}
        self.cache = {}

    def bpe(self, piece):
        if piece in self.cache:
            return self.cache[piece]
        word = list(piece)
        while len(word) > 1:
            pair = min(zip(word, word[1:]), key=lambda p: self.ranks.get(p, math.inf))
            if pair not in self.ranks:
                break
            merged, j = [], 0
            while j < len(word):
                if j + 1 < len(word) and word[j] == pair[0] and word[j + 1] == pair[1]:
                    merged.append(pair[0] + pair[1])
                    j += 2
                else:
                    merged.append(word[j])
                    j += 1
            word = merged
        self.cache[piece] = word
        return word

    def encode(self, text):
        return [self.vocab[s] for p in pieces(text) for s in self.bpe(p)]

    def display(self, i):
        if i == self.eos:
            return EOS
        return bytes(self.byte_decoder[c] for c in self.id_to_token[i]).decode("latin-1")

    def write(self, folder, merges):
        with open(os.path.join(folder, "vocab.json"), "w", encoding="utf-8") as f:
            json.dump(self.vocab, f, ensure_ascii=False, separators=(",", ":"))
        with open(os.path.join(folder, "merges.txt"), "w", encoding="utf-8") as f:
            f.write("#version: 0.2\n")
            for a, b in merges:
                f.write(f"{a} {b}\n")


# ---------------------------------------------------------------------------
# [SECTION] GPT-2 (Radford et al. 2019) with Hugging Face's tensor names
# ---------------------------------------------------------------------------

class Conv1D(nn.Module):
    """y = x W + b with W stored [in, out], as HF's GPT-2 Conv1D."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_in, n_out))
        self.bias = nn.Parameter(torch.zeros(n_out))

    def forward(self, x):
        return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight).view(*x.shape[:-1], -1)


class Attention(nn.Module):
    def __init__(self, d, n_head, n_pos):
        super().__init__()
        self.n_head = n_head
        self.c_attn = Conv1D(d, 3 * d)
        self.c_proj = Conv1D(d, d)
        self.register_buffer("causal", torch.tril(torch.ones(n_pos, n_pos, dtype=torch.bool)), persistent=False)

    def forward(self, x, probs=None):
        B, L, d = x.shape
        dh = d // self.n_head
        # q, k, v = x W_attn + b_attn split in three       [B, h, L, dh] each
        q, k, v = (t.view(B, L, self.n_head, dh).transpose(1, 2) for t in self.c_attn(x).split(d, dim=2))
        # A = softmax(q kᵀ / √dh + causal mask)              [B, h, L, L]
        s = (q @ k.transpose(-2, -1)) / math.sqrt(dh)
        a = torch.softmax(s.masked_fill(~self.causal[:L, :L], float("-inf")), dim=-1)
        if probs is not None:
            probs.append(a)
        y = (a @ v).transpose(1, 2).reshape(B, L, d)        # [B, L, d]
        return self.c_proj(y)


class Mlp(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.c_fc = Conv1D(d, 4 * d)
        self.c_proj = Conv1D(4 * d, d)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))  # HF "gelu_new"


class Block(nn.Module):
    def __init__(self, d, n_head, n_pos, eps):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d, eps=eps)
        self.attn = Attention(d, n_head, n_pos)
        self.ln_2 = nn.LayerNorm(d, eps=eps)
        self.mlp = Mlp(d)

    def forward(self, x, probs=None):
        x = x + self.attn(self.ln_1(x), probs)  # pre-LN residual blocks
        return x + self.mlp(self.ln_2(x))


class Gpt2(nn.Module):
    """State dict names are those of HF GPT2LMHeadModel's stored checkpoints
    (wte.weight, h.0.attn.c_attn.weight, ...); lm_head is wte (tied)."""

    def __init__(self, vocab, d, n_layer, n_head, n_pos, eps):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(n_pos, d)
        self.h = nn.ModuleList(Block(d, n_head, n_pos, eps) for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(d, eps=eps)
        # GPT-2's init: N(0, 0.02), residual projections scaled by 1/√(2·n_layer).
        for name, p in self.named_parameters():
            if name.endswith("weight") and p.dim() == 2:
                std = 0.02 / math.sqrt(2 * n_layer) if name.endswith("c_proj.weight") else 0.02
                nn.init.normal_(p, 0.0, std)
        # The positions are learned, but start from the sinusoids of Vaswani et
        # al. (2017) at the same scale (std 0.02): a relative offset is then a
        # linear map from the start, and previous-token heads form within the
        # CPU budget instead of after the positions find that structure alone.
        pos = torch.arange(n_pos, dtype=torch.float32)[:, None]
        freq = torch.pow(10000.0, -torch.arange(0, d, 2, dtype=torch.float32) / d)[None]
        with torch.no_grad():
            self.wpe.weight[:, 0::2] = torch.sin(pos * freq) * 0.02 * math.sqrt(2)
            self.wpe.weight[:, 1::2] = torch.cos(pos * freq) * 0.02 * math.sqrt(2)

    def forward(self, ids, probs=None):
        pos = torch.arange(ids.shape[1])
        x = self.wte(ids) + self.wpe(pos)[None]
        for block in self.h:
            x = block(x, probs)
        hidden = self.ln_f(x)
        return hidden, hidden @ self.wte.weight.t()  # logits [B, L, vocab]


# ---------------------------------------------------------------------------
# [SECTION] Files: safetensors by hand, HF config
# ---------------------------------------------------------------------------

def write_safetensors(path, tensors, dtype, metadata=None):
    """8-byte little-endian header length, JSON header, then the raw data.
    `metadata`: strings for __metadata__ (the trained models' configuration)."""
    torch_dtype, name = {"F16": (torch.float16, "F16"), "F32": (torch.float32, "F32")}[dtype]
    header, blobs, offset = {}, [], 0
    for key in sorted(tensors):
        data = tensors[key].detach().to(torch_dtype).contiguous().numpy().tobytes()
        header[key] = {"dtype": name, "shape": list(tensors[key].shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = {"format": "pt", **{k: str(v) for k, v in (metadata or {}).items()}}
    head = json.dumps(header, separators=(",", ":")).encode("utf-8")
    head += b" " * (-len(head) % 8)  # data starts 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(head)))
        f.write(head)
        for b in blobs:
            f.write(b)


def config_json(a, vocab, eos):
    return {
        "architectures": ["GPT2LMHeadModel"],
        "model_type": "gpt2",
        "vocab_size": vocab,
        "n_layer": a.layers,
        "n_head": a.heads,
        "n_embd": a.d_model,
        "n_positions": a.positions,
        "n_ctx": a.positions,
        "n_inner": None,
        "layer_norm_epsilon": 1e-5,
        "activation_function": "gelu_new",
        "initializer_range": 0.02,
        "resid_pdrop": 0.0,
        "embd_pdrop": 0.0,
        "attn_pdrop": 0.0,
        "bos_token_id": eos,
        "eos_token_id": eos,
        "tie_word_embeddings": True,
        "torch_dtype": "float16",
    }


# ---------------------------------------------------------------------------
# [SECTION] Head summaries, exactly as engine/model/blocks/head_metrics.h defines them
# ---------------------------------------------------------------------------

def attention_maps(model, ids):
    """[layers, heads, L, L] for one sequence."""
    probs = []
    with torch.no_grad():
        model(torch.tensor([ids]), probs)
    return torch.stack([p[0] for p in probs]).double()


def summaries(A):
    """previous-token, sink, mean distance and entropy per head from [layers, heads, L, L]."""
    L = A.shape[-1]
    i = torch.arange(L)
    dist = (i[:, None] - i[None, :]).abs().double()
    previous = A[..., i[1:], i[1:] - 1].mean(-1)                     # mean over i ≥ 1 of A[i, i−1]
    sink = A[..., :, 0].mean(-1)                                     # mean over i of A[i, 0]
    distance = (A * dist).sum(-1).mean(-1)                           # mean over i of Σ_j A[i, j]·|i − j|
    entropy = -(A * torch.log(A.clamp_min(1e-300))).sum(-1).mean(-1)  # 0·ln 0 = 0, in nats
    return previous, sink, distance, entropy


def induction(A, T):
    """On t₁…t_T t₁…t_T: mean over the second copy (i = T … 2T−1) of A[i, i−T+1]."""
    i = torch.arange(T, 2 * T)
    return A[..., i, i - T + 1].mean(-1)


class Mt19937_64:
    """std::mt19937_64, whose output C++11 fixes: the generator of the engine's repeatedRandomIds."""

    M = (1 << 64) - 1

    def __init__(self, seed):
        self.mt = [seed & self.M]
        for i in range(1, 312):
            self.mt.append((6364136223846793005 * (self.mt[-1] ^ (self.mt[-1] >> 62)) + i) & self.M)
        self.i = 312

    def __call__(self):
        if self.i == 312:
            mt = self.mt
            for k in range(312):
                y = (mt[k] & ~0x7FFFFFFF & self.M) | (mt[(k + 1) % 312] & 0x7FFFFFFF)
                mt[k] = mt[(k + 156) % 312] ^ (y >> 1) ^ (0xB5026F5AA96619E9 if y & 1 else 0)
            self.i = 0
        y = self.mt[self.i]
        self.i += 1
        y ^= (y >> 29) & 0x5555555555555555
        y ^= (y << 17) & 0x71D67FFFEDA60000
        y ^= (y << 37) & 0xFFF7EEE000000000
        return y ^ (y >> 43)


def repeated_random_ids(vocab, eos, T, seed):
    """engine/model/blocks/head_metrics.cpp's repeatedRandomIds(m, T, seed): T ids
    mt19937_64() % vocab skipping the special token, then the same T again."""
    rng, half = Mt19937_64(seed), []
    while len(half) < T:
        i = rng() % vocab
        if i != eos:
            half.append(i)
    return half + half


# ---------------------------------------------------------------------------
# [SECTION] Training
# ---------------------------------------------------------------------------

def batch(train, length, rows, a, vocab, gen):
    """`rows` windows of length + 1 tokens at seeded random offsets. Of them, a
    fraction a.random_frac is T random ids tiled (t₁…t_T t₁…t_T …, T from 8 to
    half the window) and a fraction a.copy_frac is text that repeats itself:
    half of those a text span of T tokens tiled, half a text span copied
    further on in the window. The rest is plain text. Repeats are only
    predictable by copying from the previous occurrence: the task of an
    induction head (Olsson et al. 2022), which needs a previous-token head in
    the layer below."""
    n = length + 1
    starts = torch.randint(0, len(train) - n, (rows,), generator=gen)
    x = torch.stack([train[s:s + n] for s in starts.tolist()])
    for r in range(rows):
        u = torch.rand((), generator=gen).item()
        if u >= a.random_frac + a.copy_frac:
            continue
        T = int(torch.randint(8, n // 2 + 1, (), generator=gen))
        if u < a.random_frac:
            x[r] = torch.randint(0, vocab - 1, (T,), generator=gen).repeat(n // T + 1)[:n]
        elif torch.rand((), generator=gen).item() < 0.5:
            x[r] = x[r, :T].repeat(n // T + 1)[:n]
        else:
            p1 = int(torch.randint(0, n - 2 * T + 1, (), generator=gen))
            p2 = int(torch.randint(p1 + T, n - T + 1, (), generator=gen))
            x[r, p2:p2 + T] = x[r, p1:p1 + T]
    return x[:, :-1], x[:, 1:]


def evaluate(model, val, positions):
    """Mean next-token cross-entropy over consecutive held-out windows."""
    n = (len(val) - 1) // positions
    total, count = 0.0, 0
    with torch.no_grad():
        for s in range(0, n, 16):
            rows = range(s, min(n, s + 16))
            x = torch.stack([val[r * positions:(r + 1) * positions] for r in rows])
            y = torch.stack([val[r * positions + 1:(r + 1) * positions + 1] for r in rows])
            _, logits = model(x)
            total += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), reduction="sum").item()
            count += y.numel()
    return total / count


HEAD_RUNS, INDUCTION_T = 8, 50


def head_table(model, val, positions, vocab, eos):
    """[layers, heads] previous-token, sink, mean distance, entropy (mean of
    HEAD_RUNS held-out windows of `positions` tokens) and induction (mean over
    seeds 0…HEAD_RUNS−1 of repeatedRandomIds with T = INDUCTION_T)."""
    stride = (len(val) - positions) // HEAD_RUNS
    parts = [summaries(attention_maps(model, val[r * stride:r * stride + positions].tolist())) for r in range(HEAD_RUNS)]
    previous, sink, distance, entropy = (torch.stack([pp[k] for pp in parts]).mean(0) for k in range(4))
    ind = torch.stack([induction(attention_maps(model, repeated_random_ids(vocab, eos, INDUCTION_T, seed)), INDUCTION_T)
                       for seed in range(HEAD_RUNS)]).mean(0)
    return previous, sink, distance, entropy, ind


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--vocab", type=int, default=2048, help="vocabulary size: 256 bytes + merges + <|endoftext|>")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--d-model", type=int, default=128)
    p.add_argument("--positions", type=int, default=256)
    p.add_argument("--window", type=int, default=128, help="training window of most steps (see --long-every)")
    p.add_argument("--long-every", type=int, default=4,
                   help="every this many steps one batch of half as many windows of --positions tokens, "
                        "so that positions --window…--positions−1 are trained too")
    p.add_argument("--batch", type=int, default=16, help="windows of --window tokens per step")
    p.add_argument("--steps", type=int, default=8000, help="length of the learning-rate schedule")
    p.add_argument("--lr", type=float, default=1.5e-3)
    p.add_argument("--weight-decay", type=float, default=0.01)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--random-frac", type=float, default=0.3, help="fraction of windows that are random ids tiled")
    p.add_argument("--copy-frac", type=float, default=0.3, help="fraction of windows that are text repeating itself")
    p.add_argument("--eval-every", type=int, default=200)
    p.add_argument("--want-previous", type=float, default=0.5, help="early stop: a head's previous-token score at least this")
    p.add_argument("--want-induction", type=float, default=0.3, help="early stop: a head's induction score at least this")
    p.add_argument("--patience", type=int, default=5,
                   help="early stop: both heads are there and the probe loss fell less than --min-delta "
                        "over this many evaluations")
    p.add_argument("--min-delta", type=float, default=0.02)
    p.add_argument("--stop-at", type=int, default=0,
                   help="stop after this many steps (the schedule stays that of --steps): "
                        "reproduces a run that was cut by --max-seconds")
    p.add_argument("--max-seconds", type=float, default=0, help="wall-clock budget of the training loop (0: none)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--dtype", choices=["F16", "F32"], default="F16")
    p.add_argument("--out", default=os.path.join(ROOT, "assets", "model"))
    p.add_argument("--crosscheck", default=os.path.join(ROOT, "tests", "data", "default_model_forward.json"))
    p.add_argument("--bench", type=int, default=0, help="time this many training steps and exit")
    a = p.parse_args()

    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    t0 = time.time()

    chapters = read_kjv()
    train_text = [c for i, c in enumerate(chapters) if i % 20 != 19]
    val_text = [c for i, c in enumerate(chapters) if i % 20 == 19]
    print(f"corpus: KJV (bible-kjv-text), {len(chapters)} chapters, {sum(map(len, chapters)):,} characters; "
          f"{len(val_text)} chapters held out ({sum(map(len, val_text)):,} characters)", flush=True)

    merges = train_bpe(train_text, a.vocab - 257)
    tok = Bpe(merges)
    vocab = len(tok.vocab)
    assert vocab == a.vocab, vocab
    print(f"tokenizer: {vocab} tokens ({len(merges)} merges) in {time.time() - t0:.0f} s", flush=True)

    def stream(texts):  # chapters separated by <|endoftext|>, as GPT-2 separates documents
        ids = []
        for t in texts:
            ids += tok.encode(t) + [tok.eos]
        return torch.tensor(ids)

    train, val = stream(train_text), stream(val_text)
    print(f"tokens: {len(train):,} train, {len(val):,} validation "
          f"({sum(map(len, train_text)) / len(train):.2f} characters per token)", flush=True)

    model = Gpt2(vocab, a.d_model, a.layers, a.heads, a.positions, 1e-5)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model: {a.layers} layers x {a.heads} heads, d={a.d_model}, positions {a.positions}, "
          f"{n_params:,} parameters", flush=True)

    decay = [p for n, p in model.named_parameters() if p.dim() == 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": a.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=a.lr, betas=(0.9, 0.95))
    gen = torch.Generator().manual_seed(a.seed)
    steps = a.bench or a.steps
    last = min(steps, a.stop_at or steps)
    probe = val[:32 * a.positions + 1]  # the held-out windows the early stop watches
    # The checkpoint kept: the first one with both heads, then the lowest probe
    # loss among those; before that, the one closest to both bars.
    best, best_key, history, stop = None, None, [], "schedule"
    t_train = time.time()
    for step in range(last):
        # linear warm-up, then cosine decay to 10 %
        lr = a.lr * (step + 1) / a.warmup if step < a.warmup else \
            a.lr * (0.1 + 0.45 * (1 + math.cos(math.pi * (step - a.warmup) / max(1, steps - a.warmup))))
        for g in opt.param_groups:
            g["lr"] = lr
        long = step % a.long_every == a.long_every - 1
        length, rows = (a.positions, a.batch * a.window // a.positions) if long else (a.window, a.batch)
        x, y = batch(train, length, rows, a, vocab, gen)
        _, logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        done = step + 1 == last
        if (step + 1) % a.eval_every and not done:
            continue
        # Watch the heads form, with the very summaries the table reports.
        previous, _, _, _, ind = head_table(model, val, a.positions, vocab, tok.eos)
        prev, indu = previous.max().item(), ind.max().item()
        val_probe = evaluate(model, probe, a.positions)
        both = prev >= a.want_previous and indu >= a.want_induction
        key = (1, -val_probe) if both else (0, min(prev / a.want_previous, indu / a.want_induction))
        kept = best_key is None or key > best_key
        if kept:
            best_key, best = key, {k: v.clone() for k, v in model.state_dict().items()}
            best_step = step + 1
        history.append(val_probe)
        elapsed = time.time() - t_train
        print(f"step {step + 1:5d}  loss {loss.item():.3f}  lr {lr:.2e}  best previous-token {prev:.3f}  "
              f"best induction {indu:.3f}  probe loss {val_probe:.3f}  {elapsed:.0f} s{'  kept' if kept else ''}",
              flush=True)
        if a.bench:
            continue
        if both and len(history) > a.patience and history[-1 - a.patience] - min(history[-a.patience:]) < a.min_delta:
            stop = f"early stop (probe loss fell < {a.min_delta} over {a.patience} evaluations)"
            break
        if a.max_seconds and elapsed > a.max_seconds and not done:
            stop = f"time budget ({a.max_seconds:.0f} s): reproduce with --stop-at {step + 1}"
            break
    if a.bench:
        print(f"{(time.time() - t_train) / a.bench:.3f} s/step (with evaluations)")
        return
    print(f"stopped after step {step + 1} of {steps}: {stop}; keeping step {best_step}; "
          f"{time.time() - t_train:.0f} s of training", flush=True)
    model.load_state_dict(best)

    # The shipped weights are F16: round them, and measure what the engine will load.
    with torch.no_grad():
        for t in model.state_dict().values():
            if t.is_floating_point():
                t.copy_(t.to({"F16": torch.float16, "F32": torch.float32}[a.dtype]).float())
    model.eval()
    val_loss = evaluate(model, val, a.positions)
    print(f"validation: loss {val_loss:.4f} nats/token, perplexity {math.exp(val_loss):.2f}", flush=True)

    # Head summaries: previous-token, sink, distance, entropy on held-out text
    # (each of HEAD_RUNS windows of `positions` tokens is one run; the table is
    # their mean); induction on 2·T ids, T = 50 seeded random ids repeated.
    previous, sink, distance, entropy, ind = head_table(model, val, a.positions, vocab, tok.eos)
    heads = []
    print("layer head  previous  sink   induction  distance  entropy")
    for l in range(a.layers):
        for h in range(a.heads):
            row = {"layer": l, "head": h, "previous_token": round(previous[l, h].item(), 4),
                   "sink": round(sink[l, h].item(), 4), "induction": round(ind[l, h].item(), 4),
                   "mean_distance": round(distance[l, h].item(), 3), "entropy": round(entropy[l, h].item(), 4)}
            heads.append(row)
            print(f"{l:5d} {h:4d}  {row['previous_token']:8.3f}  {row['sink']:5.3f}  {row['induction']:9.3f}  "
                  f"{row['mean_distance']:8.2f}  {row['entropy']:7.3f}")
    runs, T = HEAD_RUNS, INDUCTION_T

    os.makedirs(a.out, exist_ok=True)
    tok.write(a.out, merges)
    state = {k: v for k, v in model.state_dict().items()}
    write_safetensors(os.path.join(a.out, "model.safetensors"), state, a.dtype)
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(config_json(a, vocab, tok.eos), f, indent=2)
        f.write("\n")
    scores = {
        "comment": "Head summaries of the default model, with the definitions of engine/model/blocks/head_metrics.h. "
                   f"previous_token, sink, mean_distance and entropy: mean of {runs} runs on held-out KJV windows "
                   f"of {a.positions} tokens; induction: mean of {runs} runs on repeatedRandomIds(model, T={T}, "
                   f"seed) for seed 0…{runs - 1} (2T tokens, mt19937_64 as in engine/model/blocks/head_metrics.cpp). Written by scripts/train_default_model.py.",
        "seed": a.seed,
        "steps": best_step,
        "validation_loss": round(val_loss, 4),
        "validation_perplexity": round(math.exp(val_loss), 3),
        "induction_T": T,
        "heads": heads,
    }
    with open(os.path.join(a.out, "head_scores.json"), "w") as f:
        json.dump(scores, f, indent=1)
        f.write("\n")

    write_crosscheck(model, tok, a.crosscheck)
    print(f"wrote {a.out} ({sum(os.path.getsize(os.path.join(a.out, n)) for n in os.listdir(a.out)):,} bytes) "
          f"and {a.crosscheck}; {time.time() - t0:.0f} s in all", flush=True)


# ---------------------------------------------------------------------------
# [SECTION] Cross-check data for the C++ forward pass
# ---------------------------------------------------------------------------

CROSSCHECK_TEXT = "The Lord is my shepherd; I shall not want. The Lord is my shepherd; I shall not want."


def write_crosscheck(model, tok, path):
    ids = tok.encode(CROSSCHECK_TEXT)
    probs = []
    with torch.no_grad():
        hidden, logits = model(torch.tensor([ids]), probs)
    A = torch.stack([p[0] for p in probs])  # [layers, heads, L, L]
    L = len(ids)
    data = {
        "comment": "The default model (assets/model) on one sentence, computed by scripts/train_default_model.py "
                   "in torch float32 from the stored weights: the C++ forward pass must match.",
        "text": CROSSCHECK_TEXT,
        "ids": ids,
        "tokens": [tok.display(i) for i in ids],
        "attention_last_row": [[[round(x, 6) for x in A[l, h, L - 1].tolist()] for h in range(A.shape[1])]
                               for l in range(A.shape[0])],  # [layer][head][L]: the last query's weights
        "hidden_row_sums": [round(x, 5) for x in hidden[0].sum(-1).tolist()],        # Σ over d of ln_f output
        "hidden_row_abs_sums": [round(x, 5) for x in hidden[0].abs().sum(-1).tolist()],
        "argmax_next": logits[0].argmax(-1).tolist(),
    }
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()

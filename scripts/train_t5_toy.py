#!/usr/bin/env python3
"""Trains a tiny T5 on a toy translation, English into a made-up French-like
language, and writes it in Hugging Face transformers' on-disk layout (the
folder save_pretrained gives a T5ForConditionalGeneration) as
assets/trained/t5-toy/, with tests/data/t5_toy_expected.json, the torch
model's translations and one teacher-forced pass for the C++ engine
(engine/model/families/t5.cpp) to reproduce.

The task, word for word through LEXICON, with two reorderings, so that the
cross-attention does not simply run down the diagonal:
  adjectives follow the noun, two of them mirrored:
    "the big red cat"    → "le chat rouge grand"
  an adverb before the verb moves after it:
    "the dog often sees" → "le chien voit souvent"
Grammar: sentence = NP [adverb] verb, the verb intransitive (NP verb) or
transitive (NP verb NP), then optionally "and" NP or a preposition and NP;
NP = determiner, 0–2 distinct adjectives, noun. Sentences of 3–10 words.

The model is transformers' modeling_t5.py in plain torch (no transformers
here), with its parameter names:
  RMS(x; w) = x / √(mean(x²) + ε) · w          T5LayerNorm: no mean, no bias
  encoder:  x = shared[src];  per block  x += SelfAttn(RMS(x)), x += FF(RMS(x));  RMS(x; final_layer_norm)
  decoder:  y = shared[tgt];  per block  y += SelfAttn(RMS(y)) (causal), y += CrossAttn(RMS(y), encoder),
            y += FF(RMS(y));  RMS(y; final_layer_norm)
  Attn: softmax(q kᵀ + B) v, no 1/√d_kv; B the learned bias per head of the
        offset's bucket (block 0's table, shared by the stack; bidirectional in the
        encoder, causal in the decoder; none in cross-attention)
  FF: relu(x wiᵀ) woᵀ;  logits = y · d_model^-0.5 sharedᵀ (tied)
  decoder input = decoder_start_token_id (0, <pad>) then the target; labels: the target then </s>
The initialisation is T5PreTrainedModel._init_weights' (initializer_factor 1),
dropout_rate applies in training as in transformers.

Training: fresh random sentences every batch, minus the held-out ones
(--eval-sentences drawn from a generator seeded apart, and the examples of
EXAMPLES); Adam, a linear warm-up; every --eval-every steps greedy decoding
of the held-out set, stopping once it has been exactly right (every word of
every sentence, and </s>) --patience times in a row.

Outputs:
  assets/trained/t5-toy/config.json        T5Config as save_pretrained writes it
  assets/trained/t5-toy/generation_config.json
  assets/trained/t5-toy/model.safetensors  F32; the state_dict's names, the tied
      embedding once as shared.weight (as save_pretrained drops tied copies);
      __metadata__ format pt
  assets/trained/t5-toy/tokenizer.json     T5's layout: Unigram, one piece "▁word" per
      word scored log(frequency), <pad> 0, </s> 1, <unk> 2; WhitespaceSplit +
      Metaspace; the template "$A </s>"
  assets/trained/t5-toy/examples/text.txt  the source the model opens on where no text is
      given (EXAMPLE_TEXT: both reorderings, held out from training)
  tests/data/t5_toy_expected.json          EXAMPLES' greedy translations (text and ids);
      for the first, the teacher-forced cross-attention of the last decoder
      layer [heads, T, S] and the encoder output after its final norm [S, d_model]

Reproducible: --seed drives the initialisation and the data; with the same
torch build and --threads the weights come out bit-identical.
"""

import argparse
import json
import math
import os
import random
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from train_default_model import write_safetensors  # noqa: E402

LEXICON = {
    "det": {"the": "le", "a": "un", "this": "ce", "every": "chaque"},
    "noun": {"cat": "chat", "dog": "chien", "bird": "oiseau", "horse": "cheval", "fish": "poisson",
             "mouse": "souris", "man": "homme", "woman": "femme", "child": "enfant", "king": "roi",
             "house": "maison", "tree": "arbre"},
    "adj": {"red": "rouge", "big": "grand", "small": "petit", "black": "noir", "white": "blanc",
            "old": "vieux", "young": "jeune", "happy": "heureux", "green": "vert", "sad": "triste"},
    "verb_t": {"sees": "voit", "likes": "aime", "follows": "suit", "finds": "trouve", "eats": "mange",
               "hears": "entend", "watches": "regarde", "helps": "aide", "calls": "appelle", "loves": "adore"},
    "verb_i": {"sleeps": "dort", "runs": "court"},
    "adv": {"often": "souvent", "slowly": "lentement", "quickly": "vite"},
    "prep": {"with": "avec", "near": "pres", "under": "sous", "in": "dans"},
    "and": {"and": "et"},
}
SPECIALS = ["<pad>", "</s>", "<unk>"]  # ids 0, 1, 2 as in T5
PAD, EOS = 0, 1
MAX_WORDS = 10

# Held out from training; the cross-check's sentences, the first also its teacher-forced pass.
EXAMPLES = [
    "the red cat sees a big dog",
    "the big red cat sleeps",
    "a small bird often watches the old horse",
    "every young child likes this green tree",
    "the king finds a fish near the house",
    "this woman helps the man and the child",
    "the dog runs",
    "a happy mouse slowly eats the white fish",
]
EXAMPLE_TEXT = EXAMPLES[2]  # an adjective after its noun and an adverb after its verb


# [SECTION] The task
def noun_phrase(rng):
    """The words of det adj{0,2} noun, the adjectives distinct."""
    det = rng.choice(list(LEXICON["det"]))
    adjs = rng.sample(list(LEXICON["adj"]), rng.choices([0, 1, 2], [0.45, 0.35, 0.2])[0])
    return [det] + adjs + [rng.choice(list(LEXICON["noun"]))]


def translate_word(word):
    return next(t[word] for t in LEXICON.values() if word in t)


def translate(english):
    """The target of an English sentence of the grammar, by the rules above."""
    words, out, i = english.split(), [], 0
    kind = {w: k for k, t in LEXICON.items() for w in t}
    while i < len(words):
        if kind[words[i]] == "det":
            j = i + 1
            while kind[words[j]] == "adj":
                j += 1
            out += [translate_word(words[i]), translate_word(words[j])] + [translate_word(w) for w in words[i + 1:j][::-1]]
            i = j + 1
        elif kind[words[i]] == "adv":
            out += [translate_word(words[i + 1]), translate_word(words[i])]
            i += 2
        else:
            out.append(translate_word(words[i]))
            i += 1
    return " ".join(out)


def sentence(rng):
    """One random English sentence of the grammar (3–10 words)."""
    while True:
        words = noun_phrase(rng)
        verb_t = rng.random() < 0.8
        if rng.random() < 0.25:
            words.append(rng.choice(list(LEXICON["adv"])))
        words.append(rng.choice(list(LEXICON["verb_t" if verb_t else "verb_i"])))
        if verb_t:
            words += noun_phrase(rng)
        tail = rng.random()
        if tail < 0.15:
            words += ["and"] + noun_phrase(rng)
        elif tail < 0.4:
            words += [rng.choice(list(LEXICON["prep"]))] + noun_phrase(rng)
        if len(words) <= MAX_WORDS:
            return " ".join(words)


class Vocab:
    """The specials, then one piece "▁word" per English and target word, scored
    log(frequency) over a sample of the task (the Unigram model's log-probabilities)."""

    def __init__(self, rng, sample=20000):
        words = [w for t in LEXICON.values() for w in t] + [w for t in LEXICON.values() for w in t.values()]
        self.words = list(dict.fromkeys(words))
        counts = {w: 1 for w in self.words}
        for _ in range(sample):
            s = sentence(rng)
            for w in s.split() + translate(s).split():
                counts[w] += 1
        total = sum(counts.values())
        self.scores = [math.log(counts[w] / total) for w in self.words]
        self.ids = {w: len(SPECIALS) + i for i, w in enumerate(self.words)}
        self.pieces = SPECIALS + ["▁" + w for w in self.words]

    def encode(self, text):
        return [self.ids[w] for w in text.split()]

    def decode(self, ids):
        return " ".join(self.pieces[i][1:] for i in ids if i >= len(SPECIALS))


def batch_tensors(pairs, vocab):
    """Source ids (+ </s>), decoder input (0 + target) and labels (target + </s>, pad → -100), padded."""
    src = [vocab.encode(s) + [EOS] for s, _ in pairs]
    tgt = [vocab.encode(t) for _, t in pairs]
    S, T = max(map(len, src)), max(map(len, tgt)) + 1
    src_t = torch.full((len(pairs), S), PAD)
    dec_in = torch.full((len(pairs), T), PAD)
    labels = torch.full((len(pairs), T), -100)
    for b, (s, t) in enumerate(zip(src, tgt)):
        src_t[b, :len(s)] = torch.tensor(s)
        dec_in[b, :len(t) + 1] = torch.tensor([PAD] + t)
        labels[b, :len(t) + 1] = torch.tensor(t + [EOS])
    return src_t, dec_in, labels


# [SECTION] T5 (transformers' modeling_t5.py)
def relative_position_bucket(relative_position, bidirectional, num_buckets, max_distance):
    """T5Attention._relative_position_bucket."""
    buckets = 0
    if bidirectional:
        num_buckets //= 2
        buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    if_large = max_exact + (torch.log(relative_position.float() / max_exact) / math.log(max_distance / max_exact)
                            * (num_buckets - max_exact)).to(torch.long)
    if_large = torch.min(if_large, torch.full_like(if_large, num_buckets - 1))
    return buckets + torch.where(is_small, relative_position, if_large)


class T5LayerNorm(nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class T5Attention(nn.Module):
    def __init__(self, c, is_decoder, has_relative_attention_bias):
        super().__init__()
        self.c, self.is_decoder = c, is_decoder
        inner = c["num_heads"] * c["d_kv"]
        self.q = nn.Linear(c["d_model"], inner, bias=False)
        self.k = nn.Linear(c["d_model"], inner, bias=False)
        self.v = nn.Linear(c["d_model"], inner, bias=False)
        self.o = nn.Linear(inner, c["d_model"], bias=False)
        if has_relative_attention_bias:
            self.relative_attention_bias = nn.Embedding(c["relative_attention_num_buckets"], c["num_heads"])

    def compute_bias(self, q_len, k_len):
        """[1, heads, q_len, k_len]: the table's entry for bucket(j − i)."""
        relative = torch.arange(k_len)[None, :] - torch.arange(q_len)[:, None]
        bucket = relative_position_bucket(relative, not self.is_decoder, self.c["relative_attention_num_buckets"],
                                          self.c["relative_attention_max_distance"])
        return self.relative_attention_bias(bucket).permute(2, 0, 1).unsqueeze(0)

    def forward(self, x, kv, bias, dropout):
        """x [B, T, d], kv [B, S, d], bias [B or 1, heads, T, S] (masks included) → output, weights."""
        B, T, _ = x.shape
        H, dk = self.c["num_heads"], self.c["d_kv"]

        def heads(t):
            return t.view(B, -1, H, dk).transpose(1, 2)

        scores = heads(self.q(x)) @ heads(self.k(kv)).transpose(2, 3) + bias  # no 1/√d_kv
        weights = torch.softmax(scores.float(), dim=-1)
        out = F.dropout(weights, dropout, self.training) @ heads(self.v(kv))
        return self.o(out.transpose(1, 2).reshape(B, T, H * dk)), weights


class T5Block(nn.Module):
    """block.{i}.layer: 0 SelfAttention, (decoder) 1 EncDecAttention, last DenseReluDense, each with its layer_norm."""

    def __init__(self, c, is_decoder, first):
        super().__init__()
        self.dropout = c["dropout_rate"]
        self.layer = nn.ModuleList([nn.Module() for _ in range(3 if is_decoder else 2)])
        self.layer[0].SelfAttention = T5Attention(c, is_decoder, first)
        if is_decoder:
            self.layer[1].EncDecAttention = T5Attention(c, True, False)
        ff = self.layer[-1].DenseReluDense = nn.Module()
        ff.wi = nn.Linear(c["d_model"], c["d_ff"], bias=False)
        ff.wo = nn.Linear(c["d_ff"], c["d_model"], bias=False)
        for sub in self.layer:
            sub.layer_norm = T5LayerNorm(c["d_model"], c["layer_norm_epsilon"])

    def forward(self, x, self_bias, memory=None, cross_bias=None):
        drop = lambda t: F.dropout(t, self.dropout, self.training)  # noqa: E731
        sub = self.layer[0]
        normed = sub.layer_norm(x)
        out, _ = sub.SelfAttention(normed, normed, self_bias, self.dropout)
        x = x + drop(out)
        cross_w = None
        if memory is not None:
            sub = self.layer[1]
            out, cross_w = sub.EncDecAttention(sub.layer_norm(x), memory, cross_bias, self.dropout)
            x = x + drop(out)
        sub = self.layer[-1]
        h = drop(F.relu(sub.DenseReluDense.wi(sub.layer_norm(x))))
        x = x + drop(sub.DenseReluDense.wo(h))
        return x, cross_w


class T5Stack(nn.Module):
    def __init__(self, c, is_decoder):
        super().__init__()
        self.is_decoder, self.dropout = is_decoder, c["dropout_rate"]
        layers = c["num_decoder_layers"] if is_decoder else c["num_layers"]
        self.block = nn.ModuleList([T5Block(c, is_decoder, i == 0) for i in range(layers)])
        self.final_layer_norm = T5LayerNorm(c["d_model"], c["layer_norm_epsilon"])

    def forward(self, embed, ids, memory=None, memory_ids=None):
        """ids [B, L] → hidden [B, L, d] after the final norm, and each block's cross-attention weights."""
        L = ids.shape[1]
        neg = torch.finfo(torch.float32).min
        keep = (ids != PAD)[:, None, None, :]  # padding keys: attention_mask 0
        if self.is_decoder:  # a decoder attends to its own padding (<pad> starts every target) but causally
            keep = torch.ones(L, L, dtype=torch.bool).tril()[None, None]
        # block 0's relative bias with the mask, handed on to every block (modeling_t5's position_bias)
        self_bias = self.block[0].layer[0].SelfAttention.compute_bias(L, L).masked_fill(~keep, neg)
        cross_bias = None
        if memory is not None:
            cross_bias = torch.zeros(1, 1, 1, memory.shape[1]).masked_fill(~(memory_ids != PAD)[:, None, None, :], neg)
        x = F.dropout(embed(ids), self.dropout, self.training)
        cross = []
        for block in self.block:
            x, cross_w = block(x, self_bias, memory, cross_bias)
            cross.append(cross_w)
        return F.dropout(self.final_layer_norm(x), self.dropout, self.training), cross


class T5ForConditionalGeneration(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.shared = nn.Embedding(c["vocab_size"], c["d_model"])
        self.encoder = T5Stack(c, False)
        self.decoder = T5Stack(c, True)
        self.init_weights()

    def init_weights(self):
        """T5PreTrainedModel._init_weights with initializer_factor 1."""
        d, dk, H, ff = self.c["d_model"], self.c["d_kv"], self.c["num_heads"], self.c["d_ff"]
        nn.init.normal_(self.shared.weight, std=1.0)
        for m in self.modules():
            if isinstance(m, T5Attention):
                nn.init.normal_(m.q.weight, std=(d * dk) ** -0.5)
                nn.init.normal_(m.k.weight, std=d ** -0.5)
                nn.init.normal_(m.v.weight, std=d ** -0.5)
                nn.init.normal_(m.o.weight, std=(H * dk) ** -0.5)
                if hasattr(m, "relative_attention_bias"):
                    nn.init.normal_(m.relative_attention_bias.weight, std=d ** -0.5)
            elif hasattr(m, "DenseReluDense"):
                nn.init.normal_(m.DenseReluDense.wi.weight, std=d ** -0.5)
                nn.init.normal_(m.DenseReluDense.wo.weight, std=ff ** -0.5)

    def encode(self, src):
        return self.encoder(self.shared, src)[0]

    def decode(self, memory, src, dec_in):
        """Logits [B, T, V] and the cross-attention weights of each decoder block [B, heads, T, S]."""
        y, cross = self.decoder(self.shared, dec_in, memory, src)
        return (y * self.c["d_model"] ** -0.5) @ self.shared.weight.t(), cross

    def forward(self, src, dec_in):
        return self.decode(self.encode(src), src, dec_in)[0]

    @torch.no_grad()
    def greedy(self, src, max_new):
        """Greedy decoding from decoder_start_token_id until </s> (or max_new tokens): ids [B, ≤ max_new]."""
        memory = self.encode(src)
        out = torch.full((src.shape[0], 1), PAD)
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        for _ in range(max_new):
            nxt = self.decode(memory, src, out)[0][:, -1].argmax(-1)
            nxt = nxt.masked_fill(done, PAD)
            out = torch.cat([out, nxt[:, None]], 1)
            done |= nxt == EOS
            if done.all():
                break
        return out[:, 1:]


def generated(ids):
    """One row of greedy's output up to and including its </s>."""
    ids = ids.tolist()
    return ids[:ids.index(EOS) + 1] if EOS in ids else ids


def accuracy(model, pairs, vocab):
    """The share of sentences whose greedy translation is exactly right (words and </s>)."""
    model.eval()
    right = 0
    for i in range(0, len(pairs), 250):
        chunk = pairs[i:i + 250]
        src = batch_tensors(chunk, vocab)[0]
        for row, (_, t) in zip(model.greedy(src, MAX_WORDS + 2), chunk):
            right += generated(row) == vocab.encode(t) + [EOS]
    model.train()
    return right / len(pairs)


# [SECTION] The files
def config_json(a, vocab_size):
    """T5Config.to_json_string()'s fields for this model (transformers 4.x)."""
    return {
        "architectures": ["T5ForConditionalGeneration"],
        "classifier_dropout": 0.0,
        "d_ff": a.d_ff,
        "d_kv": a.d_kv,
        "d_model": a.d_model,
        "decoder_start_token_id": PAD,
        "dense_act_fn": "relu",
        "dropout_rate": a.dropout,
        "eos_token_id": EOS,
        "feed_forward_proj": "relu",
        "initializer_factor": 1.0,
        "is_encoder_decoder": True,
        "is_gated_act": False,
        "layer_norm_epsilon": 1e-06,
        "model_type": "t5",
        "num_decoder_layers": a.layers,
        "num_heads": a.heads,
        "num_layers": a.layers,
        "pad_token_id": PAD,
        "relative_attention_max_distance": 128,
        "relative_attention_num_buckets": 32,
        "tie_word_embeddings": True,
        "torch_dtype": "float32",
        "transformers_version": "4.46.3",
        "use_cache": True,
        "vocab_size": vocab_size,
    }


def tokenizer_json(vocab):
    """tokenizers' serialisation of a T5 tokenizer (as google-t5's tokenizer.json), without the normalizer."""
    metaspace = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}
    special = lambda i, s: {"id": i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,  # noqa: E731
                            "normalized": False, "special": True}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [special(i, s) for i, s in enumerate(SPECIALS)],
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, metaspace]},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "special_tokens": {"</s>": {"id": "</s>", "ids": [EOS], "tokens": ["</s>"]}},
        },
        "decoder": metaspace,
        "model": {
            "type": "Unigram",
            "unk_id": 2,
            "vocab": [[s, 0.0] for s in SPECIALS] + [[p, round(sc, 4)] for p, sc in zip(vocab.pieces[3:], vocab.scores)],
            "byte_fallback": False,
        },
    }


def write_json(path, data, indent=2):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=indent, ensure_ascii=False)
        f.write("\n")


def write_expected(model, vocab, path):
    """EXAMPLES' greedy translations; for the first, the teacher-forced pass of `model run --target`."""
    model.eval()
    data = {
        "comment": "assets/trained/t5-toy on held-out sentences, computed by scripts/train_t5_toy.py in torch float32 "
                   "from the stored weights: the C++ engine must generate the same ids and match the pass within 1e-4. "
                   "source_ids end with </s>; generated_ids are the greedy new tokens, </s> included; the pass runs "
                   "the decoder on target_ids (decoder_start_token_id, then the translation without </s>).",
        "examples": [],
    }
    with torch.no_grad():
        for s in EXAMPLES:
            src = torch.tensor([vocab.encode(s) + [EOS]])
            ids = generated(model.greedy(src, MAX_WORDS + 2)[0])
            data["examples"].append({"source": s, "source_ids": src[0].tolist(), "reference": translate(s),
                                     "translation": vocab.decode(ids), "generated_ids": ids})
        first = data["examples"][0]
        src = torch.tensor([first["source_ids"]])
        target = torch.tensor([[PAD] + vocab.encode(first["translation"])])
        memory = model.encode(src)
        cross = model.decode(memory, src, target)[1]
    rounded = lambda t: [[round(v, 6) for v in row] for row in t.tolist()]  # noqa: E731
    data["pass"] = {
        "source": first["source"],
        "target": first["translation"],
        "source_ids": first["source_ids"],
        "target_ids": target[0].tolist(),
        "cross_attention_last_layer": [rounded(h) for h in cross[-1][0]],
        "encoder_hidden": rounded(memory[0]),
    }
    write_json(path, data, indent=None)
    return data


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--d-model", type=int, default=64)
    p.add_argument("--d-kv", type=int, default=16)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--d-ff", type=int, default=256)
    p.add_argument("--layers", type=int, default=2, help="encoder and decoder blocks each")
    p.add_argument("--dropout", type=float, default=0.1, help="dropout_rate, in training")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--steps", type=int, default=6000, help="most training steps (batches)")
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--warmup", type=int, default=200)
    p.add_argument("--eval-every", type=int, default=250)
    p.add_argument("--eval-sentences", type=int, default=1000)
    p.add_argument("--patience", type=int, default=3,
                   help="stop after this many evaluations in a row with every held-out sentence right")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", default=os.path.join(ROOT, "assets", "trained", "t5-toy"))
    p.add_argument("--expected", default=os.path.join(ROOT, "tests", "data", "t5_toy_expected.json"))
    a = p.parse_args()

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    rng = random.Random(a.seed)
    vocab = Vocab(random.Random(0))
    held_rng = random.Random(10_000 + a.seed)
    held = list(dict.fromkeys(sentence(held_rng) for _ in range(a.eval_sentences)))
    held_out = set(held) | set(EXAMPLES)
    held_pairs = [(s, translate(s)) for s in held]

    c = {"d_model": a.d_model, "d_kv": a.d_kv, "num_heads": a.heads, "d_ff": a.d_ff, "num_layers": a.layers,
         "num_decoder_layers": a.layers, "vocab_size": len(vocab.pieces), "relative_attention_num_buckets": 32,
         "relative_attention_max_distance": 128, "layer_norm_epsilon": 1e-6, "dropout_rate": a.dropout}
    model = T5ForConditionalGeneration(c)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / a.warmup))
    start = time.time()
    streak, acc, step = 0, 0.0, 0
    for step in range(1, a.steps + 1):
        pairs = []
        while len(pairs) < a.batch:
            s = sentence(rng)
            if s not in held_out:
                pairs.append((s, translate(s)))
        src, dec_in, labels = batch_tensors(pairs, vocab)
        loss = F.cross_entropy(model(src, dec_in).flatten(0, 1), labels.flatten(), ignore_index=-100)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % a.eval_every == 0:
            acc = accuracy(model, held_pairs, vocab)
            streak = streak + 1 if acc == 1.0 else 0
            print(f"step {step}  loss {loss.item():.4f}  held-out exact {100 * acc:.1f} %  {time.time() - start:.0f} s",
                  flush=True)
            if streak >= a.patience:
                break
    seconds = time.time() - start
    acc = accuracy(model, held_pairs, vocab)
    print(f"trained {step} steps in {seconds:.0f} s; greedy exact on {len(held_pairs)} held-out sentences: "
          f"{100 * acc:.1f} %", flush=True)

    os.makedirs(a.out, exist_ok=True)
    write_json(os.path.join(a.out, "config.json"), config_json(a, len(vocab.pieces)))
    write_json(os.path.join(a.out, "generation_config.json"), {
        "decoder_start_token_id": PAD, "eos_token_id": EOS, "pad_token_id": PAD, "transformers_version": "4.46.3"})
    write_json(os.path.join(a.out, "tokenizer.json"), tokenizer_json(vocab))
    os.makedirs(os.path.join(a.out, "examples"), exist_ok=True)
    with open(os.path.join(a.out, "examples", "text.txt"), "w", encoding="utf-8") as f:
        f.write(EXAMPLE_TEXT + "\n")
    # The state_dict has the tied embedding once, as shared.weight, as save_pretrained writes it.
    write_safetensors(os.path.join(a.out, "model.safetensors"), model.state_dict(), "F32")
    data = write_expected(model, vocab, a.expected)
    for e in data["examples"]:
        print(f"  {e['source']}  →  {e['translation']}{'' if e['translation'] == e['reference'] else '  (WRONG)'}")
    print(f"wrote {a.out} and {a.expected}")


if __name__ == "__main__":
    main()

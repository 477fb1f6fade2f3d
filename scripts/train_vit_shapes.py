#!/usr/bin/env python3
"""Trains the tiny ViT picture classifier that AttnLab ships as
assets/trained/vit-shapes/, and writes tests/data/vit_shapes_expected.json,
the torch forward pass on its example pictures that the C++ engine
(engine/model/families/vit.cpp) must reproduce.

The model is ViTForImageClassification of transformers' models/vit/modeling_vit.py,
written out in plain torch (transformers is not needed) with its module and
tensor names:
  x = [cls_token; Conv2d(3, d, kernel = stride = patch)(pixels) flattened] + position_embeddings
  per layer:  x = x + attention(layernorm_before(x))       softmax(q kᵀ / √d_head), q, k, v with bias
              x = x + output(gelu(intermediate(layernorm_after(x))))   gelu: the exact (erf) one
  hidden = layernorm(x);  logits = classifier(hidden[CLS])
32 × 32 pictures in 4 × 4 patches (64 + [CLS] tokens), d 64, 4 layers of
4 heads, MLP 128, LayerNorm ε 1e-12.

The task: which shape a 128 × 128 picture shows, among circle, square,
triangle, plus, ring and star, drawn by Pillow at a random place, size,
rotation and colour over a background of one random colour with mild noise
and a few faint lines (distractors, never the answer). Each picture goes
through ViTImageProcessor's steps exactly as AttnLab applies them from
preprocessor_config.json: Image.resize((32, 32), BILINEAR), × 1/255,
(v − 0.5) / 0.5. Every batch is freshly drawn, so the model never sees a
picture twice; the held-out accuracy is on --eval-pictures pictures of
another seed.

Training: AdamW (lr 2e-3, weight decay 0.05), linear warm-up then cosine
decay, batch 128, gradients clipped to norm 1, no dropout (transformers' ViT
defaults: 0.0), the initialisation of ViTPreTrainedModel._init_weights
(truncated normal, std 0.02; LayerNorm 1, 0).

Outputs, in the layout transformers' save_pretrained writes:
  config.json               ViTConfig, sorted keys, with id2label and label2id
  model.safetensors         F32, ViTForImageClassification.state_dict() names
  preprocessor_config.json  ViTImageProcessor, 32 × 32, bilinear, mean = std = 0.5
  examples/NAME.png         one 128 × 128 picture per class, classified right with confidence
and the cross-check: per example, the top-3 labels with their probabilities;
for --attention-example, the last layer's attention of [CLS] over the
65 tokens per head and [CLS]'s final hidden state.

Run by scripts/train_vit_shapes.sh (Debian's python3-torch, python3-pil,
python3-numpy); reproducible from --seed with one thread.
"""

import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image, ImageDraw

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from train_default_model import write_safetensors  # noqa: E402

LABELS = ["circle", "square", "triangle", "plus", "ring", "star"]
CANVAS = 128
IMAGE, PATCH, HIDDEN, LAYERS, HEADS, FF, EPS = 32, 4, 64, 4, 4, 128, 1e-12


# [SECTION] Pictures
def polygon(cx, cy, radii, angle):
    """Vertices at the given radii, evenly around the centre, starting at `angle`."""
    n = len(radii)
    return [(cx + r * math.cos(angle + 2 * math.pi * i / n), cy + r * math.sin(angle + 2 * math.pi * i / n))
            for i, r in enumerate(radii)]


def draw_shape(draw, label, cx, cy, r, angle, colour):
    """One shape of circumradius r (pixels) about (cx, cy)."""
    if label == "circle":
        draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=colour)
    elif label == "ring":
        width = max(6, round(0.32 * r))
        draw.ellipse([cx - r, cy - r, cx + r, cy + r], outline=colour, width=width)
    elif label == "square":
        draw.polygon(polygon(cx, cy, [r] * 4, angle), fill=colour)
    elif label == "triangle":
        draw.polygon(polygon(cx, cy, [r] * 3, angle), fill=colour)
    elif label == "star":
        draw.polygon(polygon(cx, cy, [r, 0.42 * r] * 5, angle), fill=colour)
    elif label == "plus":
        h = 0.22 * r  # half the arm's thickness
        c, s = math.cos(angle), math.sin(angle)
        for dx, dy in ((r, h), (h, r)):
            corners = [(-dx, -dy), (dx, -dy), (dx, dy), (-dx, dy)]
            draw.polygon([(cx + x * c - y * s, cy + x * s + y * c) for x, y in corners], fill=colour)


def picture(rng, label):
    """A 128 × 128 RGB picture (uint8 [128, 128, 3]) of the shape `label`."""
    background = rng.integers(0, 256, 3)
    while True:  # a shape colour that stands out from the background
        colour = rng.integers(0, 256, 3)
        if np.abs(colour - background).sum() > 200:
            break
    img = Image.new("RGB", (CANVAS, CANVAS), tuple(int(v) for v in background))
    draw = ImageDraw.Draw(img)
    for _ in range(rng.integers(1, 4)):  # faint distractor lines
        tint = tuple(int(np.clip(v + rng.integers(-30, 31), 0, 255)) for v in background)
        draw.line([tuple(rng.integers(0, CANVAS, 2).tolist()), tuple(rng.integers(0, CANVAS, 2).tolist())],
                  fill=tint, width=int(rng.integers(1, 4)))
    r = rng.uniform(26, 46)
    cx, cy = rng.uniform(r + 2, CANVAS - r - 2, 2)
    draw_shape(draw, label, cx, cy, r, rng.uniform(0, 2 * math.pi), tuple(int(v) for v in colour))
    noise = rng.integers(-12, 13, (CANVAS, CANVAS, 3))
    return np.clip(np.asarray(img, dtype=np.int64) + noise, 0, 255).astype(np.uint8)


def pixel_values(rgb):
    """ViTImageProcessor: Pillow bilinear resize to 32 × 32, × 1/255 (float64, then float32),
    (v − 0.5) / 0.5; channels first.                                          [3, 32, 32]"""
    resized = np.asarray(Image.fromarray(rgb, "RGB").resize((IMAGE, IMAGE), resample=Image.BILINEAR, reducing_gap=None))
    values = (resized.astype(np.float64) * (1 / 255)).astype(np.float32)
    values = (values - np.float32(0.5)) / np.float32(0.5)
    return values.transpose(2, 0, 1).copy()


def batch(rng, n):
    labels = rng.integers(0, len(LABELS), n)
    x = np.stack([pixel_values(picture(rng, LABELS[k])) for k in labels])
    return torch.from_numpy(x), torch.from_numpy(labels)


# [SECTION] ViTForImageClassification
class SelfAttention(nn.Module):  # ViTSelfAttention
    def __init__(self):
        super().__init__()
        self.query, self.key, self.value = nn.Linear(HIDDEN, HIDDEN), nn.Linear(HIDDEN, HIDDEN), nn.Linear(HIDDEN, HIDDEN)

    def forward(self, x):
        B, T, _ = x.shape
        q, k, v = (f(x).view(B, T, HEADS, HIDDEN // HEADS).transpose(1, 2) for f in (self.query, self.key, self.value))
        probs = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(HIDDEN // HEADS), dim=-1)  # [B, heads, T, T]
        return (probs @ v).transpose(1, 2).reshape(B, T, HIDDEN), probs


class Dense(nn.Module):  # ViTSelfOutput, ViTIntermediate, ViTOutput: one .dense
    def __init__(self, n_in, n_out):
        super().__init__()
        self.dense = nn.Linear(n_in, n_out)


class Attention(nn.Module):  # ViTAttention
    def __init__(self):
        super().__init__()
        self.attention = SelfAttention()
        self.output = Dense(HIDDEN, HIDDEN)


class Layer(nn.Module):  # ViTLayer
    def __init__(self):
        super().__init__()
        self.attention = Attention()
        self.intermediate = Dense(HIDDEN, FF)
        self.output = Dense(FF, HIDDEN)
        self.layernorm_before = nn.LayerNorm(HIDDEN, eps=EPS)
        self.layernorm_after = nn.LayerNorm(HIDDEN, eps=EPS)

    def forward(self, x):
        context, probs = self.attention.attention(self.layernorm_before(x))
        x = x + self.attention.output.dense(context)
        x = x + self.output.dense(F.gelu(self.intermediate.dense(self.layernorm_after(x))))
        return x, probs


class PatchEmbeddings(nn.Module):  # ViTPatchEmbeddings
    def __init__(self):
        super().__init__()
        self.projection = nn.Conv2d(3, HIDDEN, kernel_size=PATCH, stride=PATCH)


class Embeddings(nn.Module):  # ViTEmbeddings
    def __init__(self):
        super().__init__()
        self.cls_token = nn.Parameter(torch.zeros(1, 1, HIDDEN))
        self.position_embeddings = nn.Parameter(torch.zeros(1, 1 + (IMAGE // PATCH) ** 2, HIDDEN))
        self.patch_embeddings = PatchEmbeddings()

    def forward(self, pixels):
        patches = self.patch_embeddings.projection(pixels).flatten(2).transpose(1, 2)  # [B, 64, d], raster order
        x = torch.cat([self.cls_token.expand(pixels.shape[0], -1, -1), patches], 1)
        return x + self.position_embeddings


class Encoder(nn.Module):  # ViTEncoder
    def __init__(self):
        super().__init__()
        self.layer = nn.ModuleList(Layer() for _ in range(LAYERS))


class ViTModel(nn.Module):  # without the pooler, as ViTForImageClassification builds it
    def __init__(self):
        super().__init__()
        self.embeddings = Embeddings()
        self.encoder = Encoder()
        self.layernorm = nn.LayerNorm(HIDDEN, eps=EPS)


class ViTForImageClassification(nn.Module):
    def __init__(self):
        super().__init__()
        self.vit = ViTModel()
        self.classifier = nn.Linear(HIDDEN, len(LABELS))
        for m in self.modules():  # ViTPreTrainedModel._init_weights
            if isinstance(m, (nn.Linear, nn.Conv2d)):
                nn.init.trunc_normal_(m.weight, std=0.02)
                nn.init.zeros_(m.bias)
        nn.init.trunc_normal_(self.vit.embeddings.cls_token, std=0.02)
        nn.init.trunc_normal_(self.vit.embeddings.position_embeddings, std=0.02)

    def forward(self, pixels):
        """pixels [B, 3, 32, 32] → logits [B, labels], final hidden [B, 65, d], attention per layer [B, heads, 65, 65]"""
        x = self.vit.embeddings(pixels)
        attention = []
        for layer in self.vit.encoder.layer:
            x, probs = layer(x)
            attention.append(probs)
        hidden = self.vit.layernorm(x)
        return self.classifier(hidden[:, 0]), hidden, attention


def accuracy(model, pictures, seed):
    rng = np.random.default_rng(seed)
    right = 0
    with torch.no_grad():
        for start in range(0, pictures, 500):
            x, y = batch(rng, min(500, pictures - start))
            right += int((model(x)[0].argmax(1) == y).sum())
    return right / pictures


# [SECTION] Files
def config_json():
    """ViTConfig as save_pretrained writes it (transformers 4.46: sorted keys, the ViT fields in full)."""
    return {
        "architectures": ["ViTForImageClassification"],
        "attention_probs_dropout_prob": 0.0,
        "encoder_stride": PATCH,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.0,
        "hidden_size": HIDDEN,
        "id2label": {str(i): name for i, name in enumerate(LABELS)},
        "image_size": IMAGE,
        "initializer_range": 0.02,
        "intermediate_size": FF,
        "label2id": {name: i for i, name in enumerate(LABELS)},
        "layer_norm_eps": EPS,
        "model_type": "vit",
        "num_attention_heads": HEADS,
        "num_channels": 3,
        "num_hidden_layers": LAYERS,
        "patch_size": PATCH,
        "pooler_act": "tanh",
        "pooler_output_size": HIDDEN,
        "qkv_bias": True,
        "torch_dtype": "float32",
        "transformers_version": "4.46.3",
    }


def preprocessor_json():
    return {
        "do_convert_rgb": None,
        "do_normalize": True,
        "do_rescale": True,
        "do_resize": True,
        "image_mean": [0.5, 0.5, 0.5],
        "image_processor_type": "ViTImageProcessor",
        "image_std": [0.5, 0.5, 0.5],
        "resample": 2,
        "rescale_factor": 1 / 255,
        "size": {"height": IMAGE, "width": IMAGE},
    }


def write_json(path, data):
    with open(path, "w") as f:
        json.dump(data, f, indent=2, sort_keys=True)
        f.write("\n")


def write_examples(model, folder, seed, candidates):
    """Per class, of `candidates` pictures, the one the model is surest of (and right): examples/NAME.png.
    Returns {name: pixel values of the PNG as saved}."""
    rng = np.random.default_rng(seed)
    os.makedirs(folder, exist_ok=True)
    examples = {}
    for k, name in enumerate(LABELS):
        pictures = [picture(rng, name) for _ in range(candidates)]
        with torch.no_grad():
            probs = torch.softmax(model(torch.from_numpy(np.stack([pixel_values(p) for p in pictures])))[0], 1)
        best = int(probs[:, k].argmax())
        assert int(probs[best].argmax()) == k, f"no {name} among {candidates} pictures is classified right"
        path = os.path.join(folder, name + ".png")
        Image.fromarray(pictures[best], "RGB").save(path, optimize=True)
        examples[name] = pixel_values(np.asarray(Image.open(path).convert("RGB")))
    return examples


def write_expected(model, examples, attention_example, training, path):
    data = {
        "comment": "assets/trained/vit-shapes on its examples/*.png, computed by scripts/train_vit_shapes.py in torch "
                   "float32 from the stored weights (ViTForImageClassification written out in plain torch, Pillow "
                   "preprocessing): the C++ engine must match. top3: labels and softmax probabilities; for "
                   "attention_example, cls_attention_last_layer [heads][65] (the [CLS] row of the last layer's "
                   "maps, tokens [CLS] then the 64 patches in raster order) and cls_hidden [64] (after the final "
                   "layernorm). training: how the shipped weights were made.",
        "training": training,
        "examples": {},
    }
    with torch.no_grad():
        for name, pixels in examples.items():
            logits, hidden, attention = model(torch.from_numpy(pixels)[None])
            probs = torch.softmax(logits[0], 0)
            top = torch.argsort(probs, descending=True)[:3].tolist()
            data["examples"][name + ".png"] = {"top3": [{"label": LABELS[i], "probability": round(float(probs[i]), 6)}
                                                        for i in top]}
            if name == attention_example:
                data["attention_example"] = name + ".png"
                data["cls_attention_last_layer"] = [[round(v, 6) for v in head.tolist()] for head in attention[-1][0, :, 0]]
                data["cls_hidden"] = [round(v, 6) for v in hidden[0, 0].tolist()]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(data, f, indent=0)
        f.write("\n")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--steps", type=int, default=3000, help="training steps (batches)")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--warmup", type=int, default=200, help="steps of linear warm-up before the cosine decay")
    p.add_argument("--weight-decay", type=float, default=0.05)
    p.add_argument("--eval-every", type=int, default=250)
    p.add_argument("--eval-pictures", type=int, default=3000, help="held-out pictures for the reported accuracy")
    p.add_argument("--candidates", type=int, default=40, help="pictures per class to choose each example from")
    p.add_argument("--attention-example", default="star", choices=LABELS,
                   help="the example whose [CLS] attention and hidden state the cross-check holds")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", default=os.path.join(ROOT, "assets", "trained", "vit-shapes"))
    p.add_argument("--expected", default=os.path.join(ROOT, "tests", "data", "vit_shapes_expected.json"))
    a = p.parse_args()

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    rng = np.random.default_rng(a.seed)
    model = ViTForImageClassification()
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=a.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / a.warmup, 0.5 * (1 + math.cos(math.pi * min(s / a.steps, 1.0)))))
    start = time.time()
    window_loss, window_right, window_seen = 0.0, 0, 0
    for step in range(1, a.steps + 1):
        x, y = batch(rng, a.batch)
        logits = model(x)[0]
        loss = F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        window_loss += loss.item() * len(y)
        window_right += int((logits.argmax(1) == y).sum())
        window_seen += len(y)
        if step % a.eval_every == 0:
            print(f"step {step}  loss {window_loss / window_seen:.4f}  train accuracy {window_right / window_seen:.3f}  "
                  f"{time.time() - start:.0f} s", flush=True)
            window_loss, window_right, window_seen = 0.0, 0, 0
    seconds = time.time() - start
    model.eval()
    held_out = accuracy(model, a.eval_pictures, a.seed + 1000)
    print(f"trained {a.steps} steps in {seconds:.0f} s; held-out accuracy {held_out:.4f} over {a.eval_pictures} pictures",
          flush=True)

    os.makedirs(a.out, exist_ok=True)
    write_safetensors(os.path.join(a.out, "model.safetensors"), model.state_dict(), "F32")
    write_json(os.path.join(a.out, "config.json"), config_json())
    write_json(os.path.join(a.out, "preprocessor_config.json"), preprocessor_json())
    examples = write_examples(model, os.path.join(a.out, "examples"), a.seed + 2000, a.candidates)
    training = {"seed": a.seed, "steps": a.steps, "batch": a.batch, "train_seconds": round(seconds),
                "held_out_accuracy": held_out, "held_out_pictures": a.eval_pictures}
    write_expected(model, examples, a.attention_example, training, a.expected)
    print(f"wrote {a.out} and {a.expected}")


if __name__ == "__main__":
    main()

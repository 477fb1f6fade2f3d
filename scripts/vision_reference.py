#!/usr/bin/python3
"""Pictures and their pixel values as transformers' ViTImageProcessor makes
them, for tests/engine/model/families/vit_test.cpp.

For each of three pictures (one shrunk a lot, one a little, one enlarged)
it writes OUT/NAME.png and OUT/NAME_pixels.npy: float32 [3, 32, 32], the
picture resized to 32 × 32 by Pillow's Image.resize(BILINEAR) (Debian's
python3-pil; reducing_gap None, as transformers calls it), rescaled by 1/255
in float64 then float32, normalised with mean 0.5 and std 0.5 per channel.
Usage: vision_reference.py OUT_DIR
"""
import os
import sys

import numpy as np
from PIL import Image

SIZES = {"shrunk": (300, 200), "slightly": (41, 37), "enlarged": (20, 13)}


def picture(w, h, seed):
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([(x * 255) // max(w - 1, 1), (y * 255) // max(h - 1, 1), ((x + y) * 37) % 256], axis=-1)
    noise = rng.integers(-40, 41, size=(h, w, 3))
    return np.clip(base + noise, 0, 255).astype(np.uint8)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: vision_reference.py OUT_DIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for seed, (name, (w, h)) in enumerate(sorted(SIZES.items())):
        img = Image.fromarray(picture(w, h, seed), "RGB")
        img.save(os.path.join(out, name + ".png"))
        resized = np.asarray(img.resize((32, 32), resample=Image.BILINEAR, reducing_gap=None))
        values = (resized.astype(np.float64) * (1 / 255)).astype(np.float32)
        values = (values - np.float32(0.5)) / np.float32(0.5)
        np.save(os.path.join(out, name + "_pixels.npy"), values.transpose(2, 0, 1).astype(np.float32).copy())


if __name__ == "__main__":
    main()

"""The user's attention (numpy or torch arrays, the tuple `transformers` returns, a TransformerLens cache) as the
folder `attnlab --attention` reads: attention.npy [layers, heads, Lq, Lk], tokens.json and meta.json."""

import json
import os
import re
import shutil
from pathlib import Path

import numpy as np

from ._result import Result

ACCEPTED = ("one array [L, L], [heads, L, L], [layers, heads, L, L] or [layers, heads, Lq, Lk]; "
            "or per layer [batch, heads, Lq, Lk] or [heads, Lq, Lk] in a tuple or list (what transformers returns "
            "with output_attentions=True, TransformerLens' patterns); or a TransformerLens ActivationCache; "
            "or a run() result")
META_FIELDS = {"model": str, "text": str, "scores": bool, "repeat": int, "causal": bool}
_PATTERN_KEY = re.compile(r"blocks\.(\d+)\.attn\.hook_pattern")


def _shape(a):
    return "[" + ", ".join(str(n) for n in a.shape) + "]"


def _is_torch(x):
    # By the type's module: the package never imports torch itself.
    return type(x).__module__.split(".")[0] == "torch"


def to_numpy(x):
    """`x` as a numpy array; a torch tensor detached and moved to the CPU, float16 kept and every other dtype as
    float32 (numpy has no bfloat16)."""
    if _is_torch(x):
        x = x.detach().cpu()
        return x.numpy() if str(x.dtype) == "torch.float16" else x.float().numpy()
    return np.asarray(x)


def as_file(value, folder, key):
    """An array as the float32 .npy file the command line takes, written into `folder` as KEY.npy; other values as
    they are."""
    if getattr(value, "ndim", 0) == 0:  # not an array (a numpy or torch scalar is a value too)
        return value
    path = Path(folder) / f"{key}.npy"
    np.save(path, to_numpy(value).astype(np.float32))
    return str(path)


def as_numpy(x, what):
    """Attention `x` as a float32 or float16 numpy array (float64 as float32)."""
    a = to_numpy(x)
    if a.dtype == np.float64:
        a = a.astype(np.float32)
    if a.dtype not in (np.float32, np.float16):
        raise TypeError(f"{what} has dtype {a.dtype}: expected float32, float16, bfloat16 (torch) or float64")
    return a


def _pattern_layers(cache):
    """A TransformerLens ActivationCache's patterns, layer by layer (every layer from 0 on)."""
    layers = {}
    for key in cache.keys():
        m = _PATTERN_KEY.fullmatch(str(key))
        if m:
            layers[int(m.group(1))] = cache[key]
    if not layers:
        raise TypeError("a mapping without blocks.{layer}.attn.hook_pattern keys (a TransformerLens cache holds "
                        "them); for transformers' output pass its .attentions. Accepted: " + ACCEPTED)
    if sorted(layers) != list(range(len(layers))):
        raise ValueError(f"the cache holds the patterns of layers {sorted(layers)}: every layer from 0 on is needed "
                         "(or pass the patterns wanted as a list)")
    return [layers[n] for n in range(len(layers))]


def _stack_layers(layers, batch):
    """Per-layer [batch, heads, Lq, Lk] or [heads, Lq, Lk] as one [layers, heads, Lq, Lk]."""
    out = []
    for n, x in enumerate(layers):
        a = as_numpy(x, f"layer {n}")
        if a.ndim == 4:
            if batch is None and a.shape[0] != 1:
                raise ValueError(f"layer {n} has shape {_shape(a)}, a batch of {a.shape[0]}: pass batch= to choose "
                                 "one (accepted: " + ACCEPTED + ")")
            b = 0 if batch is None else batch
            if not -a.shape[0] <= b < a.shape[0]:
                raise ValueError(f"batch={batch} is outside layer {n}'s batch of {a.shape[0]} ({_shape(a)})")
            a = a[b]
        elif a.ndim != 3:
            raise ValueError(f"layer {n} has shape {_shape(a)}; accepted: " + ACCEPTED)
        elif batch is not None:
            raise ValueError(f"batch={batch}, but layer {n} has no batch axis: {_shape(a)} is [heads, Lq, Lk]")
        if out and a.shape != out[0].shape:
            raise ValueError(f"layer {n} has shape {_shape(a)} after layer 0's {_shape(out[0])}: every layer needs "
                             "the same heads and lengths")
        out.append(a)
    return np.stack(out)


def attention_array(attention, batch=None):
    """The attention as a [layers, heads, Lq, Lk] float32 or float16 array."""
    if isinstance(attention, (tuple, list)) and attention and all(hasattr(x, "shape") for x in attention):
        return _stack_layers(list(attention), batch)
    if hasattr(attention, "keys") and hasattr(attention, "__getitem__") and not hasattr(attention, "shape"):
        return _stack_layers(_pattern_layers(attention), batch)
    if batch is not None:
        raise ValueError("batch= applies to per-layer [batch, heads, Lq, Lk] tensors (a tuple or list), not to one "
                         "array")
    a = as_numpy(attention, "the attention")
    if not 2 <= a.ndim <= 4 or (a.ndim < 4 and a.shape[-1] != a.shape[-2]):
        raise ValueError(f"attention of shape {_shape(a)}; accepted: " + ACCEPTED)
    return a.reshape((1,) * (4 - a.ndim) + a.shape)


def _token_list(tokens, what):
    if isinstance(tokens, (str, bytes)) or not all(isinstance(t, str) for t in tokens):
        raise TypeError(f"{what} must be a list of str (one per position)")
    return list(tokens)


def tokens_file(shape, tokens, source_tokens):
    """tokens.json's content for attention of `shape` [layers, heads, Lq, Lk], or None when no tokens are given
    (the executable numbers the positions)."""
    lq, lk = shape[2], shape[3]
    described = "[layers, heads, Lq, Lk] = [" + ", ".join(str(n) for n in shape) + "]"
    if source_tokens is None:
        if tokens is None:
            return None
        tokens = _token_list(tokens, "tokens")
        if lq != lk:
            raise ValueError(f"attention {described} is cross-attention (Lq = {lq}, Lk = {lk}): give "
                             f"tokens= ({lq} target tokens, the rows) and source_tokens= ({lk}, the columns)")
        if len(tokens) != lq:
            raise ValueError(f"{len(tokens)} tokens for attention {described}: expected {lq}")
        return {"tokens": tokens}
    source = _token_list(source_tokens, "source_tokens")
    target = _token_list(tokens, "tokens") if tokens is not None else None
    if target is None or len(target) != lq or len(source) != lk:
        got = "no" if target is None else len(target)
        raise ValueError(f"{got} target and {len(source)} source tokens for attention {described}: "
                         f"expected {lq} target tokens (tokens=, the rows) and {lk} source tokens (source_tokens=)")
    return {"source_tokens": source, "target_tokens": target}


def meta_file(meta):
    """meta.json's content: the fields `--attention` reads, checked by type."""
    meta = dict(meta or {})
    for key, value in meta.items():
        kind = META_FIELDS.get(key)
        if kind is None:
            raise ValueError(f"meta field {key!r}: expected one of {', '.join(META_FIELDS)}")
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise TypeError(f"meta field {key!r} is {value!r}: expected a {kind.__name__}")
    return meta


def _alone(tokens, source_tokens, batch, meta):
    if tokens is not None or source_tokens is not None or batch is not None or meta:
        raise ValueError("a run() result or a path carries its own tokens and meta: pass it alone")


def write_folder(folder, attention, tokens=None, source_tokens=None, batch=None, meta=None):
    """Writes what `--attention FOLDER` reads into `folder`; a run() result is copied as it is."""
    folder = Path(folder)
    if isinstance(attention, Result):
        _alone(tokens, source_tokens, batch, meta)
        shutil.copytree(attention.path, folder, dirs_exist_ok=True)
        return folder
    a = attention_array(attention, batch)
    names = tokens_file(a.shape, tokens, source_tokens)
    meta = meta_file(meta)
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / "attention.npy", np.ascontiguousarray(a))
    if names is not None:
        (folder / "tokens.json").write_text(json.dumps(names, ensure_ascii=False), encoding="utf-8")
    if meta:
        (folder / "meta.json").write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
    return folder


def attention_folder(folder, attention, tokens=None, source_tokens=None, batch=None, meta=None):
    """What to pass to --attention: a run() result's folder, a path as it is (a folder or a bare .npy, .npz or
    .safetensors, read by the executable), else `folder`, written."""
    if isinstance(attention, (Result, str, os.PathLike)):
        _alone(tokens, source_tokens, batch, meta)
        return attention.path if isinstance(attention, Result) else Path(attention)
    return write_folder(folder, attention, tokens, source_tokens, batch, meta)

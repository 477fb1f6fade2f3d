"""AttnLab from Python: run its models, compute its variants, and draw anyone's attention inline in a notebook.

Every call runs the `attnlab` executable (ATTNLAB_BIN, else on PATH, else the build tree of the checkout this
package is in) and exchanges .npy files with it, so the package needs only numpy; torch is used only on torch
tensors it is given.
"""

import functools
import json
import subprocess
import tempfile

from . import _cli
from ._attention import as_file, write_folder
from ._cli import AttnlabError
from ._figure import Figure, Window
from ._result import Result

__all__ = ["run", "compute", "show", "gui", "save", "Result", "Figure", "Window", "AttnlabError"]


def run(model_path="shipped:default", text=None, maps="auto", **options):
    """`attnlab model run MODEL_PATH --text TEXT --maps MAPS` into a temporary folder that lives as long as the
    result: result["tokens"], result["attention"] (memory-mapped), result["heads"], result["meta"], … Further
    options are the command's flags: top_k=3, truncate=True, target="…", image="cat.png", predict_at="last"."""
    result = Result("attnlab-run-")
    _cli.call("model", "run", model_path, *_cli.flags({"text": text, "maps": maps, **options}), "--out", result.path)
    return result


@functools.lru_cache(maxsize=None)
def _listing(executable):
    """The registry's variants and their parameters (`attnlab list --json`), read once per executable (the key:
    another ATTNLAB_BIN is listed anew)."""
    return json.loads(_cli.call("list", "--json"))


def compute(variant, **params):
    """`attnlab compute VARIANT`: the variant's parameters (see `attnlab list`) as --set KEY=VALUE, the command's
    other options (length=, heads=, seed=, preset=, text=, x=, q=, k=, v=, …) as flags; an array given for a file
    (x=, mask=) is written as .npy. The result maps each array written ("weights", "output", "extras/…") and
    "meta"."""
    result = Result("attnlab-compute-")
    settable = {p["key"] for v in _listing(_cli.executable()) if v["name"] == variant for p in v["params"]}
    with tempfile.TemporaryDirectory(prefix="attnlab-inputs-") as inputs:
        sets, options = [], {}
        for key, value in params.items():
            value = as_file(value, inputs, key)
            if key in settable:
                sets += ["--set", f"{key}={str(value).lower() if isinstance(value, bool) else value}"]
            else:
                options[key] = value
        _cli.call("compute", variant, *sets, *_cli.flags(options), "--out", result.path)
    return result


def _size(size):
    return size if size is None or isinstance(size, str) else f"{size[0]}x{size[1]}"


def show(attention, tokens=None, view="model", layer=0, head=0, size=None, title=None, *, source_tokens=None,
         batch=None, meta=None, **options):
    """A figure of `attention` that Jupyter shows inline and `.save(path)` writes as PNG, SVG or PDF; `.html()` (or
    `.save("page.html")`) is the interactive page of every head, one offline HTML file to share.

    attention: one array [L, L], [heads, L, L], [layers, heads, Lq, Lk] (numpy or torch, float32, float16,
    bfloat16 or float64); a tuple or list of per-layer [batch, heads, Lq, Lk] (what `transformers` returns with
    output_attentions=True; batch= picks one when the batch holds more); a TransformerLens ActivationCache or its
    patterns; a run() result; or a path `attnlab --attention` reads (a folder save() wrote, a .npy). tokens: the
    positions' tokens (the rows', with source_tokens the columns' of cross-attention); None numbers them. view:
    model, heads, qk, rollout, table, entropy or text (query= and shade_by= its query and shading). size: (W, H),
    "WxH", "column", "two-column" or "slide". meta: what the maps are ({"scores": True} for pre-softmax scores,
    "causal", "repeat": T for a text of period T, "model" and "text" for titles). Further options are render's
    flags (colormap="magma", scale="log", dark=True, …); an array given for a file is written as .npy (the qk
    view's q= and k=, each layer's [L, heads·d_head] or [heads, L, d_head] stacked)."""
    options = {"view": view, "layer": layer, "head": head, "size": _size(size), "title": title, **options}
    return Figure(options, attention, tokens, source_tokens, batch, meta)


def gui(attention, tokens=None, *, source_tokens=None, batch=None, meta=None, **options):
    """Opens the window on `attention` (what show() takes) and returns without waiting for it: a Window whose
    wait() raises AttnlabError if the window refused the input. Options are the window's flags (view=, layer=,
    head=, size=)."""
    window = Window(options, attention, tokens, source_tokens, batch, meta)
    try:
        # A refused input ends the process at once with its one line: raise it here rather than never.
        window.wait(timeout=1.0)
    except subprocess.TimeoutExpired:
        pass
    return window


def save(attention, tokens, folder, *, source_tokens=None, batch=None, meta=None):
    """Writes `attention` (what show() takes) as the folder `attnlab --attention FOLDER` reads: attention.npy
    [layers, heads, Lq, Lk], tokens.json (when tokens are given) and meta.json (when meta is); returns its path."""
    return write_folder(folder, attention, tokens, source_tokens, batch, meta)

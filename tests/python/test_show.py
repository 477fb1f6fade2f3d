"""show(), save() and gui() on what notebooks hold: torch's MultiheadAttention, the tuple `transformers` returns,
TransformerLens' cache, arrays of every accepted shape and dtype; the figures read back cell by cell."""

import json
import os
import re
import select
import struct
import subprocess
import sys

import numpy as np
import pytest
import torch

from conftest import attnlab
from svg_cells import cell_grids, gray_problems

WORDS = "the cat sat on the mat again".split()


def softmax_maps(*shape, seed=0):
    """Random attention maps: each row a softmax."""
    scores = torch.randn(*shape, generator=torch.Generator().manual_seed(seed))
    return torch.softmax(scores, dim=-1)


def described_figure(figure, path):
    """Saves `figure` as SVG with its --describe JSON beside it: (svg text, describe dict)."""
    figure.save(path)
    return path.read_text(encoding="utf-8"), json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))


def assert_panels_show(svg, described, maps):
    """Each [Lq, Lk] map of `maps` [panels, Lq, Lk] is a gray grid of the figure, in reading order, on its panel's
    colour range."""
    panels, lq, lk = maps.shape
    grids = cell_grids(svg, lq, lk)
    assert len(grids) == panels, f"{len(grids)} grids of {lq} × {lk} cells for {panels} maps"
    ranges = [p["range"] for p in described["panels"] if p.get("kind") == "matrix"]
    assert len(ranges) == panels
    for n in range(panels):
        assert ranges[n][0] == 0
        assert gray_problems(grids[n], maps[n].ravel(), ranges[n][1]) == [], f"panel {n}"


def test_multihead_attention_weights_are_drawn_cell_by_cell(tmp_path):
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(embed_dim=16, num_heads=4, batch_first=True)
    x = torch.randn(1, len(WORDS), 16)
    _, weights = mha(x, x, x, need_weights=True, average_attn_weights=False)  # [1, heads, L, L]
    figure = attnlab.show(weights, WORDS, colormap="gray", describe=tmp_path / "f.json")
    svg, described = described_figure(figure, tmp_path / "f.svg")
    assert_panels_show(svg, described, weights[0].detach().numpy())
    assert all(w in svg for w in ("sat", "mat", "again"))


def test_the_transformers_tuple_is_a_layer_each(tmp_path):
    layers = tuple(softmax_maps(1, 3, 5, 5, seed=n) for n in range(2))  # per layer [batch, heads, L, L]
    figure = attnlab.show(layers, WORDS[:5], colormap="gray", describe=tmp_path / "f.json")
    svg, described = described_figure(figure, tmp_path / "f.svg")
    assert_panels_show(svg, described, torch.cat(layers).reshape(6, 5, 5).numpy())


def test_a_batch_needs_batch_and_then_shows_that_one(tmp_path):
    layers = [softmax_maps(3, 2, 4, 4, seed=n) for n in range(2)]
    with pytest.raises(ValueError, match=r"layer 0 has shape \[3, 2, 4, 4\], a batch of 3: pass batch="):
        attnlab.show(layers)
    attnlab.save(layers, None, tmp_path, batch=2)
    np.testing.assert_array_equal(np.load(tmp_path / "attention.npy"), torch.stack(layers)[:, 2].numpy())
    with pytest.raises(ValueError, match=r"batch=3 is outside layer 0's batch of 3"):
        attnlab.show(layers, batch=3)
    with pytest.raises(ValueError, match=r"batch=0, but layer 0 has no batch axis: \[2, 4, 4\] is \[heads, Lq, Lk\]"):
        attnlab.show([layer[0] for layer in layers], batch=0)


def test_a_transformerlens_cache_and_its_patterns(tmp_path):
    patterns = [softmax_maps(1, 2, 6, 6, seed=n) for n in range(3)]
    cache = {f"blocks.{n}.attn.hook_pattern": p for n, p in enumerate(patterns)}
    cache.update({f"blocks.{n}.attn.hook_attn_scores": torch.zeros(1, 2, 6, 6) for n in range(3)})
    expected = torch.cat(patterns).numpy()  # [layers, heads, dest, src]
    attnlab.save(cache, WORDS[:6], tmp_path / "cache")
    np.testing.assert_array_equal(np.load(tmp_path / "cache" / "attention.npy"), expected)
    attnlab.save(patterns, WORDS[:6], tmp_path / "list")
    np.testing.assert_array_equal(np.load(tmp_path / "list" / "attention.npy"), expected)
    # run_with_cache(remove_batch_dim=True) keeps [heads, dest, src] per layer.
    attnlab.save({k: v[0] for k, v in cache.items()}, None, tmp_path / "unbatched")
    np.testing.assert_array_equal(np.load(tmp_path / "unbatched" / "attention.npy"), expected)
    svg, described = described_figure(attnlab.show(cache, WORDS[:6], colormap="gray", describe=tmp_path / "f.json"),
                                      tmp_path / "f.svg")
    assert_panels_show(svg, described, expected.reshape(6, 6, 6))
    with pytest.raises(ValueError, match=r"layers \[0, 2\]"):
        attnlab.show({k: v for k, v in cache.items() if not k.startswith("blocks.1.")})


SHAPES = {"[L, L]": (5, 5), "[heads, L, L]": (3, 5, 5), "[layers, heads, L, L]": (2, 3, 5, 5),
          "[layers, heads, Lq, Lk]": (2, 3, 4, 6)}


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "torch.float32", "torch.float16",
                                   "torch.bfloat16"])
def test_every_accepted_shape_and_dtype_round_trips_and_draws(shape, dtype, tmp_path):
    maps = softmax_maps(*shape)
    given = maps.to(getattr(torch, dtype[6:])) if dtype.startswith("torch.") else maps.numpy().astype(dtype)
    # What arrives: bfloat16's values (numpy has none) as float32, float64 as float32, float16 kept.
    want = (given.float() if dtype == "torch.bfloat16" else given).numpy() if dtype.startswith("torch.") else given
    want = want.astype(np.float16 if dtype in ("float16", "torch.float16") else np.float32)
    want = want.reshape((1,) * (4 - len(shape)) + shape)
    tokens, sources = (WORDS[:4], WORDS[:6]) if shape[-2] != shape[-1] else (WORDS[:5], None)
    attnlab.save(given, tokens, tmp_path / "saved", source_tokens=sources)
    written = np.load(tmp_path / "saved" / "attention.npy")
    assert written.dtype == want.dtype and np.array_equal(written, want)
    figure = attnlab.show(given, tokens, source_tokens=sources, view="heads" if len(shape) > 2 else "model")
    assert figure._repr_svg_().startswith("<?xml")


def test_save_writes_the_folder_attention_reads(run_bin, tmp_path):
    maps = softmax_maps(2, 2, 4, 6).numpy()
    folder = attnlab.save(maps, WORDS[:4], tmp_path / "cross", source_tokens=WORDS[1:7],
                          meta={"model": "my model", "causal": False})
    assert sorted(p.name for p in folder.iterdir()) == ["attention.npy", "meta.json", "tokens.json"]
    assert json.loads((folder / "tokens.json").read_text()) == {"source_tokens": WORDS[1:7], "target_tokens": WORDS[:4]}
    assert json.loads((folder / "meta.json").read_text()) == {"model": "my model", "causal": False}
    # The command reads the folder as show() hands it over: the same figure.
    run_bin("render", "--attention", folder, "--view", "model", "--out", tmp_path / "cli.svg")
    shown = attnlab.show(maps, WORDS[:4], source_tokens=WORDS[1:7], meta={"model": "my model", "causal": False})
    assert shown._repr_svg_() == (tmp_path / "cli.svg").read_text(encoding="utf-8")
    assert "my model" in shown._repr_svg_()
    assert attnlab.show(str(folder))._repr_svg_() == shown._repr_svg_()  # a path goes to --attention as it is
    with pytest.raises(ValueError, match="carries its own tokens"):
        attnlab.show(folder, WORDS[:4])


def test_cross_attention_of_equal_lengths_keeps_both_token_lists(tmp_path):
    # T5 on a source and a target of as many tokens: cross-attention all the same, its columns the source's.
    maps = softmax_maps(1, 2, 4, 4).numpy()
    svg = attnlab.show(maps, ["le", "petit", "oiseau", "</s>"], source_tokens=["a", "small", "bird", "</s>"])
    assert all(word in svg._repr_svg_() for word in ("oiseau", "bird"))


def test_the_qk_view_takes_queries_and_keys_as_arrays():
    g = torch.Generator().manual_seed(2)
    q, k = torch.randn(2, 3, 5, 8, generator=g), torch.randn(2, 3, 5, 8, generator=g)  # [layers, heads, L, d_head]
    maps = torch.softmax(q @ k.transpose(-1, -2) / 8 ** 0.5, dim=-1)
    svg = attnlab.show(maps, WORDS[:5], view="qk", layer=np.int64(1), head=2, q=q, k=k)._repr_svg_()
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    pair = next(re.fullmatch(r"q ∘ k, query (\d+) '.*', key (\d+) '.*'", t) for t in texts if t.startswith("q ∘ k"))
    i, j = int(pair.group(1)), int(pair.group(2))

    def number_before(label):  # the values row prints each number before its name
        return float(next(t for t in reversed(texts[:texts.index(label)]) if re.fullmatch(r"-?[0-9.]+", t)))

    # The product of layer 1 head 2's q_i and k_j, and that map's weight (i, j).
    assert number_before("q∘k = q·k") == pytest.approx(float(q[1, 2, i] @ k[1, 2, j]), abs=1e-3)
    assert number_before("attention weight") == pytest.approx(float(maps[1, 2, i, j]), abs=1e-4)
    with pytest.raises(attnlab.AttnlabError, match=r"q\.npy: --q: shape \[2, 3, 4, 8\] fits no layout"):
        attnlab.show(maps, WORDS[:5], view="qk", q=q[:, :, :4], k=k)._repr_svg_()


def test_a_run_result_is_shown_and_saved_as_its_folder(run_bin, tmp_path):
    text = "the cat sat on the mat. the cat sat"
    result = attnlab.run("shipped:default", text)
    figure = attnlab.show(result, view="model", colormap="gray", describe=tmp_path / "f.json")
    svg, described = described_figure(figure, tmp_path / "f.svg")
    a = np.asarray(result["attention"])
    assert_panels_show(svg, described, a.reshape(-1, *a.shape[2:]))
    attnlab.save(result, None, tmp_path / "copy")
    assert (tmp_path / "copy" / "attention.npy").read_bytes() == (result.path / "attention.npy").read_bytes()
    with pytest.raises(ValueError, match="carries its own tokens"):
        attnlab.show(result, ["x"])


def png_size(data):
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_formats_sizes_and_drawing_once(monkeypatch, tmp_path):
    figure = attnlab.show(softmax_maps(2, 5, 5), WORDS[:5], size=(480, 360), title="two heads")
    svg = figure._repr_svg_()
    assert re.search(r'viewBox="0 0 480 360"', svg) and "two heads" in svg
    assert png_size(figure._repr_png_()) == (480, 360)
    assert figure.save(tmp_path / "f.pdf").read_bytes().startswith(b"%PDF")
    assert png_size(attnlab.show(np.eye(3), size="200x100").save(tmp_path / "g.png").read_bytes()) == (200, 100)
    # Drawn once: with no executable left, the figure still shows and saves what it drew.
    monkeypatch.setenv("ATTNLAB_BIN", str(tmp_path / "gone"))
    assert figure._repr_svg_() == svg and figure.save(tmp_path / "f.svg").read_text(encoding="utf-8") == svg
    with pytest.raises(ValueError, match=r"expected a file ending in \.png, \.svg, \.pdf"):
        figure.save(tmp_path / "f.jpg")


def test_torch_is_never_imported_for_numpy_input(tmp_path):
    code = ("import sys, numpy as np, attnlab; attnlab.show(np.eye(4), list('abcd')).save(sys.argv[1]); "
            "assert 'torch' not in sys.modules, 'torch imported'")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "f.svg")], env=env, check=True)


# Bad input: refused before the executable runs where the shape is wrong, by the executable (its one line raised
# as AttnlabError) where the values are.
@pytest.mark.parametrize("attention, message", [
    (np.ones((4,)), r"attention of shape \[4\]; accepted: one array \[L, L\]"),
    (np.ones((1, 2, 3, 4, 4)), r"attention of shape \[1, 2, 3, 4, 4\]; accepted"),
    (np.ones((3, 4)) / 4, r"attention of shape \[3, 4\]; accepted"),
    ([np.ones((2, 3, 3)), np.ones((2, 4, 4))], r"layer 1 has shape \[2, 4, 4\] after layer 0's \[2, 3, 3\]"),
    ([np.ones((3, 3))], r"layer 0 has shape \[3, 3\]; accepted"),
])
def test_shapes_that_fit_no_layout_are_refused(attention, message):
    with pytest.raises(ValueError, match=message):
        attnlab.show(attention)


def test_token_counts_and_types_are_checked():
    with pytest.raises(ValueError, match=r"3 tokens for attention \[layers, heads, Lq, Lk\] = \[1, 2, 4, 4\]: "
                                         r"expected 4"):
        attnlab.show(np.ones((2, 4, 4)) / 4, WORDS[:3])
    with pytest.raises(ValueError, match=r"is cross-attention \(Lq = 2, Lk = 3\)"):
        attnlab.show(np.ones((1, 1, 2, 3)) / 3, WORDS[:2])
    with pytest.raises(TypeError, match="list of str"):
        attnlab.show(np.eye(3), "the cat sat")
    with pytest.raises(TypeError, match="dtype int64"):
        attnlab.show(np.eye(3, dtype=np.int64))
    with pytest.raises(ValueError, match="meta field 'colour'"):
        attnlab.show(np.eye(3), meta={"colour": "red"})


@pytest.mark.parametrize("fault", ["nan", "inf", "row sum"])
def test_bad_values_raise_the_executables_line(fault):
    maps = softmax_maps(2, 4, 4).numpy()
    maps[1, 2, 3] = {"nan": np.nan, "inf": np.inf, "row sum": maps[1, 2, 3] + 0.5}[fault]
    figure = attnlab.show(maps, WORDS[:4])
    with pytest.raises(attnlab.AttnlabError) as caught:
        figure._repr_svg_()
    line = str(caught.value)
    assert "\n" not in line and "attention.npy" in line, line
    assert caught.value.returncode not in (0, None)


def test_scores_may_hold_unnormalised_rows_and_masked_entries(tmp_path):
    scores = torch.randn(2, 4, 4, generator=torch.Generator().manual_seed(1))
    scores = scores.masked_fill(torch.ones(4, 4).triu(1).bool(), float("-inf"))  # causal
    attnlab.show(scores, WORDS[:4], meta={"scores": True, "causal": True}).save(tmp_path / "s.svg")


@pytest.fixture(scope="module")
def display():
    """A display of its own, as the GUI tests start theirs (tests/test_support.cpp): Xvfb -displayfd, its whole
    line read before the pipe is closed (a write into a closed pipe ends Xvfb)."""
    read, write = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", "1280x800x24", "-nolisten", "tcp",
                               "+extension", "GLX"], pass_fds=(write,), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    os.close(write)
    line = b""
    while not line.endswith(b"\n") and select.select([read], [], [], 30)[0]:
        part = os.read(read, 64)
        if not part:
            break
        line += part
    os.close(read)
    assert line.endswith(b"\n"), "Xvfb did not report a display"
    yield ":" + line.decode().strip()
    server.terminate()
    server.wait()


def test_gui_opens_the_window_and_raises_a_refusal(display, monkeypatch, tmp_path):
    monkeypatch.setenv("DISPLAY", display)
    shot = tmp_path / "window.png"
    window = attnlab.gui(softmax_maps(2, 3, 5, 5), WORDS[:5], frames=3, screenshot=shot, size="800x600")
    window.wait(timeout=60)
    assert png_size(shot.read_bytes()) == (800, 600)
    bad = softmax_maps(1, 1, 5, 5).numpy()
    bad[0, 0, 0, 0] = np.nan
    with pytest.raises(attnlab.AttnlabError, match="attention.npy"):
        attnlab.gui(bad, WORDS[:5], frames=3)

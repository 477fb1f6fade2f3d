"""show(...).html() and .save("page.html"): the interactive page of a notebook's maps, its maps decoded here (base64,
gzip, one byte per weight) and compared with what was shown, within the bound the page states."""

import base64
import gzip
import json
import re

import numpy as np
import pytest
import torch

from conftest import attnlab

WORDS = "the cat sat on the mat again".split()


def page_parts(html):
    """(META, the maps' bytes) of a page."""
    meta = json.loads(re.search(r'<script id="attnlab-meta" type="application/json">(.*?)</script>', html, re.S).group(1))
    blob = re.search(r'<script id="attnlab-maps" type="text/plain">([^<]*)</script>', html).group(1)
    return meta, np.frombuffer(gzip.decompress(base64.b64decode(blob)), dtype=np.uint8)


def decoded(meta, data, set_index, layer, head):
    """The page's map of (layer, head) as weights [rows, cols]; a map stored with the Up filter has each row's
    bytes minus the previous row's (mod 256) where both have them."""
    s = meta["sets"][set_index]
    rows, cols = len(s["rows"]), len(s["cols"])
    k = layer * s["heads"] + head
    offset = s["maps"][k]
    assert offset is not None, f"L{layer} H{head} is not whole in the page"
    b = np.zeros((rows, cols), dtype=np.uint8)
    for i in range(rows):
        n = i + 1 if s["triangle"] else cols
        start = offset + (i * (i + 1) // 2 if s["triangle"] else i * cols)
        b[i, :n] = data[start:start + n]
        if s["up"][k] and i > 0:
            m = i if s["triangle"] else cols
            b[i, :m] += b[i - 1, :m]
    w = b.astype(np.float64)
    return np.where(b == 0, 0.0, 10.0 ** (-4 + 4 * (w - 1) / 254))


def within_bound(meta, page, maps):
    q = meta["quantisation"]
    return np.all(np.abs(page - maps) <= np.maximum(q["relative"] * maps, q["absolute"]) + 1e-9)


def test_a_notebooks_maps_make_a_page_that_decodes_to_them(tmp_path):
    maps = torch.softmax(torch.randn(2, 3, 7, 7, generator=torch.Generator().manual_seed(3)) * 2, dim=-1)
    figure = attnlab.show(maps, WORDS, layer=1, head=2, title="my maps")
    html = figure.html()
    meta, data = page_parts(html)
    assert meta["title"] == "my maps"
    assert meta["focus"] == {"set": 0, "layer": 1, "head": 2}
    assert meta["sets"][0]["rows"] == WORDS
    for layer in range(2):
        for head in range(3):
            assert within_bound(meta, decoded(meta, data, 0, layer, head), maps[layer, head].numpy().astype(np.float64))
    saved = figure.save(tmp_path / "page.html")
    assert saved.read_text(encoding="utf-8") == html
    assert "DecompressionStream" in html and "https://" not in html


def test_a_long_page_keeps_the_named_heads_whole():
    L = 1100
    scores = torch.randn(1, 2, L, L, generator=torch.Generator().manual_seed(5))
    maps = torch.softmax(scores.masked_fill(torch.ones(L, L).triu(1).bool(), float("-inf")), dim=-1)
    meta, data = page_parts(attnlab.show(maps).html(heads=[(0, 1)]))
    s = meta["sets"][0]
    assert s["maps"][0] is None and s["pooled"] is not None and "L0 H1" in meta["note"]
    assert within_bound(meta, decoded(meta, data, 0, 0, 1), maps[0, 1].numpy().astype(np.float64))


def test_a_page_over_the_limit_is_refused_with_the_size_that_admits_it():
    figure = attnlab.show(torch.softmax(torch.randn(4, 9, 9), dim=-1))
    with pytest.raises(attnlab.AttnlabError, match=r"--max-bytes \d+ admits it"):
        figure.html(max_bytes=1000)

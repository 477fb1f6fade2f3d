"""run() and compute(): the package's results are the executable's files, bit for bit."""

import gc
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT, attnlab

TEXT = "the cat sat on the mat. the cat sat"


def folder_files(folder):
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def without_measures(meta):
    """meta.json less what a run measures of itself (its time, peak memory and page faults)."""
    return {k: v for k, v in meta.items() if not k.endswith("_seconds") and k not in ("peak_rss_bytes", "page_faults")}


def test_run_equals_model_run(run_bin, tmp_path):
    result = attnlab.run("shipped:default", TEXT)
    run_bin("model", "run", "shipped:default", "--text", TEXT, "--out", tmp_path)
    assert folder_files(result.path) == folder_files(tmp_path)
    for name in folder_files(tmp_path):
        mine, theirs = (result.path / name).read_bytes(), (tmp_path / name).read_bytes()
        if name == "meta.json":  # the same but for how long the run took
            assert without_measures(json.loads(mine)) == without_measures(json.loads(theirs))
        else:
            assert mine == theirs, name
    tokens = json.loads((tmp_path / "tokens.json").read_text(encoding="utf-8"))
    assert result["tokens"] == tokens["tokens"] and result["ids"] == tokens["ids"]
    assert isinstance(result["attention"], np.memmap)
    np.testing.assert_array_equal(result["attention"], np.load(tmp_path / "attention.npy"))
    assert result["heads"] == json.loads((tmp_path / "heads.json").read_text(encoding="utf-8"))
    assert result["meta"]["tokens"] == len(result["tokens"])


def test_run_passes_the_commands_flags():
    result = attnlab.run("shipped:default", TEXT, maps="pooled", top_k=2, predict_at="last")
    assert "attention" not in result and "attention_pooled" in result
    assert result["meta"]["maps"] == "pooled"
    assert [len(p) for p in result["meta"]["top_k"]] == [2]  # one position predicted, two candidates


def test_run_of_an_encoder_decoder_gives_both_token_lists():
    result = attnlab.run("shipped:t5-toy", "a small bird")
    layers, heads, lq, lk = result["cross_attention"].shape
    assert (lq, lk) == (len(result["target_tokens"]), len(result["source_tokens"]))


def test_the_folder_lives_as_long_as_the_result():
    result = attnlab.run("shipped:default", TEXT)
    folder, attention = result.path, result["attention"]
    expected = np.array(attention)
    del result
    gc.collect()
    assert not folder.exists()
    np.testing.assert_array_equal(attention, expected)  # still mapped after the file went


def test_compute_equals_the_command(run_bin, tmp_path):
    result = attnlab.compute("multi-head", causal=True, length=6, heads=2, seed=3)
    run_bin("compute", "multi-head", "--set", "causal=true", "--length", 6, "--heads", 2, "--seed", 3,
            "--out", tmp_path)
    names = [n[:-len(".npy")] for n in folder_files(tmp_path) if n.endswith(".npy")]
    assert names and set(names) <= set(result)
    for name in names:
        assert np.array_equal(result[name], np.load(tmp_path / f"{name}.npy")), name
    w = result["weights"]
    assert w.shape == (2, 6, 6) and np.all(np.triu(w, 1) == 0)
    assert without_measures(result["meta"]) == without_measures(json.loads((tmp_path / "meta.json").read_text()))


def test_compute_writes_arrays_given_as_files(run_bin, tmp_path):
    mask = np.tril(np.ones((8, 8)))
    mask[5, :3] = 0  # query 5 may not see keys 0–2
    x = np.random.default_rng(0).standard_normal((8, 16))
    result = attnlab.compute("scaled-dot-product", mask=mask, x=x, dim=16)
    w = result["weights"][0]
    assert np.all(w[mask == 0] == 0) and np.all(w[mask == 1] > 0)
    np.save(tmp_path / "mask.npy", mask.astype(np.float32))
    np.save(tmp_path / "x.npy", x.astype(np.float32))
    run_bin("compute", "scaled-dot-product", "--set", f"mask={tmp_path / 'mask.npy'}", "--x", tmp_path / "x.npy",
            "--dim", 16, "--out", tmp_path / "out")
    np.testing.assert_array_equal(result["weights"], np.load(tmp_path / "out" / "weights.npy"))


def test_the_executables_refusal_is_raised_with_its_line():
    with pytest.raises(attnlab.AttnlabError, match="no-such-variant") as caught:
        attnlab.compute("no-such-variant")
    assert caught.value.returncode != 0 and caught.value.stderr.strip().endswith(str(caught.value))
    with pytest.raises(attnlab.AttnlabError, match="nope"):
        attnlab.run("shipped:nope", "a")


def test_the_executable_is_found_in_the_checkouts_build_tree(attnlab_bin, tmp_path):
    # A copy of the package in a checkout-like tree whose build/attnlab is the binary; nothing on PATH.
    shutil.copytree(ROOT / "app" / "python" / "attnlab", tmp_path / "app" / "python" / "attnlab")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "attnlab").symlink_to(attnlab_bin)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path / "app" / "python"), "PYTHONDONTWRITEBYTECODE": "1"}
    found = subprocess.run([sys.executable, "-c", "from attnlab import _cli; print(_cli.executable())"], env=env,
                           capture_output=True, text=True, check=True).stdout.strip()
    assert found == str(tmp_path / "build" / "attnlab")
    os.remove(tmp_path / "build" / "attnlab")
    missing = subprocess.run([sys.executable, "-c", "import attnlab; attnlab.run()"], env=env, capture_output=True,
                             text=True)
    assert missing.returncode != 0 and "set ATTNLAB_BIN" in missing.stderr


def test_attnlab_bin_naming_no_executable_is_refused(monkeypatch, tmp_path):
    monkeypatch.setenv("ATTNLAB_BIN", str(tmp_path / "attnlab"))
    with pytest.raises(attnlab.AttnlabError, match="ATTNLAB_BIN=.* is not an executable file"):
        attnlab.run()

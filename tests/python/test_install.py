"""`pip install ./app/python` with no index, into a fresh venv that sees Debian's packages (numpy), as a user
would; the installed package then works from a folder outside the checkout."""

import subprocess
import sys

from conftest import ROOT

USE = """
import sys, numpy as np, attnlab
print(attnlab.__file__)
attnlab.show(np.full((2, 3, 3), 1 / 3), ["a", "b", "c"], view="heads").save("heads.svg")
"""


def test_pip_installs_offline_and_the_package_works_outside_the_checkout(attnlab_bin, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv], check=True)
    python = venv / "bin" / "python"
    # The default build isolation too: pyproject.toml's backend needs nothing from an index.
    subprocess.run([python, "-m", "pip", "install", "--no-index", "--no-cache-dir", "--quiet", ROOT / "app" / "python"],
                   check=True, cwd=tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"PATH": "/usr/bin:/bin", "ATTNLAB_BIN": attnlab_bin, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([python, "-c", USE], cwd=elsewhere, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith(str(venv)), done.stdout  # the installed copy, not the checkout's
    assert (elsewhere / "heads.svg").read_text(encoding="utf-8").startswith("<?xml")
    # Installed, the package has no build tree beside it: without ATTNLAB_BIN it says what to set.
    del env["ATTNLAB_BIN"]
    done = subprocess.run([python, "-c", USE], cwd=elsewhere, env=env, capture_output=True, text=True)
    assert done.returncode != 0 and "set ATTNLAB_BIN to its path" in done.stderr, done.stderr

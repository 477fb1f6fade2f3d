"""The package under test is the checkout's (app/python), run against the binary ATTNLAB_BIN names (ctest sets it
to the one just built)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "app" / "python"))

import attnlab  # noqa: E402  (after the path above)
from attnlab import _cli  # noqa: E402


@pytest.fixture(scope="session")
def attnlab_bin():
    return _cli.executable()


@pytest.fixture(scope="session")
def run_bin(attnlab_bin):
    """Runs the binary itself: `run_bin(*args)` returns its CompletedProcess, asserting it succeeded."""
    def run(*args):
        done = subprocess.run([attnlab_bin, *map(str, args)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done
    return run


__all__ = ["attnlab", "ROOT"]

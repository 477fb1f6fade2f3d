"""The folders `model run` and `compute` write, read as a mapping that owns its temporary folder."""

import json
import shutil
import tempfile
import weakref
from collections.abc import Mapping
from pathlib import Path

import numpy as np


def temporary_folder(owner, prefix):
    """A new temporary folder deleted with `owner` (arrays memory-mapped from it stay readable after: an unlinked
    file lives on while it is mapped)."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    weakref.finalize(owner, shutil.rmtree, path, True)
    return path


class Result(Mapping):
    """What one command wrote, by name: each .npy (its path under the folder, without the suffix, such as
    "attention" or "extras/add") memory-mapped, and each .json parsed; tokens.json gives its fields ("tokens",
    "ids", or the "source_…" and "target_…" lists of an encoder–decoder). `path` is the folder."""

    def __init__(self, prefix):
        self.path = temporary_folder(self, prefix)
        self._files = None
        self._loaded = {}

    def _index(self):
        if self._files is None:
            files = {}
            for f in sorted(self.path.rglob("*")):
                name = f.relative_to(self.path).with_suffix("").as_posix()
                if f.suffix == ".npy":
                    files[name] = f
                elif f.name == "tokens.json":
                    files.update((key, f) for key in json.loads(f.read_text(encoding="utf-8")))
                elif f.suffix == ".json":
                    files[name] = f
            self._files = files
        return self._files

    def __getitem__(self, name):
        f = self._index()[name]
        if name not in self._loaded:
            if f.suffix == ".npy":
                self._loaded[name] = np.load(f, mmap_mode="r")
            else:
                parsed = json.loads(f.read_text(encoding="utf-8"))
                self._loaded[name] = parsed[name] if f.name == "tokens.json" else parsed
        return self._loaded[name]

    def __iter__(self):
        return iter(self._index())

    def __len__(self):
        return len(self._index())

    def __repr__(self):
        return f"<attnlab.Result {self.path}: {', '.join(self._index())}>"

"""A figure drawn by `attnlab render` when first shown or saved, and a window opened by `attnlab gui`."""

import subprocess
import threading
from pathlib import Path

from . import _cli
from ._attention import as_file, attention_folder
from ._result import Result, temporary_folder

FORMATS = (".png", ".svg", ".pdf")


class Figure:
    """A view of attention. Jupyter shows it inline (`_repr_svg_`, `_repr_png_`); `save(path)` writes PNG, SVG or
    PDF. Each format is drawn once, when first asked for; the executable checks the values (NaN, rows that do not
    sum to 1) then, and its refusal is raised as AttnlabError."""

    def __init__(self, options, attention, tokens=None, source_tokens=None, batch=None, meta=None):
        self._keep = attention if isinstance(attention, Result) else None  # a run() result: its folder is the input
        self._folder = temporary_folder(self, "attnlab-figure-")
        self._source = str(attention_folder(self._folder / "attention", attention, tokens, source_tokens, batch, meta))
        self._args = _cli.flags({key: as_file(value, self._folder, key) for key, value in options.items()})
        self._drawn = {}

    def _draw(self, suffix):
        if suffix not in self._drawn:
            out = self._folder / ("figure" + suffix)
            _cli.call("render", "--attention", self._source, *self._args, "--out", out)
            self._drawn[suffix] = out.read_bytes()
        return self._drawn[suffix]

    def _repr_svg_(self):
        return self._draw(".svg").decode("utf-8")

    def _repr_png_(self):
        return self._draw(".png")

    def save(self, path):
        """Writes the figure to `path`, a .png, .svg or .pdf file; returns the path."""
        path = Path(path)
        if path.suffix.lower() not in FORMATS:
            raise ValueError(f"{path}: expected a file ending in {', '.join(FORMATS)}")
        path.write_bytes(self._draw(path.suffix.lower()))
        return path

    def __repr__(self):
        return f"<attnlab.Figure of {self._source}: render {' '.join(self._args)}>"


class Window:
    """The window `attnlab gui` opened. `process` is its subprocess.Popen; the folder it reads is deleted when the
    window closes."""

    def __init__(self, options, attention, tokens=None, source_tokens=None, batch=None, meta=None):
        self._keep = attention if isinstance(attention, Result) else None
        folder = temporary_folder(self, "attnlab-gui-")
        source = attention_folder(folder / "attention", attention, tokens, source_tokens, batch, meta)
        options = {key: as_file(value, folder, key) for key, value in options.items()}
        command = [_cli.executable(), "gui", "--attention", str(source), *_cli.flags(options)]
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, text=True)
        self._command = command
        self._stderr = ""
        # Drains stderr (a full pipe would stop the window); as its target holds self, the input folder lives
        # until the window closes even when the caller drops the Window.
        self._watch = threading.Thread(target=self._wait_closed, daemon=True)
        self._watch.start()

    def _wait_closed(self):
        self._stderr = self.process.communicate()[1]

    def wait(self, timeout=None):
        """Waits until the window closes (subprocess.TimeoutExpired after `timeout` seconds); raises AttnlabError
        when it refused the input."""
        self.process.wait(timeout)
        self._watch.join()
        if self.process.returncode != 0:
            raise _cli.failure(self._command, self.process.returncode, self._stderr)

    def close(self):
        self.process.terminate()
        self.process.wait()

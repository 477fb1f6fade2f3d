"""A figure drawn by `attnlab render` when first shown or saved, and a window opened by `attnlab gui`."""

import subprocess
import threading
from pathlib import Path

from . import _cli
from ._attention import as_file, attention_folder
from ._result import Result, temporary_folder

FORMATS = (".png", ".svg", ".pdf", ".html")
PAGE_OPTIONS = ("layer", "head", "title", "colormap")  # the figure's options a page takes too: how it opens


class Figure:
    """A view of attention. Jupyter shows it inline (`_repr_svg_`, `_repr_png_`); `save(path)` writes PNG, SVG or
    PDF, or the interactive page of every head (`.html`, as html() gives it). Each format is drawn once, when first
    asked for; the executable checks the values (NaN, rows that do not sum to 1) then, and its refusal is raised as
    AttnlabError."""

    def __init__(self, options, attention, tokens=None, source_tokens=None, batch=None, meta=None):
        self._keep = attention if isinstance(attention, Result) else None  # a run() result: its folder is the input
        self._folder = temporary_folder(self, "attnlab-figure-")
        self._source = str(attention_folder(self._folder / "attention", attention, tokens, source_tokens, batch, meta))
        options = {key: as_file(value, self._folder, key) for key, value in options.items()}
        self._args = _cli.flags(options)
        self._page_args = _cli.flags({key: value for key, value in options.items() if key in PAGE_OPTIONS})
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

    def html(self, heads=None, max_bytes=None):
        """The interactive page of every head as text (`attnlab render --format html`): one HTML file that opens
        offline in any browser, to hover, zoom, pick heads and sort the head table; it opens on the figure's layer
        and head. heads: (layer, head) pairs a page over 1,024 tokens keeps whole beside every head pooled;
        max_bytes: refuse a larger page (default 64 MiB)."""
        key = (".html", tuple(map(tuple, heads or ())), max_bytes)
        if key not in self._drawn:
            out = self._folder / "page.html"
            page = {"heads": ",".join(f"{l}:{h}" for l, h in heads) if heads else None, "max_bytes": max_bytes}
            _cli.call("render", "--attention", self._source, *self._page_args, *_cli.flags(page), "--out", out)
            self._drawn[key] = out.read_bytes()
        return self._drawn[key].decode("utf-8")

    def save(self, path):
        """Writes the figure to `path`, a .png, .svg or .pdf file, or its page (html()) to a .html file; returns the
        path."""
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix not in FORMATS:
            raise ValueError(f"{path}: expected a file ending in {', '.join(FORMATS)}")
        path.write_bytes(self.html().encode("utf-8") if suffix == ".html" else self._draw(suffix))
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

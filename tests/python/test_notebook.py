"""The example notebook (app/python/examples) runs top to bottom under Debian's nbclient and ipykernel, and every
figure it shows reaches the page as SVG."""

import os

import nbformat
from nbclient import NotebookClient

from conftest import ROOT

NOTEBOOK = ROOT / "app" / "python" / "examples" / "attention_in_a_notebook.ipynb"


def test_the_committed_notebook_holds_no_outputs():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.outputs == [] and c.execution_count is None for c in code)


def test_the_example_notebook_runs_and_shows_svg(monkeypatch, tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    # The kernel imports the checkout's package; ATTNLAB_BIN comes from the test's environment.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT / "app" / "python"), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # ipykernel's debugger's note on frozen modules
    NotebookClient(nb, kernel_name="python3", timeout=120, resources={"metadata": {"path": str(tmp_path)}}).execute()
    shown = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
             if o.output_type in ("display_data", "execute_result")]
    showing = [c for c in nb.cells if c.cell_type == "code" and c.source.splitlines()[-1].startswith("attnlab.show(")]
    assert len(shown) == len(showing) > 0
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    for output in shown:
        assert output.data.get("image/svg+xml", "").lstrip().startswith("<?xml"), (sorted(output.data), printed)

"""A PEP 517 build backend from the standard library alone, so that `pip install ./app/python` works with no
package index (pip's build isolation installs nothing first: pyproject.toml requires nothing).

It builds a pure-Python wheel of the package folder attnlab/ and an sdist. pyproject.toml's [project] table is
read for the lines `key = "string"` and `key = ["string", …]` only (written that way, each right-hand side is also
JSON), which is all this project's holds.
"""

import base64
import hashlib
import io
import json
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "attnlab"
EPOCH = (1980, 1, 1, 0, 0, 0)  # zip's earliest date: the same sources give the same wheel


def _project():
    fields, table = {}, None
    for line in (ROOT / "pyproject.toml").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line.startswith("["):
            table = line
        elif table == "[project]" and "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            fields[key.strip()] = json.loads(value)
    return fields


def _metadata(project):
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {project['version']}",
             f"Summary: {project['description']}", f"Requires-Python: {project['requires-python']}"]
    lines += [f"Requires-Dist: {d}" for d in project.get("dependencies", [])]
    return "\n".join(lines) + "\n"


def _sources():
    """The package's files, relative to ROOT, in a fixed order."""
    return sorted(p.relative_to(ROOT) for p in (ROOT / PACKAGE).rglob("*.py"))


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    project = _project()
    stem = f"{project['name']}-{project['version']}"
    info = f"{stem}.dist-info"
    files = [(p.as_posix(), (ROOT / p).read_bytes()) for p in _sources()]
    files += [(f"{info}/METADATA", _metadata(project).encode()),
              (f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: attnlab_build\nRoot-Is-Purelib: true\n"
                                b"Tag: py3-none-any\n")]
    record = "\n".join([_record_line(n, d) for n, d in files] + [f"{info}/RECORD,,"]) + "\n"
    files.append((f"{info}/RECORD", record.encode()))
    name = f"{stem}-py3-none-any.whl"
    with zipfile.ZipFile(Path(wheel_directory) / name, "w", zipfile.ZIP_DEFLATED) as wheel:
        for path, data in files:
            entry = zipfile.ZipInfo(path, EPOCH)
            entry.external_attr = 0o644 << 16
            wheel.writestr(entry, data, zipfile.ZIP_DEFLATED)
    return name


def build_sdist(sdist_directory, config_settings=None):
    project = _project()
    stem = f"{project['name']}-{project['version']}"
    name = f"{stem}.tar.gz"
    members = [Path("pyproject.toml"), Path("build_backend") / "attnlab_build.py", *_sources()]
    with tarfile.open(Path(sdist_directory) / name, "w:gz") as sdist:
        for path, data in [(p.as_posix(), (ROOT / p).read_bytes()) for p in members] + \
                          [("PKG-INFO", _metadata(project).encode())]:
            entry = tarfile.TarInfo(f"{stem}/{path}")
            entry.size, entry.mode = len(data), 0o644
            sdist.addfile(entry, io.BytesIO(data))
    return name

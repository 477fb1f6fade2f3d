"""The attnlab executable: finding it, running it, and turning its failures into exceptions."""

import os
import shutil
import subprocess
from pathlib import Path


class AttnlabError(RuntimeError):
    """The executable refused or failed: the message is its one line on stderr."""

    def __init__(self, message, command=(), returncode=None, stderr=""):
        super().__init__(message)
        self.command = list(command)
        self.returncode = returncode
        self.stderr = stderr


def executable():
    """ATTNLAB_BIN, else `attnlab` on PATH, else build/attnlab of the checkout this package sits in."""
    named = os.environ.get("ATTNLAB_BIN")
    if named:
        if not (os.path.isfile(named) and os.access(named, os.X_OK)):
            raise AttnlabError(f"ATTNLAB_BIN={named} is not an executable file")
        return named
    on_path = shutil.which("attnlab")
    if on_path:
        return on_path
    # app/python/attnlab/_cli.py -> the checkout's root; an installed package has no build tree beside it.
    built = Path(__file__).resolve().parents[3] / "build" / "attnlab"
    if built.is_file() and os.access(built, os.X_OK):
        return str(built)
    raise AttnlabError("the attnlab executable was not found: set ATTNLAB_BIN to its path "
                       "(build/attnlab in a checkout) or put it on PATH")


def flags(options):
    """Keyword options as command-line flags: top_k=5 -> --top-k 5, truncate=True -> --truncate; False and None
    leave the flag out."""
    out = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        out.append("--" + key.replace("_", "-"))
        if value is not True:
            out.append(str(value))
    return out


def call(*args):
    """Runs `attnlab ARGS`; returns its stdout, or raises AttnlabError with the line it printed on stderr."""
    command = [executable(), *map(str, args)]
    done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if done.returncode != 0:
        raise failure(command, done.returncode, done.stderr)
    return done.stdout


def failure(command, returncode, stderr):
    """The exception for a run that exited with `returncode`: its last line on stderr, which names what was wrong."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    message = lines[-1] if lines else f"{Path(command[0]).name} {command[1]} exited with status {returncode}"
    return AttnlabError(message, command, returncode, stderr)

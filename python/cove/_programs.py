"""The console scripts ``cove`` and ``cove-server`` of ``pip install``.

Each replaces this Python process with the ``cove`` program that the wheel
carries in ``cove/bin`` (the program of the CMake build, tools/cove), with
the same arguments; ``cove-server`` is that program run under that name,
as the CMake build's symbolic link does. Outside a pip installation (the
package of a CMake build tree), ``$COVE_BIN/cove`` is run.
"""
import os
import pathlib
import sys


def program():
    """The path of the ``cove`` program: the package's own, else ``$COVE_BIN/cove``. None when neither is there."""
    own = pathlib.Path(__file__).resolve().parent / "bin" / "cove"
    if own.is_file() and os.access(own, os.X_OK):
        return own
    folder = os.environ.get("COVE_BIN")
    if folder:
        other = pathlib.Path(folder) / "cove"
        if other.is_file() and os.access(other, os.X_OK):
            return other
    return None


def _run(name):
    path = program()
    if path is None:
        sys.stderr.write(f"{name}: this installation of the cove package has no cove program (cove/bin/cove); "
                         "install it with pip, or set COVE_BIN to the folder of a CMake build's cove\n")
        return 127
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(str(path), [name, *sys.argv[1:]])


def cove():
    """``cove``: look at, stop or run servers (``cove --help``)."""
    return _run("cove")


def cove_server():
    """``cove-server``: a staging server, or under mpiexec a group of them (``cove-server --help``)."""
    return _run("cove-server")

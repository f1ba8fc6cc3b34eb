"""Fixtures: an in-process server per test, and a real cove-server process
(stopped by its PID) for the tests that span processes."""
import os
import pathlib
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import cove

ROOT = pathlib.Path(__file__).resolve().parents[2]


def cove_bin():
    """The folder of cove-server: $COVE_BIN (set by CTest), else build/tools."""
    return pathlib.Path(os.environ.get("COVE_BIN", ROOT / "build" / "tools"))


@pytest.fixture
def server():
    with cove.Server() as s:
        yield s


@pytest.fixture
def client(server):
    with cove.connect(server.address) as c:
        yield c


@pytest.fixture
def field():
    """A 4 x 6 float64 variable 't' with version 1 = arange, defined on a fresh client."""
    return np.arange(24.0).reshape(4, 6)


class ServerProcess:
    def __init__(self, folder):
        self.conn = folder / "cove.conn"
        args = [str(cove_bin() / "cove-server"), "--connection-file", str(self.conn)]
        if os.geteuid() == 0:
            args.append("--allow-run-as-root")
        self.log = open(folder / "server.log", "w")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while not self.conn.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"cove-server did not start: {(folder / 'server.log').read_text()}")
            time.sleep(0.02)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


@pytest.fixture
def server_process(tmp_path):
    s = ServerProcess(tmp_path)
    yield s
    s.stop()


def python_env():
    """The environment for child Python processes: this package on their path."""
    env = dict(os.environ)
    here = str(pathlib.Path(cove.__file__).resolve().parents[1])
    env["PYTHONPATH"] = here + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def mpiexec(n, *args):
    root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    return ["mpiexec", *root, "--oversubscribe", "-n", str(n), sys.executable, *args]

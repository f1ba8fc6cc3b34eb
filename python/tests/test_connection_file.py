"""cove.Server for other processes (docs/python.md, "Servers for other
processes"): the connection file it writes, its secret, a reader in another
process that starts first, and the console scripts of `pip install`."""
import os
import pathlib
import stat
import subprocess
import sys

import numpy as np
import pytest

import cove
from conftest import cove_bin, python_env

READER = r"""
import sys, numpy as np, cove
conn = sys.argv[1]
with cove.connect(conn, timeout=60) as c:          # waits for the file to appear
    a = c.get("heat", 3, (0, 0), (4, 5), timeout=60)  # waits for the definition and the data
    print("sum", float(a.sum()), flush=True)
"""


def test_a_reader_process_started_first_reads_through_the_connection_file(tmp_path):
    conn = tmp_path / "cove.conn"
    reader = subprocess.Popen([sys.executable, "-c", READER, str(conn)], env=python_env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        with cove.Server(transport="local", connection_file=conn) as server:
            assert conn.exists()
            assert stat.S_IMODE(conn.stat().st_mode) == 0o600
            assert server.secret in conn.read_text()
            with cove.connect(server.address) as c:
                c.define("heat", np.float64, shape=(4, 5))
                c.put("heat", 3, (0, 0), np.arange(20.0).reshape(4, 5))
                out, err = reader.communicate(timeout=120)
            assert reader.returncode == 0, err
            assert out.split() == ["sum", str(float(np.arange(20.0).sum()))]
        assert not conn.exists(), "stop() removes the connection file it wrote"
    finally:
        if reader.poll() is None:
            reader.kill()
            reader.wait()


def test_the_secret_lets_another_process_connect_by_address(tmp_path):
    code = ("import sys, cove\n"
            "with cove.connect(sys.argv[1], secret=sys.argv[2], timeout=20) as c: print(sorted(v.name for v in c.list()))")
    with cove.Server(transport="local") as server, cove.connect(server.address) as c:
        c.define("x", np.int32, shape=(3,))
        out = subprocess.run([sys.executable, "-c", code, server.address, server.secret], env=python_env(),
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "['x']"


def test_without_the_secret_permission_denied_points_at_the_connection_file(tmp_path):
    code = ("import sys, cove\n"
            "try:\n"
            "    cove.connect(sys.argv[1], timeout=20)\n"
            "except cove.PermissionDenied as e:\n"
            "    print(e)\n")
    with cove.Server(transport="local") as server:
        out = subprocess.run([sys.executable, "-c", code, server.address], env=python_env(), capture_output=True,
                             text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    message = out.stdout
    assert "no secret for the Cove server" in message
    assert "connection file" in message and "secret" in message
    assert "ConnectOptions" not in message


def test_write_connection_file_later_and_its_errors(tmp_path):
    with cove.Server() as inproc:
        with pytest.raises(cove.InvalidArgument, match="inproc"):
            inproc.write_connection_file(tmp_path / "a.conn")
    assert not (tmp_path / "a.conn").exists()
    taken = tmp_path / "taken.conn"
    taken.write_text("not mine\n")
    with pytest.raises(cove.AlreadyExists, match="taken.conn"):
        cove.Server(transport="local", connection_file=taken)
    assert taken.read_text() == "not mine\n"
    with pytest.raises(cove.InvalidArgument, match="connection_file must be a str or os.PathLike, not int 7"):
        cove.Server(transport="local", connection_file=7)
    with cove.Server(transport="local") as server:
        server.write_connection_file(str(tmp_path / "b.conn"))
        with cove.connect(str(tmp_path / "b.conn")) as c:
            assert c.servers == [server.address]
        # Another group's file now at the path is left alone by stop().
        (tmp_path / "b.conn").unlink()
        (tmp_path / "b.conn").write_text("another group's\n")
    assert (tmp_path / "b.conn").read_text() == "another group's\n"


def test_console_scripts_run_the_cove_program_under_their_names():
    from cove import _programs
    env = dict(python_env(), COVE_BIN=str(cove_bin()))
    for entry, name in (("cove_server", "cove-server"), ("cove", "cove")):
        out = subprocess.run([sys.executable, "-c", f"from cove._programs import {entry}; {entry}()", "--help"],
                             env=env, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith(name + ":") or (name + ":") in out.stdout.splitlines()[0], out.stdout
    env["COVE_BIN"] = "/nonexistent"
    if _programs.program() is None or not str(_programs.program()).startswith(str(pathlib.Path(cove.__file__).parent)):
        out = subprocess.run([sys.executable, "-c", "from cove._programs import cove; raise SystemExit(cove())"],
                             env=env, capture_output=True, text=True, timeout=60)
        assert out.returncode == 127
        assert "COVE_BIN" in out.stderr


def test_version():
    assert isinstance(cove.__version__, str)
    pyproject = pathlib.Path(__file__).resolve().parents[2] / "pyproject.toml"
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        pytest.skip("tomllib is Python 3.11+")
    assert cove.__version__ == tomllib.loads(pyproject.read_text())["project"]["version"]

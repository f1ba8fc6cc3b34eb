"""Processes and MPI: a collective connect over mpi4py by 3 ranks that read
a put and a put_local piece of this process's, through a real cove-server."""
import pathlib
import subprocess

import numpy as np
import pytest

import cove
from conftest import mpiexec, python_env

HERE = pathlib.Path(__file__).resolve().parent


def test_three_mpi_ranks_read_a_put_and_a_put_local(server_process):
    pytest.importorskip("mpi4py")
    with cove.connect(str(server_process.conn)) as c:
        c.define("f", np.float64, shape=(12, 10))
        c.put("f", 1, (0, 0), np.arange(120.0).reshape(12, 10))
        local = -np.arange(120.0).reshape(12, 10)
        c.put_local("f", 2, (0, 0), local)
        run = subprocess.run(mpiexec(3, str(HERE / "mpi_reader.py"), str(server_process.conn)), env=python_env(),
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stdout + run.stderr
        for rank in range(3):
            assert c.get_meta(f"checked.{rank}", 1, timeout=0).data == b"0"
            assert c.get_meta(f"same_error.{rank}", 1, timeout=0).data == b"yes"
        c.release("f", 2, (0, 0), (12, 10))

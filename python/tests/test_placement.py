"""Workers and placement from Python (docs/placement.md, "From C and
Python") against a real group of 2 cove-server processes under mpiexec,
started and stopped by tests/integration/server.sh (by PID), each with 1
worker slot, 'placed' placed by the time policy and 'grid' by hybrid."""
import math
import os
import shutil
import subprocess
import time

import numpy as np
import pytest

import cove
from conftest import ROOT, cove_bin

CONFIG = """[server]
worker_slots = 1
placement_variables = { placed = "time", grid = "hybrid" }
"""


@pytest.fixture(scope="module")
def group(tmp_path_factory):
    if shutil.which("mpiexec") is None:
        pytest.skip("a server group needs mpiexec")
    folder = tmp_path_factory.mktemp("group")
    config = folder.parent / (folder.name + ".toml")
    config.write_text(CONFIG)
    script = str(ROOT / "tests" / "integration" / "server.sh")
    env = dict(os.environ, COVE_BIN=str(cove_bin()), COVE_TEST_SERVERS="2")
    subprocess.run([script, "start", str(folder), "--config", str(config)], env=env, check=True)
    try:
        yield str(folder / "cove.conn")
    finally:
        subprocess.run([script, "stop", str(folder)], env=env, check=False)


def take_slot(client, server, name):
    """become_worker, waiting (up to 5 s) for a slot a closed client leaves."""
    deadline = time.monotonic() + 5
    while True:
        try:
            return client.become_worker(server, name)
        except cove.Unavailable:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def test_worker_slots(group):
    with cove.connect(group) as a, cove.connect(group) as b, cove.connect(group) as c:
        assert c.servers == a.servers and len(a.servers) == 2
        w = take_slot(a, 0, "w0")
        assert w == cove.WorkerSlot(slot=0, slots=1, workers=1)
        with pytest.raises(cove.Unavailable, match="all 1 worker slots of server"):
            b.become_worker(0, "w1")
        with pytest.raises(cove.AlreadyExists, match="already worker 'w0'"):
            a.become_worker(0, "again")
        with pytest.raises(cove.OutOfRange, match="server 2 is not one of the 2 servers"):
            b.become_worker(2, "w1")
        with pytest.raises(cove.OutOfRange, match="server -1"):
            b.become_worker(-1, "w1")
        with pytest.raises(cove.InvalidArgument, match="name is empty"):
            b.become_worker(1, "")
        assert take_slot(b, 1, "w1").slot == 0
        stats = a.stat()
        assert stats.worker_slots == 2 and stats.workers == 2
        # a goes: its slot is c's once server 0 has seen the connection close.
        a.close()
        assert take_slot(c, 0, "w2") == cove.WorkerSlot(0, 1, 1)


def test_put_on_locate_and_bytes_read(group):
    data = np.arange(64.0)
    with cove.connect(group) as w:
        w.define("onvar", np.float64, shape=(64,))
        w.put_on(1, "onvar", 1, (0,), data[:32])
        w.put_on(0, "onvar", 1, (32,), data[32:])
        assert w.locate("onvar", 1, (0,), (64,)) == [256, 256]
        assert w.locate("onvar", 1, (8,), (16,), timeout=0) == [0, 128]
        assert w.locate("onvar", 1, (32,), (16,)) == [128, 0]
        with pytest.raises(cove.OutOfRange, match="server 2 is not one of the 2 servers"):
            w.put_on(2, "onvar", 1, (0,), data[:32])
        with pytest.raises(cove.OutOfRange, match="server -1"):
            w.put_on(-1, "onvar", 1, (0,), data[:32])
        with pytest.raises(cove.InvalidArgument, match="dtype"):
            w.put_on(0, "onvar", 2, (0,), np.arange(8, dtype=np.int32))
        with pytest.raises(cove.NotFound, match="nothere"):
            w.locate("nothere", 1, (0,), (4,), timeout=0)
        with pytest.raises(cove.Timeout):
            w.locate("onvar", 9, (0,), (64,), timeout=0.1)
        with pytest.raises(cove.InvalidArgument, match="onvar"):
            w.locate("onvar", 1, (60,), (16,))

        # A worker of server 0: what it reads from server 1 is remote.
        take_slot(w, 0, "reader")
        before = w.bytes_read()
        assert len(before) == 2
        np.testing.assert_array_equal(w.get("onvar", 1, (0,), (64,), timeout=0), data)
        after = w.bytes_read()
        assert [after[i] - before[i] for i in range(2)] == [256, 256]
        np.testing.assert_array_equal(w.get("onvar", 1, (8,), (16,), timeout=0), data[8:24])
        last = w.bytes_read()
        assert [last[i] - after[i] for i in range(2)] == [0, 128]


def test_put_placed(group):
    with cove.connect(group) as c:
        decisions = c.stat().placements
        for var in ("placed", "unplaced"):
            c.define(var, np.float64, shape=(64,))
            for v in range(3):
                for b in range(4):
                    block = np.arange(16.0) + 16 * b + 1000 * v
                    on = c.put_placed(var, v, (16 * b,), block)
                    assert on in (0, 1)
                    held = c.locate(var, v, (16 * b,), (16,), timeout=0)
                    assert held[on] == block.nbytes and held[1 - on] == 0, (var, v, b, on, held)
                np.testing.assert_array_equal(c.get(var, v, (0,), (64,), timeout=0), np.arange(64.0) + 1000 * v)
        # A Fortran-order array, placed by hybrid, read back in C order.
        c.define("grid", np.float64, shape=(4, 6))
        grid = np.arange(24.0).reshape(4, 6)
        assert c.put_placed("grid", 1, (0, 0), np.asfortranarray(grid)) in (0, 1)
        np.testing.assert_array_equal(c.get("grid", 1, (0, 0), (4, 6), timeout=0), grid)
        # One decision per put of a variable with a policy; 'unplaced' went as put().
        assert c.stat().placements - decisions == 13
        # The newest decisions, as server 0 logged them: the grid's, then placed's last 3.
        recent = c.placements(4)
        assert [(d["var"], d["start"], d["count"]) for d in recent] == [
            ("placed", (16,), (16,)), ("placed", (32,), (16,)), ("placed", (48,), (16,)), ("grid", (0, 0), (4, 6))]
        assert recent[-1]["policy"] == "hybrid" and recent[0]["policy"] == "time"
        assert all(d["bytes"] == 128 for d in recent[:3]) and recent[-1]["bytes"] == 192
        assert [d["sequence"] for d in recent] == list(range(recent[0]["sequence"], recent[0]["sequence"] + 4))
        assert all(d["server"] in (0, 1) and d["slot"] == 0 and d["ect"] >= d["min_ect"] for d in recent)
        with pytest.raises(cove.InvalidArgument, match="placements"):
            c.placements(0)
        # Bad input: refused as put() refuses it, nothing stored.
        with pytest.raises(cove.InvalidArgument, match="dtype"):
            c.put_placed("placed", 7, (0,), np.arange(16, dtype=np.float32))
        with pytest.raises(cove.InvalidArgument, match="placed"):
            c.put_placed("placed", 7, (56,), np.arange(16.0))
        with pytest.raises(cove.NotFound):
            c.get("placed", 7, (0,), (16,), timeout=0)


def test_task_done(group):
    with cove.connect(group) as c:
        reports = c.stat().task_reports
        for b in range(4):
            c.task_done("placed", (16 * b,), (16,), 0.001 * (b + 1))
        assert c.stat().task_reports - reports == 4
        for bad in (-1.0, math.nan, math.inf):
            with pytest.raises(cove.InvalidArgument, match="negative or not finite"):
                c.task_done("placed", (0,), (16,), bad)
        with pytest.raises(cove.InvalidArgument, match="dimensions"):
            c.task_done("placed", (0,), (16, 2), 1.0)
        assert c.stat().task_reports - reports == 4


def test_monitor_reads(group):
    with cove.connect(group) as c:
        c.define("monitored", np.float64, shape=(32,))
        c.put("monitored", 0, (0,), np.arange(32.0))
        reports = c.stat().task_reports
        c.monitor_reads(True)
        c.get("monitored", 0, (0,), (16,), timeout=0)   # starts a task
        assert c.stat().task_reports - reports == 0
        c.get("monitored", 0, (16,), (16,), timeout=0)  # ends the first, starts the second
        assert c.stat().task_reports - reports == 1
        with pytest.raises(cove.NotFound):              # ends the second; a failed get starts none
            c.get("monitored", 5, (0,), (16,), timeout=0)
        assert c.stat().task_reports - reports == 2
        c.end_read_task()
        assert c.stat().task_reports - reports == 2
        c.get("monitored", 0, (0,), (32,), timeout=0)
        c.end_read_task()
        c.end_read_task()                               # nothing left to end
        assert c.stat().task_reports - reports == 3
        c.monitor_reads(False)
        c.get("monitored", 0, (0,), (32,), timeout=0)
        c.end_read_task()
        assert c.stat().task_reports - reports == 3


def test_register_dataflow(group, tmp_path):
    graphs = ROOT / "tests" / "placement"
    with cove.connect(group) as c:
        c.register_dataflow(graphs / "reduction8.toml")  # os.PathLike
        c.register_dataflow(str(graphs / "reduction8.toml"))
        with pytest.raises(cove.InvalidArgument, match="cycle: local -> join -> fix -> local") as e:
            c.register_dataflow(graphs / "cycle.json")
        assert "cycle.json" in str(e.value)
        unknown = tmp_path / "unknown.json"
        unknown.write_text('{"objects": [{"name": "b0", "var": "placed", "bytes": 8}],'
                           ' "tasks": [{"name": "local", "reads": ["b0", "b9"]}]}')
        with pytest.raises(cove.InvalidArgument, match="task 'local' reads unknown object 'b9'"):
            c.register_dataflow(unknown)
        with pytest.raises(cove.NotFound, match="absent.json"):
            c.register_dataflow(tmp_path / "absent.json")
        with pytest.raises(cove.InvalidArgument, match="expected a .json or .toml file"):
            c.register_dataflow(tmp_path / "graph.txt")
        with pytest.raises(TypeError):
            c.register_dataflow(42)

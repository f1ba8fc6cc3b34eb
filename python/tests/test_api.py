"""Every call of the Python API against an in-process server."""
import gc
import queue
import threading
import time
import weakref

import numpy as np
import pytest

import cove


def test_define_put_get(client, field):
    client.define("t", np.float64, shape=(4, 6))
    client.put("t", 1, (0, 0), field)
    np.testing.assert_array_equal(client.get("t", 1, (1, 2), (2, 3)), field[1:3, 2:5])
    assert client.definition("t") == (np.dtype("<f8"), 2, (4, 6))


def test_define_without_shape_and_by_name(client):
    client.define("free", "int32", ndim=3)
    a = np.arange(2 * 3 * 4, dtype=np.int32).reshape(2, 3, 4)
    client.put("free", 7, (10, 20, 30), a)
    np.testing.assert_array_equal(client.get("free", 7, (10, 20, 30), (2, 3, 4)), a)
    assert client.definition("free") == (np.dtype("<i4"), 3, None)


def test_pieces_from_several_puts(client):
    client.define("g", np.float32, shape=(6, 8))
    whole = np.random.default_rng(1).random((6, 8), dtype=np.float32)
    client.put("g", 1, (0, 0), whole[:3])
    client.put("g", 1, (3, 0), whole[3:])
    np.testing.assert_array_equal(client.get("g", 1, (2, 1), (3, 5)), whole[2:5, 1:6])


@pytest.mark.parametrize("writer_order", ["C", "F"])
@pytest.mark.parametrize("reader_order", ["C", "F"])
def test_c_and_f_order(client, writer_order, reader_order):
    a = np.arange(3 * 4 * 5, dtype=np.int64).reshape(3, 4, 5)
    client.define("o", np.int64, shape=a.shape)
    client.put("o", 1, (0, 0, 0), np.array(a, order=writer_order))
    got = client.get("o", 1, (1, 0, 2), (2, 4, 3), order=reader_order)
    assert got.flags.f_contiguous if reader_order == "F" else got.flags.c_contiguous
    np.testing.assert_array_equal(got, a[1:3, :, 2:5])


def test_axis_permutation_and_out(client):
    a = np.arange(2 * 3 * 4, dtype=np.float64).reshape(2, 3, 4)
    client.define("p", np.float64, shape=a.shape)
    permuted = np.ascontiguousarray(a.transpose(1, 2, 0)).transpose(2, 0, 1)  # dense, neither C nor F
    assert not permuted.flags.c_contiguous and not permuted.flags.f_contiguous
    client.put("p", 1, (0, 0, 0), permuted)
    out = np.empty((3, 4, 2)).transpose(2, 0, 1)  # another dense axis order
    assert client.get("p", 1, (0, 0, 0), (2, 3, 4), out=out) is out
    np.testing.assert_array_equal(out, a)


def test_get_converts_dtype(client, field):
    client.define("t", np.float64, shape=(4, 6))
    client.put("t", 1, (0, 0), field + 0.25)
    got = client.get("t", 1, (0, 0), (4, 6), dtype=np.int32)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, field.astype(np.int32))
    assert client.get("t", 1, (0, 0), (1, 1), dtype="f4").dtype == np.float32


def test_get_latest_and_latest(client, field):
    client.define("t", np.float64, shape=(4, 6))
    assert client.latest("t") is None
    for v in (3, 5, 4):
        client.put("t", v, (0, 0), field * v)
    version, a = client.get_latest("t", (0, 0), (4, 6))
    assert version == 5
    np.testing.assert_array_equal(a, field * 5)
    assert client.latest("t") == 5


def test_put_local_and_release(client, field):
    client.define("t", np.float64, shape=(4, 6))
    a = field.copy()
    client.put_local("t", 1, (0, 0), a)
    assert client.held_locally == 1
    np.testing.assert_array_equal(client.get("t", 1, (0, 0), (4, 6)), field)
    pieces = client.list()[0].versions[0].pieces
    assert len(pieces) == 1 and not pieces[0].on_server and pieces[0].count == (4, 6)
    assert client.release("t", 1, (0, 0), (4, 6)) == 1
    assert client.held_locally == 0
    with pytest.raises(cove.NotFound):
        client.get("t", 1, (0, 0), (4, 6), timeout=0)


def test_put_local_keeps_the_array_until_release(client):
    client.define("t", np.float64, shape=(1000,))
    a = np.arange(1000.0)
    alive = weakref.ref(a)
    client.put_local("t", 1, (0,), a)
    del a
    gc.collect()
    assert alive() is not None  # the client holds it
    np.testing.assert_array_equal(client.get("t", 1, (0,), (1000,)), np.arange(1000.0))
    client.release("t", 1, (0,), (1000,))
    gc.collect()
    assert alive() is None  # let go once released


def test_put_local_array_cannot_be_resized(client):
    client.define("t", np.float64, shape=(8,))
    a = np.arange(8.0)
    client.put_local("t", 1, (0,), a)
    for refcheck in (True, False):
        with pytest.raises(ValueError):
            a.resize(1 << 20, refcheck=refcheck)
    np.testing.assert_array_equal(client.get("t", 1, (0,), (8,)), np.arange(8.0))
    client.release("t", 1, (0,), (8,))
    a.resize(16, refcheck=False)  # free again


def test_put_local_twice_is_refused(client):
    client.define("t", np.float64, shape=(4,))
    a = np.zeros(4)
    client.put_local("t", 1, (0,), a)
    with pytest.raises(cove.AlreadyExists):
        client.put_local("t", 1, (0,), np.ones(4))
    np.testing.assert_array_equal(client.get("t", 1, (0,), (4,)), a)


def test_put_async(client, field):
    client.define("t", np.float64, shape=(4, 6))
    handles = [client.put_async("t", v, (0, 0), field * v) for v in range(1, 5)]  # the arrays are temporaries
    for h in handles:
        h.wait()
        assert h.test()
    for v in range(1, 5):
        np.testing.assert_array_equal(client.get("t", v, (0, 0), (4, 6)), field * v)
    assert client.pending_puts == 0


def test_put_async_error_comes_from_wait(client):
    client.define("t", np.float64, shape=(4, 6))
    with pytest.raises(cove.InvalidArgument):  # outside the shape: from the call or from wait()
        client.put_async("t", 1, (2, 0), np.zeros((4, 6))).wait()


def test_subscribe_calls_back_with_the_gil(client, field):
    client.define("t", np.float64, shape=(4, 6))
    seen = queue.Queue()

    def callback(var, version):
        # Python objects are usable here: the GIL is held.
        value = float(client.get(var, version, (0, 0), (1, 1))[0, 0])
        seen.put((var, version, value, threading.current_thread() is not threading.main_thread()))

    with client.subscribe("t", ((0, 0), (4, 6)), callback):
        for v in (1, 2, 3):
            client.put("t", v, (0, 0), field + v)
            assert seen.get(timeout=10) == ("t", v, float(v), True)


def test_subscription_cancel_stops_callbacks(client, field):
    client.define("t", np.float64, shape=(4, 6))
    seen = []
    sub = client.subscribe("t", ((0, 0), (4, 6)), lambda var, v: seen.append(v))
    sub.cancel()
    sub.cancel()  # idempotent
    client.put("t", 1, (0, 0), field)
    time.sleep(0.3)
    assert seen == []


def test_callback_that_raises_is_reported_and_the_subscription_goes_on(client, field, monkeypatch):
    client.define("t", np.float64, shape=(4, 6))
    reported, calls, first, second = [], [], threading.Event(), threading.Event()
    monkeypatch.setattr("sys.unraisablehook", lambda info: reported.append(info.exc_value))

    def callback(var, version):
        calls.append(version)
        if version == 1:
            first.set()
            raise RuntimeError("analysis failed")
        second.set()

    with client.subscribe("t", ((0, 0), (4, 6)), callback):
        client.put("t", 1, (0, 0), field)
        assert first.wait(10)
        client.put("t", 2, (0, 0), field)
        assert second.wait(10)
    assert calls == [1, 2]
    assert len(reported) == 1 and str(reported[0]) == "analysis failed"


def test_metadata(client):
    client.put_meta("step", 1, b"one")
    client.put_meta("step", 2, bytearray(b"two"))
    client.put_meta("step", 4, memoryview(np.arange(3, dtype=np.uint8)))
    assert client.get_meta("step", 1) == cove.Metadata(1, b"one")
    assert client.get_meta_next("step", 2).version == 4
    assert client.get_meta_latest("step") == (4, bytes([0, 1, 2]))
    with pytest.raises(cove.Timeout):
        client.get_meta("step", 9, timeout=0.05)
    with pytest.raises(TypeError):
        client.put_meta("step", 5, 12)


def test_list_stat_remove_undefine(server, client, field):
    client.define("t", np.float64, shape=(4, 6))
    client.put("t", 1, (0, 0), field)
    client.put("t", 2, (0, 0), field)
    [info] = client.list()
    assert (info.name, info.dtype, info.ndim, info.shape) == ("t", "<f8", 2, (4, 6))
    assert [v.version for v in info.versions] == [1, 2]
    piece = info.versions[0].pieces[0]
    assert piece.on_server and piece.start == (0, 0) and piece.count == (4, 6) and piece.bytes == 192
    stats = client.stat()
    assert (stats.variables, stats.versions, stats.pieces, stats.owned_bytes) == (1, 2, 2, 384)
    [(address, each)] = client.stat_each()
    assert address == server.address and each.pieces == 2
    assert server.stats().pieces == 2
    client.remove("t", 1)
    with pytest.raises(cove.NotFound):
        client.remove("t", 1)
    assert client.undefine("t") == 1
    assert client.list() == []
    assert client.servers == [server.address] and client.address


def test_stop_server():
    s = cove.Server()
    c = cove.connect(s.address)
    c.stop_server()
    s.wait()  # returns: the server stopped
    c.close()


def test_server_options():
    with cove.Server(memory_budget=1 << 20, max_versions=2, workers=1, reorg="rasia", layouts=["F"]) as s:
        with cove.connect(s.address) as c:
            c.define("t", np.float64, shape=(8,))
            for v in range(1, 5):
                c.put("t", v, (0,), np.full(8, float(v)))
            assert [v.version for v in c.list()[0].versions] == [3, 4]
            assert c.stat().memory_budget == 1 << 20


def test_closed_client_refuses_calls(server):
    c = cove.connect(server.address)
    c.close()
    c.close()
    with pytest.raises(cove.InvalidArgument, match="closed"):
        c.latest("t")


def test_calls_release_the_gil(client):
    # The get waits for a version that only another Python thread puts: it
    # arrives only if the waiting get lets that thread run.
    client.define("t", np.float64, shape=(4,))

    def writer():
        time.sleep(0.1)
        client.put("t", 1, (0,), np.full(4, 7.0))

    t = threading.Thread(target=writer)
    t.start()
    got = client.get("t", 1, (0,), (4,), timeout=30)
    t.join()
    np.testing.assert_array_equal(got, np.full(4, 7.0))


def test_close_while_another_thread_waits(server):
    # The waiting call keeps its own handle: close() on another thread does
    # not pull the connection from under it.
    c = cove.connect(server.address)
    c.define("t", np.float64, shape=(4,))
    outcome = []

    def waiter():
        try:
            c.get("t", 1, (0,), (4,), timeout=1.0)
        except cove.Error as e:
            outcome.append(type(e))

    t = threading.Thread(target=waiter)
    t.start()
    time.sleep(0.2)
    c.close()
    t.join(10)
    assert outcome == [cove.Timeout]
    with pytest.raises(cove.InvalidArgument, match="closed"):
        c.get("t", 1, (0,), (4,))


def test_locks(server):
    import threading

    with cove.connect(server.address) as a, cove.connect(server.address) as b:
        a.lock_write("obj", (0,), (4,))
        with pytest.raises(cove.Timeout) as e:
            b.lock_read("obj", (2,), (4,), timeout=0.05)
        assert "'obj'[start=(2) count=(4)]" in str(e.value)
        b.lock_read("obj", (4,), (4,), timeout=0)  # disjoint: granted
        with pytest.raises(cove.PermissionDenied):
            b.unlock("obj", (0,), (4,))
        a.unlock("obj", (0,), (4,))
        b.unlock("obj", (4,), (4,))
        with pytest.raises(cove.NotFound):
            a.unlock("obj")
        # A client that closes releases its locks; the waiter behind it goes on.
        a.lock_write("w")
        granted = threading.Event()

        def wait_for_lock():
            b.lock_write("w", timeout=10)
            granted.set()

        t = threading.Thread(target=wait_for_lock)
        t.start()
        assert not granted.wait(0.2)
        a.close()
        assert granted.wait(10)
        t.join()
        b.unlock("w")

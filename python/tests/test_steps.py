"""Steps (docs/python.md, "Steps"): a reader walks the complete versions of a
stream in order, every n-th or the newest, starts before the writer, and
sees the end of the stream; subscriptions may come first too."""
import threading
import time

import numpy as np
import pytest

import cove


def step_array(version, shape=(4, 6)):
    return np.arange(np.prod(shape), dtype=np.float64).reshape(shape) + 1000 * version


def test_a_reader_started_first_sees_every_step_then_the_end(server, client):
    seen = []

    def reader():
        with cove.connect(server.address) as r:
            for step in r.steps("heat", timeout=30):
                seen.append((step.version, step.get()))

    t = threading.Thread(target=reader)
    t.start()
    time.sleep(0.2)
    client.define("heat", np.float64, shape=(4, 6))
    for v in (2, 5, 9):
        client.put("heat", v, (0, 0), step_array(v))
    client.end_steps("heat")
    t.join(30)
    assert not t.is_alive()
    assert [v for v, _ in seen] == [2, 5, 9]
    for v, a in seen:
        np.testing.assert_array_equal(a, step_array(v))
    # After the end, a new walk still sees the kept steps.
    assert [s.version for s in client.steps("heat", after=2)] == [5, 9]


def test_every_newest_regions_and_several_variables(client):
    client.define("a", np.float64, shape=(4, 6))
    client.define("b", np.float64, shape=(4, 6))
    for v in range(1, 8):
        client.put("a", v, (0, 0), step_array(v))
        if v != 3:
            client.put("b", v, (0, 0), step_array(v))
    client.put("b", 3, (0, 0), step_array(3)[:2])  # half of version 3
    client.end_steps(["a", "b"])
    assert [s.version for s in client.steps("a", every=3)] == [1, 4, 7]
    assert [s.version for s in client.steps("a", newest=True)] == [7]
    assert [s.version for s in client.steps(["a", "b"])] == [1, 2, 4, 5, 6, 7]
    # In the upper half, version 3 of b is complete.
    walk = client.steps(["a", "b"], (0, 0), (2, 6))
    first = next(walk)
    np.testing.assert_array_equal(first.get("b"), step_array(1)[:2])
    assert [s.version for s in walk] == [2, 3, 4, 5, 6, 7]
    by_var = client.steps(["a", "b"], regions={"a": ((0, 0), (4, 6)), "b": ((2, 0), (2, 6))})
    assert [s.version for s in by_var] == [1, 2, 4, 5, 6, 7]
    step = next(iter(client.steps(["a", "b"], after=5)))
    assert repr(step) == "<cove.Step 6 of 'a', 'b'>"
    with pytest.raises(cove.InvalidArgument, match="name the variable"):
        step.get()
    np.testing.assert_array_equal(step.get("a", (1, 1), (1, 2)), step_array(6)[1:2, 1:3])


def test_timeouts_and_bad_arguments(client):
    client.define("t", np.float64, shape=(4, 6))
    client.put("t", 1, (0, 0), step_array(1))
    walk = client.steps("t", timeout=0.2)
    assert next(walk).version == 1
    with pytest.raises(cove.Timeout):
        next(walk)
    with pytest.raises(cove.NotFound, match="no complete step"):
        list(client.steps("t", after=1, timeout=0))
    for bad, match in [(dict(every=0), "every"), (dict(every="2"), "every"), (dict(start=(0, 0)), "both"),
                       (dict(regions={"x": ((0,), (1,))}), "regions")]:
        with pytest.raises(cove.InvalidArgument, match=match):
            client.steps("t", **bad)
    with pytest.raises(cove.InvalidArgument):
        client.steps([])
    with pytest.raises(cove.InvalidArgument, match="named twice"):
        client.steps(["t", "t"])
    with pytest.raises(cove.NotFound, match="has no version"):
        client.define("empty", np.float64, shape=(2,))
        client.end_steps("empty")


def test_a_subscription_may_come_first(client):
    calls = []
    got = threading.Event()

    def seen(var, version):
        calls.append((var, version))
        got.set()

    with client.subscribe("early", ((0,), (4,)), seen):
        time.sleep(0.3)
        client.define("early", np.int32, shape=(4,))
        client.put("early", 1, (0,), np.arange(4, dtype=np.int32))
        assert got.wait(30)
    assert calls == [("early", 1)]

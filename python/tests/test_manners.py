"""Errors and manners (issue 35, item 5): bad arguments raise cove classes
naming them, never nanobind's TypeError; a 1-D start or count may be an
int; __repr__ of every object; addresses in messages keep their port."""
import re

import numpy as np
import pytest

import cove


@pytest.fixture
def line(client):
    client.define("line", np.float64, shape=(10,))
    client.put("line", 1, (0,), np.arange(10.0))
    return client


def test_a_negative_version_names_the_version_and_keeps_the_data(line):
    with pytest.raises(cove.InvalidArgument, match=r"version = -1 is out of range"):
        line.put("line", -1, (0,), np.zeros(10))
    with pytest.raises(cove.InvalidArgument, match=r"version = -3 is out of range"):
        line.get("line", -3, (0,), (10,))
    with pytest.raises(cove.InvalidArgument, match=r"version must be an int in 0\.\.18446744073709551615, not float 1\.5"):
        line.get("line", 1.5, (0,), (10,))
    with pytest.raises(cove.InvalidArgument, match=r"version = 18446744073709551616 is out of range"):
        line.seal("line", 2**64)
    with pytest.raises(cove.InvalidArgument, match=r"version must be .* not bool True"):
        line.remove("line", True)
    assert np.array_equal(line.get("line", 1, (0,), (10,)), np.arange(10.0))


def test_an_int_is_a_1d_start_or_count(line):
    line.put("line", 2, 4, np.full(3, 7.0))
    line.put("line", 2, np.int64(0), np.arange(4.0))
    a = line.get("line", 2, 0, 7, timeout=0)
    assert np.array_equal(a, [0, 1, 2, 3, 7, 7, 7])
    version, b = line.get_latest("line", np.int32(4), (3,))
    assert version == 2 and np.array_equal(b, [7, 7, 7])
    assert line.get("line", 1, np.array([2]), [np.int64(3)]).tolist() == [2.0, 3.0, 4.0]


def test_bad_starts_and_counts_name_themselves(line):
    with pytest.raises(cove.InvalidArgument, match=r"start must be an int or a sequence of ints, one per dimension, not str '0'"):
        line.get("line", 1, "0", (2,))
    with pytest.raises(cove.InvalidArgument, match=r"count\[0\] must be an int, not float 2\.0"):
        line.get("line", 1, (0,), (2.0,))
    with pytest.raises(cove.InvalidArgument, match=r"start\[1\] = 36893488147419103232 does not fit 64 bits"):
        line.put("line", 1, (0, 2**65), np.zeros((1, 1)))
    with pytest.raises(cove.InvalidArgument, match=r"region must be a pair \(start, count\), not int 3"):
        line.subscribe("line", 3, lambda var, version: None)
    with pytest.raises(cove.InvalidArgument, match=r"region count must be"):
        line.subscribe("line", ((0,), None), lambda var, version: None)
    assert np.array_equal(line.get("line", 1, (0,), (10,)), np.arange(10.0))


def test_arguments_the_binding_cannot_take_raise_invalid_argument(line):
    with pytest.raises(cove.InvalidArgument, match=r"Client\.get\(\) cannot take the arguments 12 \(int\)"):
        line.get(12, 1, (0,), (2,))
    with pytest.raises(cove.InvalidArgument, match=r"timeout='soon' \(str\)"):
        line.get("line", 1, (0,), (2,), timeout="soon")
    with pytest.raises(cove.InvalidArgument, match=r"Client\.define\(\)"):
        line.define(["x"], np.float64, (2,))
    # Not arrays at all stay TypeErrors, as documented.
    with pytest.raises(TypeError, match="must be an array"):
        line.put("line", 1, (0,), object())


def test_reprs(server, line):
    assert repr(server) == f"<cove.Server {server.address}>"
    assert repr(line) == f"<cove.Client of 1 server {server.address}>"
    h = line.put_async("line", 3, (0,), np.ones(10))
    assert repr(h) in ("<cove.PutHandle in flight>", "<cove.PutHandle ended>")
    h.wait()
    assert repr(h) == "<cove.PutHandle ended>"
    s = line.subscribe("line", ((0,), (4,)), lambda var, version: None)
    assert repr(s) == "<cove.Subscription 'line' [0:4)>"
    s.cancel()
    assert repr(s) == "<cove.Subscription 'line' [0:4) cancelled>"
    with cove.connect(server.address) as other:
        pass
    assert repr(other) == "<cove.Client closed>"


def test_addresses_in_messages_keep_their_port():
    with cove.Server(transport="ucx") as server:
        address = server.address
    port = re.search(r"ucx:127\.0\.0\.1:(\d+)$", address)
    assert port, address
    with pytest.raises(cove.Unavailable) as e:
        cove.connect(address, secret="x" * 32, timeout=0.2)
    assert address in str(e.value), str(e.value)


def test_log_lines_go_through_logging(client, caplog):
    """A line Cove logs in C++ (a subscription that ends because its variable
    went) reaches the logger "cove" at its level, not stderr."""
    import logging
    import time
    caplog.set_level(logging.WARNING, logger="cove")
    client.define("brief", np.int32, shape=(2,))
    sub = client.subscribe("brief", ((0,), (2,)), lambda var, version: None)
    client.undefine("brief")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        records = [r for r in caplog.records if r.name == "cove" and "subscription to 'brief'" in r.getMessage()]
        if records:
            break
        time.sleep(0.05)
    sub.cancel()
    assert records, [r.getMessage() for r in caplog.records]
    assert records[0].levelno == logging.WARNING


def test_ints_and_constructors_refuse_what_is_not_one(server, line):
    """nanobind alone takes the str "2" for an int: every int argument,
    Server() and connect() raise InvalidArgument naming the argument."""
    cases = [
        (lambda: cove.Server(workers="2"), "workers"),
        (lambda: cove.Server(max_versions=1.5), "max_versions"),
        (lambda: cove.Server(transport=5), "Server.__init__"),
        (lambda: cove.connect(server.address, timeout="x"), "timeout = 'x'"),
        (lambda: cove.connect(5), "target = 5"),
        (lambda: cove.connect(server.address, secret=3), "secret = 3"),
        (lambda: line.placements(max="3"), "max must be an int"),
        (lambda: line.put_on("0", "line", 1, 0, np.zeros(4)), "server must be an int"),
        (lambda: line.define("u", np.float64, shape=("4",)), "shape\\[0\\] must be an int"),
        (lambda: line.define("u", np.float64, ndim="2"), "ndim must be an int"),
        (lambda: line.derive("line", "1", 2), "version must be an int"),
        (lambda: line.get_meta("note", "1"), "version must be an int"),
    ]
    for call, match in cases:
        with pytest.raises(cove.InvalidArgument, match=match):
            call()
    line.define("v", np.float64, shape=np.array([4]))
    line.define("w", np.float64, ndim=np.int64(2))
    assert line.placements(max=np.int32(3)) == []

"""The exception hierarchy mirrors the status table, and each class the
API raises is raised where it should be."""
import numpy as np
import pytest

import cove
from cove import _cove


def test_one_class_per_status():
    for value, name, text in _cove._status_table():
        if name == "Ok":
            continue
        cls = getattr(cove, name)
        assert issubclass(cls, cove.Error) and cls.code == value and cls.status == name, name
        assert cove._errors.error_class(value) is cls


def test_builtin_bases():
    assert issubclass(cove.Timeout, TimeoutError)
    assert issubclass(cove.InvalidArgument, ValueError)
    assert issubclass(cove.NotFound, LookupError)
    assert issubclass(cove.NoMemory, MemoryError)
    assert issubclass(cove.Unavailable, ConnectionError)
    assert issubclass(cove.PermissionDenied, PermissionError)


def test_invalid_argument(client):
    with pytest.raises(cove.InvalidArgument, match="ndim"):
        client.define("x", np.float64, ndim=0)
    client.define("x", np.float64, shape=(4,))
    with pytest.raises(cove.InvalidArgument) as e:
        client.define("x", np.float32, shape=(4,))  # another definition
    assert e.value.code == 1 and e.value.status == "InvalidArgument"


def test_not_found(client):
    with pytest.raises(cove.NotFound, match="nothing"):
        client.get("nothing", 1, (0,), (1,), timeout=0)
    client.define("x", np.float64, shape=(4,))
    with pytest.raises(cove.NotFound):
        client.get("x", 1, (0,), (4,), timeout=0)


def test_timeout(client):
    client.define("x", np.float64, shape=(4,))
    with pytest.raises(cove.Timeout):
        client.get("x", 1, (0,), (4,), timeout=0.05)
    with pytest.raises(cove.Timeout):
        client.get_latest("x", (0,), (4,), timeout=0.05)


def test_no_memory_keeps_what_was_stored():
    with cove.Server(memory_budget=4096) as s, cove.connect(s.address) as c:
        c.define("x", np.float64, shape=(1024,))
        c.put("x", 1, (0,), np.ones(256))
        with pytest.raises(cove.NoMemory):
            c.put("x", 2, (0,), np.ones(1024))
        np.testing.assert_array_equal(c.get("x", 1, (0,), (256,)), np.ones(256))


def test_unavailable():
    with pytest.raises(cove.Unavailable):
        cove.connect("inproc://nobody-serves-this", timeout=0.2)


def test_permission_denied(server_process):
    servers, _, _ = _cove._resolve_target(str(server_process.conn), 5.0)
    with pytest.raises(cove.PermissionDenied):
        cove.connect(",".join(servers), timeout=5, secret="0123456789abcdef0123456789abcdef")


def test_already_exists():
    with cove.Server(transport="inproc://py-twice"):
        with pytest.raises(cove.AlreadyExists):
            cove.Server(transport="inproc://py-twice")


def test_stubs_name_what_the_module_has():
    import ast
    import pathlib

    stub = ast.parse((pathlib.Path(cove.__file__).parent / "__init__.pyi").read_text())
    for node in stub.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            assert hasattr(cove, node.name), node.name
        if isinstance(node, ast.ClassDef) and node.name in ("Client", "Server", "PutHandle", "Subscription"):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    assert hasattr(getattr(cove, node.name), item.name), f"{node.name}.{item.name}"
    for name in cove.__all__:
        assert any(getattr(n, "name", None) == name for n in stub.body), f"{name} is missing from the stubs"

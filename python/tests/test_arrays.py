"""How arrays arrive (buffer protocol, __array_interface__, DLPack) and the
bad input that must give a clear exception, never a crash or lost data."""
import array

import numpy as np
import pytest

import cove


@pytest.fixture
def stored(client):
    """Variable 't' (4 x 6 float64) with version 1 stored; checked intact after each bad call."""
    a = np.arange(24.0).reshape(4, 6)
    client.define("t", np.float64, shape=(4, 6))
    client.put("t", 1, (0, 0), a)
    yield client
    np.testing.assert_array_equal(client.get("t", 1, (0, 0), (4, 6), timeout=0), a)


class ArrayInterfaceOnly:
    """Exposes memory through __array_interface__ alone."""

    def __init__(self, a):
        self._a = a
        self.__array_interface__ = a.__array_interface__


class DLPackOnly:
    """Exposes memory through DLPack alone."""

    def __init__(self, a, device=(1, 0)):
        self._a, self._device = a, device

    def __dlpack__(self, stream=None):
        return self._a.__dlpack__()

    def __dlpack_device__(self):
        return self._device


def test_buffer_protocol(client):
    client.define("b", np.float64, shape=(4,))
    client.put("b", 1, (0,), array.array("d", [1.0, 2.0, 3.0, 4.0]))
    client.put("b", 2, (0,), memoryview(np.arange(4.0)))
    np.testing.assert_array_equal(client.get("b", 1, (0,), (4,)), [1, 2, 3, 4])
    np.testing.assert_array_equal(client.get("b", 2, (0,), (4,)), [0, 1, 2, 3])


def test_array_interface(client):
    client.define("b", np.int16, shape=(2, 3))
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    client.put("b", 1, (0, 0), ArrayInterfaceOnly(a))
    np.testing.assert_array_equal(client.get("b", 1, (0, 0), (2, 3)), a)


def test_dlpack(client):
    client.define("b", np.float32, shape=(3, 2))
    a = np.arange(6, dtype=np.float32).reshape(3, 2)
    client.put("b", 1, (0, 0), DLPackOnly(a))
    np.testing.assert_array_equal(client.get("b", 1, (0, 0), (3, 2)), a)


def test_readonly_array_can_be_put(client):
    client.define("b", np.float64, shape=(4,))
    a = np.arange(4.0)
    a.flags.writeable = False
    client.put("b", 1, (0,), a)
    np.testing.assert_array_equal(client.get("b", 1, (0,), (4,)), a)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int32, np.uint64, np.float32, np.complex64,
                                   np.complex128])
def test_every_scalar_dtype(client, dtype):
    a = (np.arange(12) % 3).astype(dtype).reshape(3, 4)
    client.define("d", dtype, shape=(3, 4))
    client.put("d", 1, (0, 0), a)
    got = client.get("d", 1, (0, 0), (3, 4))
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, a)


def test_arrays_on_devices_cove_cannot_read_are_a_type_error(stored):
    # (CUDA arrays take the device path: test_device_arrays.py.)
    with pytest.raises(TypeError, match="DLPack device type 10"):
        stored.put("t", 2, (0, 0), DLPackOnly(np.zeros((4, 6)), device=(10, 0)))  # kDLROCM


def test_not_an_array(stored):
    with pytest.raises(TypeError, match="must be an array"):
        stored.put("t", 2, (0, 0), "abc")


def test_non_contiguous_array(stored):
    a = np.zeros((4, 12))[:, ::2]
    with pytest.raises(cove.InvalidArgument, match="not contiguous"):
        stored.put("t", 1, (0, 0), a)
    with pytest.raises(cove.InvalidArgument, match="not contiguous"):
        stored.get("t", 1, (0, 0), (4, 6), out=a)


def test_unknown_dtype(stored):
    with pytest.raises(cove.InvalidArgument, match="float16"):
        stored.put("t", 1, (0, 0), np.zeros((4, 6), np.float16))
    with pytest.raises(cove.InvalidArgument, match="not one Cove knows"):
        stored.define("h", np.float16, shape=(4,))
    with pytest.raises(cove.InvalidArgument):
        stored.put("t", 1, (0, 0), np.zeros((4, 6), dtype=[("a", "f8")]))
    with pytest.raises(cove.InvalidArgument, match="float16"):
        stored.get("t", 1, (0, 0), (4, 6), dtype=np.float16)


def test_dtype_that_does_not_match_the_variable(stored):
    with pytest.raises(cove.InvalidArgument, match="<f4"):
        stored.put("t", 1, (0, 0), np.zeros((4, 6), np.float32))
    with pytest.raises(cove.InvalidArgument, match="<i8"):
        stored.put("t", 1, (0, 0), np.zeros((4, 6), np.int64))  # same size, other kind


def test_out_of_the_wrong_size_or_dtype(stored):
    with pytest.raises(cove.InvalidArgument, match="shape"):
        stored.get("t", 1, (0, 0), (4, 6), out=np.empty((4, 5)))
    with pytest.raises(cove.InvalidArgument, match="dtype"):
        stored.get("t", 1, (0, 0), (4, 6), out=np.empty((4, 6), np.float32))
    ro = np.empty((4, 6))
    ro.flags.writeable = False
    with pytest.raises(cove.InvalidArgument, match="read-only"):
        stored.get("t", 1, (0, 0), (4, 6), out=ro)
    with pytest.raises(cove.InvalidArgument):
        stored.get("t", 1, (0, 0), (4, 6), out=np.empty((4, 6)), dtype=np.float64)


def test_region_that_does_not_match(stored):
    with pytest.raises(cove.InvalidArgument, match="start"):
        stored.put("t", 2, (0,), np.zeros((4, 6)))
    with pytest.raises(cove.InvalidArgument, match="outside"):
        stored.put("t", 1, (1, 0), np.zeros((4, 6)))
    with pytest.raises(cove.InvalidArgument):
        stored.get("t", 1, (0, 0), (5, 6))
    with pytest.raises(cove.InvalidArgument, match="order"):
        stored.get("t", 1, (0, 0), (4, 6), order="K")
    with pytest.raises(cove.InvalidArgument, match="timeout"):
        stored.get("t", 1, (0, 0), (4, 6), timeout=-1)
    with pytest.raises(cove.InvalidArgument, match="dimensions"):
        stored.put("t", 1, (), np.float64(3.0))

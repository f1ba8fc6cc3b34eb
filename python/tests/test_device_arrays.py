"""Device (GPU) arrays (docs/python.md, "Device arrays"): objects with
__cuda_array_interface__ or a CUDA DLPack device go to Cove's device path
(MemorySpace::device). Here the interface wraps host memory, so the device
path answers: Unsupported where this Cove has no CUDA, InvalidArgument
("stated as device memory but is not") where it has. Either proves the
dispatch; tests/gpu/python_device.py moves real device memory on a GPU."""
import numpy as np
import pytest

import cove


class Interface:
    """An object with only a __cuda_array_interface__ (as Numba's device arrays have)."""

    def __init__(self, array, readonly=False, **fields):
        self.array = array
        self.__cuda_array_interface__ = dict(shape=array.shape, typestr=array.dtype.str,
                                             data=(array.ctypes.data, readonly), strides=None, version=3)
        self.__cuda_array_interface__.update(fields)


def device_path_error():
    """What the device path raises for host memory stated as device memory."""
    if cove.device_memory_available():
        return cove.InvalidArgument, "stated as device memory but is not"
    return cove.Unsupported, "device memory"


@pytest.fixture
def grid(client):
    client.define("g", np.float32, shape=(4, 6))
    client.put("g", 1, (0, 0), np.arange(24, dtype=np.float32).reshape(4, 6))
    return client


def test_interface_arrays_take_the_device_path(grid):
    kind, match = device_path_error()
    a = np.ones((2, 3), np.float32)
    for call in (lambda: grid.put("g", 2, (0, 0), Interface(a)),
                 lambda: grid.put_local("g", 2, (0, 0), Interface(a)),
                 lambda: grid.get("g", 1, (0, 0), (2, 3), out=Interface(a)),
                 lambda: grid.put("g", 2, (0, 0), Interface(np.asfortranarray(a), strides=(4, 8)))):
        with pytest.raises(kind, match=match):
            call()
    np.testing.assert_array_equal(grid.get("g", 1, (0, 0), (4, 6), timeout=0).ravel(), np.arange(24))
    with pytest.raises(cove.NotFound):
        grid.get("g", 2, (0, 0), (2, 3), timeout=0)  # nothing was stored from them
    assert grid.held_locally == 0


def test_a_given_stream_is_synchronised(grid):
    a = np.ones((2, 3), np.float32)
    if not cove.device_memory_available():
        with pytest.raises(cove.Unsupported, match="synchronize_device_stream"):
            grid.put("g", 2, (0, 0), Interface(a, stream=1))
    with pytest.raises(cove.InvalidArgument, match="stream 0 is not allowed"):
        grid.put("g", 2, (0, 0), Interface(a, stream=0))


def test_bad_interfaces_name_what_is_wrong(grid):
    a = np.ones((2, 3), np.float32)
    cases = [
        (Interface(a, mask=object()), "masked"),
        (Interface(a, strides=(12, 3)), "not a multiple of the element size"),
        (Interface(a, strides=(24, 4)), "not contiguous"),
        (Interface(a, typestr="<f2"), "'<f2' is not one Cove knows"),
        (Interface(a, shape=[2, 3]), "not a tuple"),
        (Interface(a, data=(a.ctypes.data,)), "not \\(pointer, read-only\\)"),
        (Interface(a, shape=()), "0 dimensions"),
    ]
    for obj, match in cases:
        with pytest.raises(cove.InvalidArgument, match=match):
            grid.put("g", 2, (0, 0), obj)
    with pytest.raises(cove.InvalidArgument, match="out is read-only"):
        grid.get("g", 1, (0, 0), (2, 3), out=Interface(a, readonly=True))


def test_devices_cove_cannot_read_are_refused_by_name(grid):
    class Rocm:
        def __dlpack_device__(self):
            return (10, 0)

        def __dlpack__(self, stream=None):
            raise AssertionError("never imported")

    with pytest.raises(TypeError, match="DLPack device type 10"):
        grid.put("g", 2, (0, 0), Rocm())

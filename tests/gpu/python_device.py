"""Python device arrays on a real GPU (docs/python.md, "Device arrays"):
arrays that expose __cuda_array_interface__ over memory from cuMemAlloc
(CUDA's driver API through ctypes, so that neither numpy nor CuPy is
needed on the GPU machine) are put, put_local'd and got into, at a small
size and at one that takes the pipelined paths, with and without a stream;
every element is compared with the host original. Run by tests/gpu/run.sh
against its server: python_device.py CONNECTION_FILE. Exits 77 when the
package cannot be imported here (another Python than the build's)."""
import array
import ctypes
import sys

try:
    import cove
except ImportError as e:
    print(f"skipped: the cove package does not import with this Python ({sys.version.split()[0]}): {e}")
    sys.exit(77)

cuda = ctypes.CDLL("libcuda.so.1")
_u64, _size, _ptr = ctypes.c_uint64, ctypes.c_size_t, ctypes.c_void_p
for name, args in [("cuInit", [ctypes.c_uint]), ("cuDeviceGet", [ctypes.POINTER(ctypes.c_int), ctypes.c_int]),
                   ("cuDevicePrimaryCtxRetain", [ctypes.POINTER(_ptr), ctypes.c_int]), ("cuCtxSetCurrent", [_ptr]),
                   ("cuMemAlloc_v2", [ctypes.POINTER(_u64), _size]), ("cuMemFree_v2", [_u64]),
                   ("cuMemcpyHtoD_v2", [_u64, _ptr, _size]), ("cuMemcpyDtoH_v2", [_ptr, _u64, _size])]:
    getattr(cuda, name).argtypes = args
    getattr(cuda, name).restype = ctypes.c_int


def check(result, what):
    if result != 0:
        raise RuntimeError(f"{what}: CUDA driver error {result}")


class Device:
    """cuMemAlloc'd bytes seen as a float32 array of `shape` by the CUDA Array Interface."""

    def __init__(self, shape, stream=None):
        self.shape = shape
        self.bytes = 4
        for n in shape:
            self.bytes *= n
        self.ptr = ctypes.c_uint64()
        check(cuda.cuMemAlloc_v2(ctypes.byref(self.ptr), self.bytes), "cuMemAlloc")
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": "<f4", "data": (self.ptr.value, False),
                                         "strides": None, "version": 3, "stream": stream}

    def upload(self, host):
        check(cuda.cuMemcpyHtoD_v2(self.ptr.value, host.buffer_info()[0], self.bytes), "cuMemcpyHtoD")

    def download(self):
        host = array.array("f", bytes(self.bytes))
        check(cuda.cuMemcpyDtoH_v2(host.buffer_info()[0], self.ptr.value, self.bytes), "cuMemcpyDtoH")
        return host

    def free(self):
        cuda.cuMemFree_v2(self.ptr.value)


def host_view(values, shape):
    return memoryview(values).cast("B").cast("f", shape)


def main():
    check(cuda.cuInit(0), "cuInit")
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    check(cuda.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    check(cuda.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    assert cove.device_memory_available(), "a GPU is visible but Cove says it cannot use device memory"
    failed = 0
    with cove.connect(sys.argv[1]) as c:
        for rows, cols in [(4, 6), (2048, 4096)]:  # 96 B, and 32 MiB (pipelined paths)
            var = f"py-{rows}x{cols}"
            shape = (rows, cols)
            c.define(var, "f4", shape=shape)
            values = array.array("f", (float(i % 65521) for i in range(rows * cols)))
            for version, (op, stream) in enumerate([("put", None), ("put", 1), ("put_local", 2)], start=1):
                src = Device(shape, stream)
                src.upload(values)
                getattr(c, op)(var, version, (0, 0), src)
                into_device = Device(shape, stream)
                c.get(var, version, (0, 0), shape, out=into_device, timeout=30)
                into_host = array.array("f", bytes(4 * rows * cols))
                c.get(var, version, (0, 0), shape, out=host_view(into_host, shape), timeout=30)
                ok = into_device.download() == values and into_host == values
                what = f"{op} of a {rows}x{cols} float32 device array (stream {stream}) into device and host memory"
                print(("ok: " if ok else "FAILED: ") + what)
                failed += not ok
                if op == "put_local":
                    c.release(var, version, (0, 0), shape)
                into_device.free()
                src.free()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

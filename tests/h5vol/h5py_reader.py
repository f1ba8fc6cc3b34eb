"""h5py, unmodified, reading a producer's "file" from memory through the Cove
VOL connector (HDF5_PLUGIN_PATH and HDF5_VOL_CONNECTOR in the environment).
It opens the file written by tests/h5vol/writer.c, lists its keys, reads
slices, with numpy checks of every value.

    python h5py_reader.py FILE
"""
import os
import sys

import h5py
import numpy as np

D = {"d1": (997,), "d2": (37, 29), "d3": (11, 13, 17)}


def expected(step, d, shape):
    linear = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    return step * 1.0e6 + (d + 1) * 1.0e5 + linear


def main(path):
    assert h5py.version.hdf5_version.startswith("1.14"), h5py.version.hdf5_version
    with h5py.File(path, "r") as f:
        assert sorted(f.keys()) == ["ext", "fields", "names", "table"], list(f.keys())
        step = int(f.attrs["step"])
        assert f.attrs["title"] == b"cove-h5vol-test", f.attrs["title"]
        assert sorted(f.attrs.keys()) == ["notes", "step", "title"], list(f.attrs.keys())
        notes = [n.decode() if isinstance(n, bytes) else n for n in f.attrs["notes"]]
        assert notes == [f"written at step {step}", "a second, longer note"], notes
        fields = f["fields"]
        assert isinstance(fields, h5py.Group)
        assert list(fields.keys()) == ["d1", "d2", "d3"], list(fields.keys())
        assert "d2" in fields and "nope" not in fields
        np.testing.assert_array_equal(fields.attrs["units"], [1.5, 2.5, 3.5 + step])
        for d, name in enumerate(["d1", "d2", "d3"]):
            ds = fields[name]
            assert isinstance(ds, h5py.Dataset)
            assert ds.shape == D[name] and ds.dtype == np.float64, (ds.shape, ds.dtype)
            want = expected(step, d, D[name])
            np.testing.assert_array_equal(ds[...], want)
        d2, d3 = fields["d2"], fields["d3"]
        np.testing.assert_array_equal(d2[3:20, 5:17], expected(step, 1, D["d2"])[3:20, 5:17])
        np.testing.assert_array_equal(d3[::2, 4, 1:9], expected(step, 2, D["d3"])[::2, 4, 1:9])
        np.testing.assert_array_equal(fields["d1"][[1, 5, 996]], expected(step, 0, D["d1"])[[1, 5, 996]])
        np.testing.assert_array_equal(d2.astype("float32")[:, 7], expected(step, 1, D["d2"])[:, 7].astype(np.float32))
        ext = f["ext"]
        assert ext.shape == (40,) and ext.maxshape == (None,), (ext.shape, ext.maxshape)
        np.testing.assert_array_equal(ext[:], np.arange(40) * 3 + step)
        table = f["table"][:]
        np.testing.assert_array_equal(table["id"], np.arange(5) + 100 * step)
        np.testing.assert_array_equal(table["x"], np.arange(5) * 0.25 + step)
        assert list(f["names"][:]) == [b"alpha", b"beta", b"gamma", b"delta"]
        try:
            f["nope"]
        except KeyError:
            pass
        else:
            raise AssertionError("f['nope'] did not raise KeyError")
    assert not os.path.exists(path), "memory mode wrote a file"
    print(f"h5py: step {step} of {path} read from memory, every value checked")


if __name__ == "__main__":
    main(sys.argv[1])

"""h5py writes str attributes as variable-length strings: one process writes
a file through the Cove connector, another reads it back from memory.
    h5py_strings.py write|read FILE"""
import sys

import h5py
import numpy as np


def write(path):
    with h5py.File(path, "w") as f:
        f.attrs["comment"] = "written by h5py"
        f.attrs["names"] = ["a", "bb", "ccc"]
        d = f.create_dataset("x", data=np.arange(10.0))
        d.attrs["units"] = "metres"


def read(path):
    with h5py.File(path, "r") as f:
        assert f.attrs["comment"] == "written by h5py", f.attrs["comment"]
        assert list(f.attrs["names"]) == ["a", "bb", "ccc"], f.attrs["names"]
        assert f["x"].attrs["units"] == "metres", f["x"].attrs["units"]
        assert np.array_equal(f["x"][2:5], [2.0, 3.0, 4.0]), f["x"][2:5]
    print("h5py strings: ok")


if __name__ == "__main__":
    {"write": write, "read": read}[sys.argv[1]](sys.argv[2])

"""A file's life in memory, as plain h5py programs live it (issue 32): each
case is what h5py's own tests do and what failed, crashed or hung before.
    h5py_file_life.py CASE FILE
Cases:
  anonymous   f["x"] = array (H5Dcreate_anon + H5Olink), intermediate groups,
              hard links, H5Ldelete, creation order
  reopen      create, close, reopen read-only (own version at once), read-write
              (a new version derived from it), several opens, EXCL on an existing name
  fill        unwritten cells read the fill value (own reads and after the close),
              space status and storage size as natively; a compound written from a
              subset of its fields keeps the others (they were zeroed)
  errors      after HDF5 refuses native-only calls (references, H5Lget_info1),
              later errors still carry their description; a lossy filter is refused
              with an error naming it (it was ignored: other values than natively)
  refexit     reference calls (H5Rcreate, H5DSattach_scale) on a file left open at
              exit: HDF5 closes it from its atexit handler (this crashed there)
  fork        a forked child uses h5py through the connector and exits through
              HDF5's own shutdown; it must not touch its parent's connection
"""
import os
import sys
import time

import h5py
import numpy as np


def anonymous(path):
    with h5py.File(path, "w") as f:
        f["x"] = np.arange(10)
        assert f["x"].name == "/x", f["x"].name
        f.create_dataset("a/b/c", data=[1, 2, 3])
        assert list(f["a"]) == ["b"], list(f["a"])
        f["a/link"] = f["x"]
        assert np.array_equal(f["a/link"][()], np.arange(10))
        del f["a/link"]
        assert "link" not in f["a"]
        g = f.create_group("order", track_order=True)
        for name in "zyx":
            g[name] = 1
        assert list(g) == ["z", "y", "x"], list(g)
    with h5py.File(path, "r") as f:
        assert np.array_equal(f["x"][()], np.arange(10)), f["x"][()]
        assert list(f["a/b/c"][()]) == [1, 2, 3]
        assert list(f["order"]) == ["z", "y", "x"], list(f["order"])
    print("anonymous: ok")


def reopen(path):
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=np.arange(6))
    start = time.monotonic()
    with h5py.File(path, "r") as f:  # this process's own last version, at once
        assert np.array_equal(f["x"][()], np.arange(6))
    assert time.monotonic() - start < 2, "reopening its own file waited"
    with h5py.File(path, "a") as f:  # read-write: a new version from the last one
        f["x"][0] = 100
        f.create_dataset("y", data=[5])
        assert f["x"][0] == 100 and f["x"][5] == 5
    a = h5py.File(path, "r")
    b = h5py.File(path, "r")
    assert a["x"][0] == 100 and b["y"][0] == 5 and a["x"][1] == 1
    a.close()
    b.close()
    try:
        h5py.File(path, "x")
        raise AssertionError("H5F_ACC_EXCL created an existing name")
    except FileExistsError:
        pass
    print("reopen: ok")


def fill(path):
    with h5py.File(path, "w") as f:
        d = f.create_dataset("x", (6,), dtype="i4", fillvalue=7)
        assert d.id.get_space_status() == h5py.h5d.SPACE_STATUS_NOT_ALLOCATED
        assert d.id.get_storage_size() == 0
        d[1:3] = [1, 2]
        assert list(d[()]) == [7, 1, 2, 7, 7, 7], d[()]
        assert d.id.get_space_status() == h5py.h5d.SPACE_STATUS_ALLOCATED
        z = f.create_dataset("z", (2, 3), dtype="f8")
        assert (z[()] == 0).all()
        dt = np.dtype([("a", "i4"), ("b", "f8")])
        c = f.create_dataset("c", (3,), dtype=dt)
        c[...] = np.array([(1, 1.5), (2, 2.5), (3, 3.5)], dtype=dt)
        c["b"] = np.array([9.0, 8.0, 7.0])
        assert c[()].tolist() == [(1, 9.0), (2, 8.0), (3, 7.0)], c[()]
    with h5py.File(path, "r") as f:
        assert list(f["x"][()]) == [7, 1, 2, 7, 7, 7], f["x"][()]
        assert (f["z"][()] == 0).all()
        assert f["c"][()].tolist() == [(1, 9.0), (2, 8.0), (3, 7.0)], f["c"][()]
    print("fill: ok")


def errors(path):
    with h5py.File(path, "w") as f:
        g = f.create_group("g")
        for _ in range(40):  # more than the 32 slots of an error stack
            try:
                g.ref
            except Exception:
                pass
            try:
                f.get("g", getlink=True)
            except Exception:
                pass
        try:
            f["missing"]
            raise AssertionError("opening a missing object succeeded")
        except KeyError as e:
            assert "missing" in str(e), str(e)
        try:
            f.create_dataset("so", data=np.arange(10.0), scaleoffset=2)
            raise AssertionError("the scale-offset filter was accepted in memory")
        except ValueError as e:
            assert "scale-offset" in str(e), str(e)
    print("errors: ok")


def refexit(path):
    f = h5py.File(path, "w")
    f["data"] = np.ones((4, 3, 2), "f")
    f["x1"] = np.ones((2,), "f")
    for call in (lambda: f["data"].ref, lambda: h5py.h5ds.set_scale(f["x1"].id),
                 lambda: h5py.h5ds.attach_scale(f["data"].id, f["x1"].id, 2), lambda: f.id.get_vfd_handle()):
        try:
            call()
        except Exception:
            pass
    print("refexit: ok")  # the process must now also exit cleanly, with f still open


def fork(path):
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=np.arange(4))
    pid = os.fork()
    if pid == 0:
        # The child: its own file through the connector, then the normal exit
        # (atexit: HDF5 closes the connector).
        with h5py.File(path + ".child", "w") as f:
            f.create_dataset("y", data=np.arange(3))
        sys.exit(0)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"child status {status}"
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        raise AssertionError("the forked child hung")
    with h5py.File(path + ".child", "r") as f:  # the child's file, from memory
        assert list(f["y"][()]) == [0, 1, 2]
    with h5py.File(path, "r") as f:  # the parent's connection still serves
        assert list(f["x"][()]) == [0, 1, 2, 3]
    print("fork: ok")


if __name__ == "__main__":
    {"anonymous": anonymous, "reopen": reopen, "fill": fill, "errors": errors, "refexit": refexit, "fork": fork}[sys.argv[1]](sys.argv[2])

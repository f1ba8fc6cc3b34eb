"""A file's life in memory, as plain h5py programs live it (issue 32): each
case is what h5py's own tests do and what failed, crashed or hung before.
    h5py_file_life.py CASE FILE
Cases:
  anonymous   f["x"] = array (H5Dcreate_anon + H5Olink), intermediate groups,
              hard links, H5Ldelete, creation order
  reopen      create, close, reopen read-only (own version at once), read-write
              (a new version derived from it), several opens, EXCL on an existing name
  fill        unwritten cells read the fill value (own reads and after the close;
              also variable-length strings and sequences; none with fill time never),
              space status and storage size as natively; a compound written from a
              subset of its fields keeps the others (they were zeroed)
  errors      after HDF5 refuses native-only calls (references, H5Lget_info1),
              later errors still carry their description (a lossy filter, once refused
              here, now gives the native values: case lossy)
  refexit     reference calls (H5Rcreate, H5DSattach_scale) on a file left open at
              exit: HDF5 closes it from its atexit handler (this crashed there)
  fork        a forked child uses h5py through the connector and exits through
              HDF5's own shutdown; it must not touch its parent's connection
  external    external links: created (also on intermediate groups), their
              value and class as HDF5 packs them (H5Lget_info2, H5Lget_val), followed
              to the other file's objects (also after a soft link, and after the
              file is reopened), copied through (H5Ocopy), and a missing object or
              file is a KeyError naming the link; natively the same
  vlen        variable-length data below the top level: compounds with sequence
              and string members (nested, of enums and booleans), sequences of
              such compounds, in datasets and attributes; read whole, by field and
              by selection, unwritten elements empty, after a close and after a
              read-write reopen (whose close failed on any variable-length dataset)
  objids      H5Fget_obj_count / H5Fget_obj_ids: the identifiers open in the file, by
              kind (they were always none), so that h5py's close closes them
  named       a dataset or attribute created with a committed datatype: H5Dget_type
              and H5Aget_type give that datatype, committed (also after a reopen);
              with a transient one, a transient copy
  lossy       the scale-offset filter (floats, and integers with too few bits):
              exactly the values the native library gives (a native run of the same
              writes in a subprocess is the oracle), chunks written in parts too
  closefail   H5Fclose fails (the server went away before the version is published):
              h5py gets the error naming the cause, and the process exits cleanly
              (HDF5 keeps the identifier of a failed close and closes it again at
              exit, where the freed object crashed)
  transform   data transforms (H5Pset_data_transform) on H5Dwrite and H5Dread, also of
              a selection: exactly the native values (a native run in a subprocess)
  times       objects created with time tracking (the default) report their creation
              time (H5Gget_objinfo's mtime), others 0 (it was always 0), also after a reopen
  access      H5Dget_access_plist: the list a dataset was created or opened with
              (chunk cache of a chunked one, virtual and external file prefixes)
"""
import ctypes
import os
import subprocess
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
        # Variable-length strings and sequences: unwritten elements read the fill value.
        s = f.create_dataset("s", (6,), dtype=h5py.string_dtype(), fillvalue="b\u00e1r")
        s[3] = "x"
        f.create_dataset("t", (2,), dtype=h5py.string_dtype(), fillvalue=b"zz")  # never written
        v = f.create_dataset("v", (3,), dtype=h5py.vlen_dtype("i2"))
        v[2] = np.array([5, 6], "i2")
        # Fill time never: no fill value (natively undefined, never it).
        n = f.create_dataset("n", (4,), dtype="f8", fillvalue=4.0, fill_time="never")
        assert not (n[()] == 4.0).any(), n[()]

    def strings(f):
        assert [x.decode() for x in f["s"][()]] == ["b\u00e1r"] * 3 + ["x"] + ["b\u00e1r"] * 2, f["s"][()]
        assert [list(x) for x in f["v"][()]] == [[], [], [5, 6]], f["v"][()]
        assert f["s"].fillvalue == "b\u00e1r".encode(), f["s"].fillvalue
        assert list(f["t"][()]) == [b"zz", b"zz"], f["t"][()]
    with h5py.File(path, "r+") as f:
        strings(f)
    with h5py.File(path, "r") as f:
        assert list(f["x"][()]) == [7, 1, 2, 7, 7, 7], f["x"][()]
        assert (f["z"][()] == 0).all()
        assert f["c"][()].tolist() == [(1, 9.0), (2, 8.0), (3, 7.0)], f["c"][()]
        strings(f)
        assert not (f["n"][()] == 4.0).any(), f["n"][()]
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


class H5L_info2_u(ctypes.Union):
    _fields_ = [("token", ctypes.c_ubyte * 16), ("val_size", ctypes.c_size_t)]


class H5L_info2_t(ctypes.Structure):  # HDF5 1.14's, for the calls h5py makes only in their version 1
    _fields_ = [("type", ctypes.c_int), ("corder_valid", ctypes.c_bool), ("corder", ctypes.c_int64),
                ("cset", ctypes.c_int), ("u", H5L_info2_u)]


def hdf5_library():
    """The HDF5 library h5py loaded (the same instance, so h5py's identifiers are valid in it)."""
    with open("/proc/self/maps") as maps:
        path = next(line.split()[-1] for line in maps if "/libhdf5.so" in line)
    return ctypes.CDLL(path)


def external(path):
    target = path + ".target"
    with h5py.File(target, "w") as t:
        g = t.create_group("g")
        g.attrs["a"] = 7
        g["d"] = np.arange(3)
    with h5py.File(path, "w") as f:
        f["ext"] = h5py.ExternalLink(target, "/g")
        f["ext_root"] = h5py.ExternalLink(target, "/")
        f["missing"] = h5py.ExternalLink(target, "/nope")
        f["nofile"] = h5py.ExternalLink(target + ".none", "/x")
        f["soft"] = h5py.SoftLink("/ext/d")
        f.create_group("h")["deep"] = h5py.ExternalLink(target, "/g/d")
        f.copy("ext/d", "copied")  # H5Ocopy of an object named through the link
    lib = hdf5_library()
    lib.H5Lget_val.argtypes = [ctypes.c_int64, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int64]
    lib.H5Lget_info2.argtypes = [ctypes.c_int64, ctypes.c_char_p, ctypes.POINTER(H5L_info2_t), ctypes.c_int64]
    lib.H5Lunpack_elink_val.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_uint),
                                        ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_char_p)]
    with h5py.File(path, "r") as f:  # a new version: the links were stored with the file
        assert f["ext"].attrs["a"] == 7 and f["ext"].name == "/g", f["ext"].name
        assert list(f["ext/d"][()]) == [0, 1, 2]
        assert list(f["ext_root"]["g/d"][()]) == [0, 1, 2]
        assert list(f["soft"][()]) == [0, 1, 2]
        assert list(f["h/deep"][()]) == [0, 1, 2]
        assert list(f["copied"][()]) == [0, 1, 2]
        assert isinstance(f["ext"], h5py.Group) and isinstance(f["ext/d"], h5py.Dataset)
        for name in ("missing", "nofile"):
            try:
                f[name]
                raise AssertionError(f"opening the dangling external link {name} succeeded")
            except KeyError:
                pass
        info = H5L_info2_t()
        assert lib.H5Lget_info2(f.id.id, b"ext", ctypes.byref(info), 0) >= 0
        size = info.u.val_size
        assert info.type == h5py.h5l.TYPE_EXTERNAL and size == 1 + len(target) + 1 + len("/g") + 1, (info.type, size)
        buf = ctypes.create_string_buffer(size)
        assert lib.H5Lget_val(f.id.id, b"ext", buf, size, 0) >= 0
        flags, fname, oname = ctypes.c_uint(), ctypes.c_char_p(), ctypes.c_char_p()
        assert lib.H5Lunpack_elink_val(buf, size, ctypes.byref(flags), ctypes.byref(fname), ctypes.byref(oname)) >= 0
        assert (fname.value.decode(), oname.value) == (target, b"/g"), (fname.value, oname.value)
        kinds = {}
        f.id.links.iterate(lambda name, info: kinds.__setitem__(name, info.type), info=True)
        assert kinds[b"ext"] == h5py.h5l.TYPE_EXTERNAL and kinds[b"soft"] == h5py.h5l.TYPE_SOFT, kinds
    print("external: ok")


def vlen(path):
    vi = h5py.vlen_dtype(np.int32)
    vs = h5py.string_dtype()
    inner = np.dtype([("n", np.int16), ("s", vs)])
    dt = np.dtype([("a", np.int64), ("b", vi), ("c", vs), ("d", inner)])
    venum = h5py.vlen_dtype(h5py.enum_dtype({"RED": 0, "GREEN": 1}, basetype="i1"))
    vbool = h5py.vlen_dtype(np.bool_)
    seq = h5py.vlen_dtype(np.dtype([("x", np.float32), ("y", vs)]))

    def row(i):
        return (i, np.arange(i, dtype=np.int32), f"s{i}" * i, (-i, "\u00e1" * i))

    def check(f):
        got = f["c"][()]
        assert len(got) == 5
        for i in (0, 1, 3, 4):  # element 2 was never written: empty sequence and strings, zeros
            assert got[i]["a"] == i and list(got[i]["b"]) == list(range(i)), got[i]
            assert got[i]["c"] == (f"s{i}" * i).encode() and got[i]["d"]["n"] == -i, got[i]
            assert got[i]["d"]["s"].decode() == "\u00e1" * i, got[i]
        assert got[2]["a"] == 0 and len(got[2]["b"]) == 0 and got[2]["c"] == b"", got[2]
        assert [list(x) for x in f["c"]["b"][3:5]] == [[0, 1, 2], [0, 1, 2, 3]]  # one field, a selection
        assert [x.decode() for x in f["c"].fields(["c"])[[1, 3]]["c"]] == ["s1", "s3s3s3"]
        e = f["e"][()]
        assert [list(x) for x in e] == [[0, 1, 1], []], e
        assert [list(x) for x in f["bool"][()]] == [[True, False], [False]]
        q = f["seq"][0]
        assert [(float(x), y.decode()) for x, y in q] == [(1.5, "p"), (2.5, "qq")], q
        a = f["c"].attrs["row"]
        assert a["a"] == 7 and list(a["b"]) == list(range(7)) and a["d"]["s"].decode() == "\u00e1" * 7, a

    with h5py.File(path, "w") as f:
        c = f.create_dataset("c", (5,), dtype=dt)
        for i in (0, 1, 3, 4):
            c[i] = row(i)
        f.create_dataset("e", data=np.array([np.array([0, 1, 1], "i1"), np.array([], "i1")], dtype=object), dtype=venum)
        f.create_dataset("bool", data=np.array([np.array([True, False]), np.array([False])], dtype=object), dtype=vbool)
        s = f.create_dataset("seq", (1,), dtype=seq)
        s[0] = np.array([(1.5, "p"), (2.5, "qq")], dtype=seq.metadata["vlen"])
        c.attrs.create("row", np.array(row(7), dtype=dt))
        check(f)  # the writer's own reads
    with h5py.File(path, "r") as f:  # the published version
        check(f)
    with h5py.File(path, "a") as f:  # read-write: a version derived from it; its close publishes it
        check(f)
        f["c"][2] = row(2)
    with h5py.File(path, "r") as f:
        assert list(f["c"][2]["b"]) == [0, 1] and f["c"][2]["c"] == b"s2s2"
    print("vlen: ok")


def objids(path):
    f = h5py.File(path, "w")
    g = f.create_group("g")
    d = g.create_dataset("d", (4,), "i4")
    t = f["t"] = np.dtype("f8")  # a committed datatype
    t = f["t"]
    other = h5py.File(path + ".other", "w")
    od = other.create_dataset("x", (2,), "i4")
    fid = f.id
    counts = [h5py.h5f.get_obj_count(fid, k) for k in (h5py.h5f.OBJ_FILE, h5py.h5f.OBJ_DATASET, h5py.h5f.OBJ_GROUP,
                                              h5py.h5f.OBJ_DATATYPE, h5py.h5f.OBJ_ALL)]
    assert counts == [1, 1, 1, 1, 4], counts
    ids = h5py.h5f.get_obj_ids(fid, h5py.h5f.OBJ_ALL)
    assert sorted(i.id for i in ids) == sorted(x.id.id for x in (f, g, d, t)), ids
    f.close()  # closes every object of the file first
    assert not d and not g and not t and repr(d) == "<Closed HDF5 dataset>", repr(d)
    assert od and h5py.h5f.get_obj_count(other.id, h5py.h5f.OBJ_ALL) == 2  # the other file's stay open
    other.close()
    print("objids: ok")


def named(path):
    def check(f):
        t = f["t"]
        d = f["d"]
        assert d.id.get_type().committed() and d.id.get_type() == t.id and d.dtype == np.dtype("<i2")
        a = h5py.h5a.open(f.id, b"a")
        assert a.get_type().committed() and a.get_type() == t.id and f.attrs["a"] == 42
        assert not f["plain"].id.get_type().committed()
        assert list(d[()]) == [1, 2, 3]
    with h5py.File(path, "w") as f:
        f["t"] = np.dtype("<i2")
        f.create_dataset("d", data=[1, 2, 3], dtype=f["t"])
        f.attrs.create("a", 42, dtype=f["t"])
        f.create_dataset("plain", (2,), "<i2")
        check(f)
    with h5py.File(path, "r") as f:
        check(f)
    print("named: ok")


def lossy_writes(path):
    rng = np.random.default_rng(5)
    a = (rng.random((20, 30)) - 0.5) * 2000
    b = rng.integers(0, 1 << 10, (20, 30))
    with h5py.File(path, "w") as f:
        x = f.create_dataset("x", (20, 30), "f8", chunks=(5, 6), scaleoffset=2)
        y = f.create_dataset("y", (20, 30), "i8", chunks=(5, 6), scaleoffset=8)
        x[:8] = a[:8]
        x[3:12, 4:17] = a[3:12, 4:17] * 3  # chunks written in parts: filtered again with their other cells
        y[...] = b
        y[6:9, 2:5] = b[6:9, 2:5] + 1
        own = [x[()], y[()]]
    with h5py.File(path, "r") as f:
        return own + [f["x"][()], f["y"][()]], a, b


def lossy(path):
    if sys.argv[3:] == ["native"]:  # the oracle's run
        got = lossy_writes(path)[0]
        np.savez(path + ".npz", *got)
        return
    env = {k: v for k, v in os.environ.items() if k not in ("HDF5_VOL_CONNECTOR", "HDF5_PLUGIN_PATH")}
    subprocess.run([sys.executable, __file__, "lossy", path + ".native", "native"], env=env, check=True)
    native = np.load(path + ".native.npz")
    got, a, b = lossy_writes(path)
    for i, g in enumerate(got):
        n = native[f"arr_{i}"]
        assert g.dtype == n.dtype and np.array_equal(g, n), (i, np.argwhere(g != n)[:5])
    assert not np.array_equal(got[2][:8], a[:8]) and np.allclose(got[2][:3], a[:3], atol=0.01)  # lossy, to 2 decimals
    assert not np.array_equal(got[3], b)  # 8 bits of 10: lossy
    print("lossy: ok")


def transform_io(path):
    lib = hdf5_library()
    lib.H5Pset_data_transform.argtypes = [ctypes.c_int64, ctypes.c_char_p]

    def xfer(expression):
        plist = h5py.h5p.create(h5py.h5p.DATASET_XFER)
        assert lib.H5Pset_data_transform(plist.id, expression) >= 0
        return plist
    with h5py.File(path, "w") as f:
        i = f.create_dataset("i", (6,), "i4")
        x = f.create_dataset("x", (2, 3), "f8")
        i.id.write(h5py.h5s.ALL, h5py.h5s.ALL, np.arange(6, dtype="i4"), dxpl=xfer(b"2*x+1"))
        x.id.write(h5py.h5s.ALL, h5py.h5s.ALL, np.arange(6.0).reshape(2, 3) / 7, dxpl=xfer(b"x*x-0.5"))
        own = np.empty(6, "i4")
        i.id.read(h5py.h5s.ALL, h5py.h5s.ALL, own, dxpl=xfer(b"x/3"))
    with h5py.File(path, "r") as f:
        out = np.empty(6, "i4")
        f["i"].id.read(h5py.h5s.ALL, h5py.h5s.ALL, out, dxpl=xfer(b"x/3-1"))
        fspace = f["x"].id.get_space()
        fspace.select_hyperslab((0, 1), (2, 2))
        part = np.empty((2, 2))
        f["x"].id.read(h5py.h5s.create_simple((2, 2)), fspace, part, dxpl=xfer(b"10*x"))
        return [own, f["i"][()], out, f["x"][()], part]


def transform(path):
    if sys.argv[3:] == ["native"]:  # the oracle's run
        np.savez(path + ".npz", *transform_io(path))
        return
    env = {k: v for k, v in os.environ.items() if k not in ("HDF5_VOL_CONNECTOR", "HDF5_PLUGIN_PATH")}
    subprocess.run([sys.executable, __file__, "transform", path + ".native", "native"], env=env, check=True)
    native = np.load(path + ".native.npz")
    got = transform_io(path)
    for k, g in enumerate(got):
        n = native[f"arr_{k}"]
        assert g.dtype == n.dtype and np.array_equal(g, n), (k, g, n)
    assert list(got[1]) == [1, 3, 5, 7, 9, 11], got[1]  # stored as transformed
    print("transform: ok")


def closefail(path):
    f = h5py.File(path, "w")
    f["x"] = np.arange(4)
    server = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration", "server.sh")
    subprocess.run([server, "stop", os.path.dirname(os.environ["COVE_CONNECT"])], check=True)
    try:
        f.close()
        raise AssertionError("H5Fclose succeeded without a server")
    except RuntimeError as e:
        assert "H5Fclose" in str(e), str(e)
    print("closefail: ok")  # the process must now also exit cleanly


def times(path):
    t0 = int(time.time())
    with h5py.File(path, "w") as f:
        f.create_dataset("on", data=np.arange(3), track_times=True)
        f.create_dataset("off", data=np.arange(3), track_times=False)
        f.create_group("g")
        f.create_dataset_like("like", f["on"])
        got = {k: h5py.h5g.get_objinfo(f[k].id).mtime for k in ("on", "off", "g", "like")}
    t1 = int(time.time())
    # h5py makes groups without time tracking (natively 0 too)
    assert got["off"] == got["g"] == 0 and all(t0 <= got[k] <= t1 for k in ("on", "like")), (t0, got, t1)
    with h5py.File(path, "r") as f:
        again = {k: h5py.h5g.get_objinfo(f[k].id).mtime for k in got}
        assert again == got, (again, got)
    print("times: ok")


def access(path):
    with h5py.File(path, "w") as f:
        d = f.create_dataset("c", (10, 20), "i4", chunks=(5, 4), rdcc_nbytes=2 << 20, rdcc_w0=0.2, rdcc_nslots=997,
                             virtual_prefix="/v/p", efile_prefix="/e/p")
        dapl = d.id.get_access_plist()
        assert dapl.get_chunk_cache() == (997, 2 << 20, 0.2), dapl.get_chunk_cache()
        assert (dapl.get_virtual_prefix(), dapl.get_efile_prefix()) == (b"/v/p", b"/e/p")
        plain = f.create_dataset("p", (4,), "i4", rdcc_nslots=13, rdcc_nbytes=1 << 10, rdcc_w0=0.5)
        assert plain.id.get_access_plist().get_chunk_cache() != (13, 1 << 10, 0.5)  # not chunked: no cache
        assert f.create_dataset("q", (4,), "i4").id.get_access_plist().get_virtual_prefix() == b""
    with h5py.File(path, "r") as f:
        d = f.require_dataset("c", (10, 20), "i4", rdcc_nslots=101, rdcc_nbytes=1 << 16, rdcc_w0=1.0)
        assert d.id.get_access_plist().get_chunk_cache() == (101, 1 << 16, 1.0)
        assert f["c"].id.get_access_plist().get_virtual_prefix() == b""
    print("access: ok")


if __name__ == "__main__":
    {"anonymous": anonymous, "reopen": reopen, "fill": fill, "errors": errors, "refexit": refexit, "fork": fork,
     "external": external, "vlen": vlen, "access": access, "objids": objids,
     "named": named, "lossy": lossy, "times": times,
     "transform": transform, "closefail": closefail}[sys.argv[1]](sys.argv[2])

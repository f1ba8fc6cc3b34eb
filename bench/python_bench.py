"""Put and get of numpy arrays from Python against the C++ client, in the
same run, with the same sizes, against the same cove-server; and memcpy of
the same bytes (numpy.copyto) as the physical limit.

Each size (float64, 1024 columns): one untimed put and get, then REPS timed
ones of each, a new version per put, buffers allocated and touched
beforehand; the best of the reps counts, on both sides. The C++ side is
bench/putget_bench.cpp (cove-putget-bench).

    python_bench.py [--build DIR] [--sizes-mib 64,512] [--reps 5] [--csv FILE]

Needs `cove` importable (PYTHONPATH=BUILD/python, or pip install .).
"""
import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

import cove


def best(fn, reps, after=None):
    """The shortest of `reps` timed calls fn(r), after one untimed; after(r) runs untimed after each."""
    times = []
    for r in range(reps + 1):
        t0 = time.perf_counter()
        fn(r)
        if r:
            times.append(time.perf_counter() - t0)
        if after:
            after(r)
    return min(times)


def python_side(client, mib, reps):
    cols = 1024
    rows = mib * (1 << 20) // 8 // cols
    var = f"bench/py/{mib}"
    client.define(var, np.float64, shape=(rows, cols))
    src = np.full((rows, cols), 1.5)
    dst = np.zeros((rows, cols))
    nbytes = src.nbytes
    base = 2000000

    put_s, get_s = [], []

    # As the C++ side does: put, get, then remove the version (the server reuses its memory).
    def step(r):
        t0 = time.perf_counter()
        client.put(var, base + r, (0, 0), src)
        t1 = time.perf_counter()
        client.get(var, base + r, (0, 0), (rows, cols), out=dst, timeout=10)
        t2 = time.perf_counter()
        if r:
            put_s.append(t1 - t0)
            get_s.append(t2 - t1)

    best(step, reps, after=lambda r: client.remove(var, base + r))
    put_s, get_s = min(put_s), min(get_s)
    if dst[rows // 2, 7] != 1.5:
        raise SystemExit("python_bench: wrong value read back")
    # get() allocating its result, as most Python code calls it: for reference.
    client.put(var, 1, (0, 0), src)
    fresh_s = best(lambda r: client.get(var, 1, (0, 0), (rows, cols), timeout=10), reps)
    client.undefine(var)
    copy_s = best(lambda r: np.copyto(dst, src), reps)
    return nbytes / put_s / 1e9, nbytes / get_s / 1e9, nbytes / fresh_s / 1e9, nbytes / copy_s / 1e9


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=pathlib.Path, default=pathlib.Path("build"))
    parser.add_argument("--sizes-mib", default="64,512")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--csv", type=pathlib.Path)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes_mib.split(",")]
    build = args.build.resolve()

    work = pathlib.Path(tempfile.mkdtemp(prefix="cove-pybench."))
    conn = work / "cove.conn"
    cmd = [str(build / "tools" / "cove-server"), "--connection-file", str(conn), "--log-level", "warn"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 20
        while not conn.exists():
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("python_bench: cove-server did not start")
            time.sleep(0.02)
        env = dict(os.environ, COVE_CONNECT=str(conn))
        run = subprocess.run([str(build / "bench" / "cove-putget-bench"), "--sizes-mib", args.sizes_mib,
                              "--reps", str(args.reps)], env=env, capture_output=True, text=True, check=True)
        cpp = {int(f[0]): (float(f[1]), float(f[2])) for f in (l.split(",") for l in run.stdout.split())}
        rows = []
        with cove.connect(str(conn)) as client:
            for mib in sizes:
                rows.append((mib, *cpp[mib], *python_side(client, mib, args.reps)))
        with cove.connect(str(conn)) as client:
            client.stop_server()
        server.wait(timeout=20)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        for f in work.iterdir():
            f.unlink()
        work.rmdir()

    print(f"Python binding vs C++ client, same server (cove-server, this host), best of {args.reps}; GB/s")
    print(f"{'MiB':>6} {'memcpy':>8} {'C++ put':>8} {'Py put':>8} {'ratio':>6} {'C++ get':>8} {'Py get':>8} "
          f"{'ratio':>6} {'Py get (new array)':>19}")
    lines = ["size_mib,memcpy_gbps,cpp_put_gbps,py_put_gbps,put_ratio,cpp_get_gbps,py_get_gbps,get_ratio,py_get_new_gbps"]
    for mib, cput, cget, pput, pget, pfresh, copy in rows:
        print(f"{mib:>6} {copy:>8.2f} {cput:>8.2f} {pput:>8.2f} {pput / cput:>6.2f} {cget:>8.2f} {pget:>8.2f} "
              f"{pget / cget:>6.2f} {pfresh:>19.2f}")
        lines.append(f"{mib},{copy:.3f},{cput:.3f},{pput:.3f},{pput / cput:.3f},{cget:.3f},{pget:.3f},"
                     f"{pget / cget:.3f},{pfresh:.3f}")
    if args.csv:
        args.csv.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

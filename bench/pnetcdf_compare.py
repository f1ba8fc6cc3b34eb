#!/usr/bin/env python3
"""The S3D-IO shaped PnetCDF exchange (bench/pnetcdf_s3d.cpp) four ways,
with the same binary: real PnetCDF files read from the page cache, real
files fsynced and dropped from the cache before the reader opens them,
through libcove-pnetcdf (LD_PRELOAD, memory mode, deep), and Cove's native
put/get doing the same exchange. Then a slow reader: the writer's time in
ncmpi_close while a reader sleeps between steps, against the same with no
reader running (DTF's writer waits for its reader; Cove's should not).
Both Cove ways run again against servers with --pool-reserve (a pre-faulted
pool, docs/staging.md). Last, the Fortran S3D-IO kernel
(tests/pnetcdf/s3d_io.f90): its write and read times on files, cached and
dropped, against the same program staged (the DTF paper's headline
comparison).

Writer and reader are separate mpiexec jobs, the reader after the writer;
readers check every element. Prints a table of per-step medians and the
issue's targets; exits 1 if a run failed or delivered a wrong element.

  pnetcdf_compare.py [--build DIR] [--writers W] [--readers R] [--edge N] [--steps S] [--rounds N] [--quick]
                     [--pool-reserve SIZE] [--server-log] [--no-fortran | --fortran-only] [--only TEXT]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

MPI = ["mpiexec", "--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])


def parse(out, role):
    for line in out.splitlines():
        if line.startswith("RESULT role=" + role):
            return {k: float(v) for k, v in re.findall(r"(\w+)=([0-9.e+-]+)", line)}
    raise RuntimeError(f"no RESULT line from the {role}:\n{out}")


def combine(results):
    """The median of each figure over rounds; wrong elements are summed."""
    out = []
    for i in range(2):
        d = {}
        for k in results[0][i]:
            vals = sorted(r[i][k] for r in results)
            d[k] = sum(vals) if k == "wrong" else vals[len(vals) // 2]
        out.append(d)
    return out


class Runner:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build)
        self.bin = os.path.join(self.build, "bench", "cove-pnetcdf-s3d")
        self.lib = os.path.join(self.build, "src", "pnetcdf", "libcove-pnetcdf.so")
        self.server_sh = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "integration", "server.sh")
        self.work = tempfile.mkdtemp(prefix="cove-pnetcdf-compare.", dir=args.out)
        self.env = dict(os.environ, COVE_BIN=os.path.join(self.build, "tools"))
        self.env.setdefault("UCX_NET_DEVICES", "lo")
        self.runs = 0

    def job(self, role, n, extra, env=None, background=False):
        cmd = MPI + ["-n", str(n)]
        for k in ("LD_PRELOAD", "COVE_CONNECT", "COVE_PNETCDF_CONFIG", "UCX_NET_DEVICES"):
            if env and k in env:
                cmd += ["-x", k]
        a = self.args
        cmd += [self.bin, "--role", role, "--edge", str(a.edge), "--writers", str(a.writers), "--steps", str(a.steps)]
        cmd += extra
        if background:
            return subprocess.Popen(cmd, env=env or self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        p = subprocess.run(cmd, env=env or self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=600)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stdout}")
        return parse(p.stdout, role)

    def server(self, name, server_args=()):
        d = os.path.join(self.work, name)
        subprocess.run(["bash", self.server_sh, "start", d, *server_args], env=self.env, check=True)
        env = dict(self.env, COVE_CONNECT=os.path.join(d, "cove.conn"))
        return d, env

    def stop(self, d):
        subprocess.run(["bash", self.server_sh, "stop", d], env=self.env, check=False)

    def files(self, cold):
        self.runs += 1
        path = os.path.join(self.work, f"{'cold' if cold else 'warm'}{self.runs}", "s3d.nc")
        os.makedirs(os.path.dirname(path))
        w = self.job("writer", self.args.writers, ["--file", path] + (["--sync"] if cold else []))
        r = self.job("reader", self.args.readers, ["--file", path] + (["--drop"] if cold else []))
        return w, r

    def cove(self, api, name, slow_reader_ms=0, server_args=()):
        self.runs += 1
        name = f"{name}{self.runs}"
        log = os.path.join(self.work, name + ".log")
        if self.args.server_log:
            server_args = [*server_args, "--log-file", log]
        d, env = self.server(name, server_args)
        try:
            path = os.path.join(self.work, name, "s3d.nc")
            extra = ["--file", path, "--api", "cove" if api == "native" else "pnetcdf"]
            if api == "pnetcdf":
                config = os.path.join(d, "cove-pnetcdf.toml")
                with open(config, "w") as f:
                    f.write(f'timeout = 120\n[[file]]\nname = "{path}"\nmode = "memory"\ntransfer = "deep"\n')
                env = dict(env, LD_PRELOAD=self.lib, COVE_PNETCDF_CONFIG=config)
            if slow_reader_ms:
                reader = self.job("reader", self.args.readers, extra + ["--sleep-ms", str(slow_reader_ms)], env,
                                  background=True)
                w = self.job("writer", self.args.writers, extra, env)
                out, _ = reader.communicate(timeout=600)
                if reader.returncode != 0:
                    raise RuntimeError(f"slow reader failed:\n{out}")
                return w, parse(out, "reader")
            w = self.job("writer", self.args.writers, extra, env)
            r = self.job("reader", self.args.readers, extra, env)
            if api == "pnetcdf" and os.path.exists(path):
                raise RuntimeError(f"memory mode wrote {path} to disk")
            return w, r
        finally:
            self.stop(d)
            if self.args.server_log:  # the pool's counts, for sizing --pool-reserve
                subprocess.run(["grep", "-h", "pool:", log], check=False)


def fortran_times(out, mode):
    m = re.search(r"^time " + mode + r" +([0-9.]+)", out, re.M)
    if not m:
        raise RuntimeError(f"no time line from the Fortran {mode}r:\n{out}")
    return float(m.group(1))


def fortran_run(run, method, how, server_args=()):
    """The Fortran S3D-IO kernel (tests/pnetcdf/s3d_io.f90), unmodified PnetCDF
    calls: 4 writers (2x2x1) then 2 readers (2x1x1); `how` is cached, dropped
    (fsync and POSIX_FADV_DONTNEED between the jobs, outside the times) or
    staged (LD_PRELOAD libcove-pnetcdf, memory mode). Returns (write s, read s)."""
    run.runs += 1
    e = run.args.edge
    grid = [str(2 * e), str(2 * e), str(e)]
    prog = os.path.join(run.build, "tests", "pnetcdf", "cove-test-pnetcdf-s3d")
    name = f"f{how}{method}-{run.runs}"
    d = os.path.join(run.work, name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "s3d_f.nc")
    env, cmd_env = run.env, []
    if how.startswith("staged"):
        d, env = run.server(name, server_args)
        config = os.path.join(d, "cove-pnetcdf.toml")
        path = os.path.join(d, "s3d_f.nc")
        with open(config, "w") as f:
            f.write(f'timeout = 120\n[[file]]\nname = "{path}"\nmode = "memory"\ntransfer = "deep"\n')
        env = dict(env, LD_PRELOAD=run.lib, COVE_PNETCDF_CONFIG=config)
        cmd_env = ["-x", "LD_PRELOAD", "-x", "COVE_CONNECT", "-x", "COVE_PNETCDF_CONFIG"]
    try:
        def job(n, mode, layout):
            p = subprocess.run(MPI + ["-n", str(n)] + cmd_env + [prog, mode, str(method), path, *layout, *grid, "timed"],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
            if p.returncode != 0:
                raise RuntimeError(f"Fortran {mode}r ({how}) failed ({p.returncode}):\n{p.stdout}")
            return p.stdout
        w = job(4, "write", ["2", "2", "1"])
        if how == "dropped":
            fd = os.open(path, os.O_RDONLY)
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            os.close(fd)
        r = job(2, "read", ["2", "1", "1"])
        if not re.search(r"^read mismatches +0$", r, re.M):
            raise RuntimeError(f"the Fortran reader ({how}) found wrong values:\n{r}")
        return fortran_times(w, "write"), fortran_times(r, "read")
    finally:
        if how.startswith("staged"):
            run.stop(d)


def fortran_table(run, args):
    """The DTF paper's headline comparison with the Fortran kernel: write and
    read time against files, cached and dropped; medians over rounds."""
    prog = os.path.join(run.build, "tests", "pnetcdf", "cove-test-pnetcdf-s3d")
    if not os.path.exists(prog):
        print(f"\nFortran S3D-IO kernel skipped: {prog} not built (PnetCDF's Fortran API)")
        return 0
    hows = [("files, cached", "cached", ()), ("files, fsync+dropped", "dropped", ()),
            ("libcove-pnetcdf (staged)", "staged", ())]
    if args.pool_reserve not in ("", "0"):
        hows.append(("staged, pool reserve", "staged-pool", ["--pool-reserve", args.pool_reserve]))
    status = 0
    e = args.edge
    print(f"\nFortran S3D-IO kernel: 4 writers (2x2x1) -> 2 readers (2x1x1), grid {2 * e}x{2 * e}x{e}, "
          f"{16 * 4 * e ** 3 * 8 / 1e6:.0f} MB, medians of {args.rounds} round(s); seconds from create/open to close")
    print(f"{'method':<7} {'way':<28} {'write (s)':>10} {'read (s)':>10} {'total (s)':>10} {'vs dropped':>11}")
    for method in (0, 1):
        times = {label: [] for label, _, _ in hows}
        for _ in range(args.rounds):
            for label, how, extra in hows:
                try:
                    times[label].append(fortran_run(run, method, how, extra))
                except Exception as ex:  # noqa: BLE001 - reported, and the exit status says so
                    print(f"  FAILED: {ex}")
                    status = 1
        med = {}
        for label, t in times.items():
            if t:
                w = sorted(x[0] for x in t)[len(t) // 2]
                r = sorted(x[1] for x in t)[len(t) // 2]
                med[label] = (w, r)
        cold = med.get("files, fsync+dropped")
        for label, (w, r) in med.items():
            ratio = f"{(cold[0] + cold[1]) / (w + r):>10.1f}x" if cold else ""
            print(f"{method:<7} {label:<28} {w:>10.4f} {r:>10.4f} {w + r:>10.4f} {ratio:>11}")
    return status


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--readers", type=int, default=2)
    ap.add_argument("--edge", type=int, default=48)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--slow-ms", type=int, default=1000, help="the slow reader's sleep before each step")
    ap.add_argument("--rounds", type=int, default=3, help="rounds over all methods (medians are reported)")
    ap.add_argument("--quick", action="store_true", help="small: edge 24, 3 steps, 1 round")
    ap.add_argument("--pool-reserve", default="1GiB",
                    help="also run both Cove ways with servers started with --pool-reserve SIZE (0: not)")
    ap.add_argument("--pool-args", default="", help="other cove-server options for the pool reserve runs")
    ap.add_argument("--server-log", action="store_true", help="print the servers' pool counts")
    ap.add_argument("--no-fortran", action="store_true", help="leave out the Fortran S3D-IO kernel's table")
    ap.add_argument("--fortran-only", action="store_true", help="only the Fortran S3D-IO kernel's table")
    ap.add_argument("--only", default="", help="run only the methods whose label contains this text")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if args.quick:
        args.edge, args.steps, args.slow_ms, args.rounds = 24, 3, 300, 1
    args.out = os.path.abspath(args.out or os.path.join(args.build, "bench-compare"))
    os.makedirs(args.out, exist_ok=True)
    run = Runner(args)
    methods = [("PnetCDF files, cached", lambda: run.files(False)),
               ("PnetCDF files, fsync+dropped", lambda: run.files(True)),
               ("through libcove-pnetcdf", lambda: run.cove("pnetcdf", "preload")),
               ("Cove native put/get", lambda: run.cove("native", "native"))]
    if args.pool_reserve not in ("", "0"):
        pool = ["--pool-reserve", args.pool_reserve] + args.pool_args.split()
        methods += [("libcove-pnetcdf, pool reserve", lambda: run.cove("pnetcdf", "preload-pool", server_args=pool)),
                    ("Cove native, pool reserve", lambda: run.cove("native", "native-pool", server_args=pool))]
    methods = [(label, fn) for label, fn in methods if args.only in label and not args.fortran_only]
    status = 0
    # Rounds interleave the methods, so that load from other work on the
    # machine falls on all of them alike; each figure is the median over rounds.
    runs = {label: [] for label, _ in methods}
    slow_runs = []
    for rnd in range(args.rounds):
        for label, fn in methods:
            print(f"round {rnd + 1}/{args.rounds}: {label} ...", flush=True)
            try:
                runs[label].append(fn())
            except Exception as e:  # noqa: BLE001 - reported, and the exit status says so
                print(f"  FAILED: {e}")
                status = 1
        if args.slow_ms <= 0 or args.fortran_only:
            continue
        print(f"round {rnd + 1}/{args.rounds}: libcove-pnetcdf with a reader sleeping {args.slow_ms} ms per step ...",
              flush=True)
        try:
            slow_runs.append(run.cove("pnetcdf", "slow", args.slow_ms))
        except Exception as e:  # noqa: BLE001
            print(f"  FAILED: {e}")
            status = 1
    rows = {label: combine(r) for label, r in runs.items() if r}
    slow = combine(slow_runs) if slow_runs else None

    gib = None
    print(f"\nS3D-IO exchange: {args.writers} writers -> {args.readers} readers, {args.edge}^3 cells per writer, "
          f"4 variables (2 x 3-D, 4-D x3, 4-D x11) of float64, {args.steps} steps, {args.rounds} round(s) "
          f"(medians per step, then over rounds)")
    print(f"{'method':<32} {'write (s)':>10} {'close (s)':>10} {'read (s)':>10} {'total (s)':>10} {'GB/s':>8} {'wrong':>6}")
    for label, (w, r) in rows.items():
        gib = w["bytes"]
        total = w["write_s"] + r["read_s"]
        print(f"{label:<32} {w['write_s']:>10.4f} {w['close_s']:>10.4f} {r['read_s']:>10.4f} {total:>10.4f} "
              f"{w['bytes'] / total / 1e9:>8.2f} {int(r['wrong']):>6}")
        if r["wrong"]:
            status = 1
    total = {k: w["write_s"] + r["read_s"] for k, (w, r) in rows.items()}
    print(f"\nbytes per step: {gib:.0f}" if gib else "")
    pre, nat, cold = (total.get("through libcove-pnetcdf"), total.get("Cove native put/get"),
                      total.get("PnetCDF files, fsync+dropped"))
    if pre and nat:
        print(f"target: libcove-pnetcdf / Cove native = {pre / nat:.2f}x (target <= 1.15x)")
    if pre and cold:
        print(f"target: PnetCDF files dropped / libcove-pnetcdf = {cold / pre:.1f}x faster (target >= 5x)")
    pool_pre, pool_nat = total.get("libcove-pnetcdf, pool reserve"), total.get("Cove native, pool reserve")
    if pool_pre and pool_nat:
        print(f"target, --pool-reserve {args.pool_reserve}: libcove-pnetcdf / Cove native = {pool_pre / pool_nat:.2f}x "
              f"(target <= 1.15x)")
    if pool_pre and cold:
        print(f"target, --pool-reserve {args.pool_reserve}: PnetCDF files dropped / libcove-pnetcdf = "
              f"{cold / pool_pre:.1f}x faster (target >= 5x)")
    if slow and "through libcove-pnetcdf" in rows:
        fast_close = rows["through libcove-pnetcdf"][0]["close_s"]
        print(f"target: writer's ncmpi_close with a reader sleeping {args.slow_ms} ms per step: {slow[0]['close_s']:.4f} s, "
              f"with no reader running: {fast_close:.4f} s (independent of the reader; DTF's writer waits)")
        if slow[1]["wrong"]:
            status = 1
    if not args.no_fortran:
        status |= fortran_table(run, args)
    shutil.rmtree(run.work, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())

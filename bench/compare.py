#!/usr/bin/env python3
"""Side-by-side benchmark: the same exchange through Cove and through the
ways coupled codes exchange data today, against memcpy measured in the same run.

For every case and process count it runs each method as one MPMD job
(writers, readers, a second reader group for the kokkos case), with a fresh
cove-server on loopback for the Cove methods; every reader checks every
element it receives. It prints progress, then a table (write, read and
end-to-end time per step, GB/s, ratio to memcpy of the same bytes measured
in the same run, time relative to Cove staged), the issue's targets, and
writes a CSV and PNG plots (CSV only, with a note, when matplotlib is not
there). A method that cannot run is listed as skipped with the reason.

  compare.py [--build DIR] [--quick | --smoke] [--methods m1,m2] [--out DIR]
             [--repeat N] [--ucx-tls tcp|sm] [--no-plots]

Cove's clients reach the server over the local transport (one host); the
server's network part listens on loopback only (its default transport,
tcp; UCX, with --ucx-tls, only where a run asks for it). Each run's own
figures: bench/compare/exchange_runner.hpp.

Exit status: 0 when every run that ran delivered exactly the right bytes,
1 otherwise (wrong data, a crash or a time-out).
"""

import argparse
import csv
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

# cove-server refuses to run as root unless told so.
AS_ROOT = ["--allow-run-as-root"] if os.geteuid() == 0 else []

METHODS = ["cove-staged", "cove-direct", "mpi", "binary-warm", "binary-cold", "hdf5-warm", "hdf5-cold", "hdf5-vol",
           "adios2-sst"]
ALWAYS = ["cove-staged", "cove-direct", "mpi", "binary-warm", "binary-cold"]
LABELS = {
    "cove-staged": "Cove staged (put+get)",
    "cove-direct": "Cove direct (put_local+get)",
    "mpi": "MPI redistribution",
    "binary-warm": "binary files, cached",
    "binary-cold": "binary files, fsync+dropped",
    "hdf5-warm": "HDF5 parallel, cached",
    "hdf5-cold": "HDF5 parallel, fsync+dropped",
    "hdf5-vol": "HDF5 through the Cove VOL",
    "adios2-sst": "ADIOS2 SST",
}
FIELDS = ["method", "case", "counts", "writers", "readers", "bytes", "steps", "write_s", "read_s", "e2e_s", "gbps",
          "memcpy_gbps", "status", "note"]


def plan(mode):
    """(case, size, writers, readers, steps) of each configuration."""
    if mode == "smoke":
        return [("grid-particles", 16, 2, 1, 2), ("kokkos", 1, 1, 1, 2)]
    if mode == "quick":
        return [("grid-particles", 50, 1, 1, 3), ("grid-particles", 50, 3, 1, 3), ("kokkos", 8, 1, 1, 3),
                ("large", 128, 1, 1, 2)]
    runs = [("grid-particles", 100, w, r, 5) for w, r in [(1, 1), (3, 1), (4, 2), (6, 2)]]
    runs += [("kokkos", 32, w, r, 5) for w, r in [(1, 1), (2, 1), (4, 2)]]
    runs += [("large", 128, 1, 1, 4), ("large", 512, 1, 1, 3)]
    return runs


def counts_label(case, w, r):
    return f"{w}->{r}+{r}" if case == "kokkos" else f"{w}->{r}"


class Bench:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build)
        self.bin = os.path.join(self.build, "bench")
        self.tools = os.path.join(self.build, "tools")
        self.out = os.path.abspath(args.out or os.path.join(self.build, "bench-compare"))
        os.makedirs(self.out, exist_ok=True)
        self.work = tempfile.mkdtemp(prefix="cove-compare.", dir=self.out)
        self.server = None
        self.runs = 0
        self.rows = []
        self.failed = False
        self.programs = self.read_programs()

    def read_programs(self):
        """method -> program path, or 'skipped: reason' (from CMake's compare_methods.txt)."""
        info = os.path.join(self.bin, "compare_methods.txt")
        found = {}
        if os.path.exists(info):
            for line in open(info):
                if "\t" in line:
                    m, what = line.rstrip("\n").split("\t", 1)
                    found[m] = what
        progs = {}
        for m in METHODS:
            what = found.get(m, "skipped: not configured (rebuild the bench folder with MPI and UCX)")
            if what.startswith("skipped"):
                progs[m] = what
            elif not os.access(os.path.join(self.bin, what), os.X_OK):
                progs[m] = f"skipped: {what} is not built (cmake --build {self.build})"
            else:
                progs[m] = os.path.join(self.bin, what)
        return progs

    # -- cove-server, one per Cove run, on loopback, stopped by PID ---------
    def start_server(self, env):
        conn = os.path.join(self.work, "cove.conn")
        if os.path.exists(conn):
            os.remove(conn)
        log = open(os.path.join(self.work, "server.log"), "w")
        self.server = subprocess.Popen([os.path.join(self.tools, "cove-server"), "--connection-file", conn,
                                        "--log-level", "warn", "--max-versions", "2"] + AS_ROOT, env=env, stdout=log,
                                       stderr=subprocess.STDOUT)
        for _ in range(400):
            if os.path.exists(conn):
                return conn
            if self.server.poll() is not None:
                break
            time.sleep(0.025)
        self.stop_server(env)
        raise RuntimeError("cove-server did not start: " + open(os.path.join(self.work, "server.log")).read())

    def stop_server(self, env):
        if self.server is None:
            return
        subprocess.run([os.path.join(self.tools, "cove"), "stop"], env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=20, check=False)
        try:
            self.server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.server.kill()
            self.server.wait()
        self.server = None

    # -- one run ----------------------------------------------------------
    def run_one(self, method, case, size, w, r, steps, timeout):
        prog = self.programs[method]
        base = dict(method=method, case=case, counts=counts_label(case, w, r), writers=w,
                    readers=r * (2 if case == "kokkos" else 1), bytes=0, steps=steps, write_s=0, read_s=0, e2e_s=0,
                    gbps=0, memcpy_gbps=0, status="skipped", note="")
        if prog.startswith("skipped"):
            base["note"] = prog[len("skipped: "):]
            return base
        env = dict(os.environ)
        self.runs += 1
        run_id = f"r{self.runs}-{method}-{case}-{w}-{r}-{size}"
        csv_path = os.path.join(self.work, run_id + ".csv")
        # hdf5-vol: the HDF5 program, unchanged (its hdf5-warm method), with the
        # Cove VOL connector chosen by the environment (docs/hdf5.md).
        common = ["--method", "hdf5-warm" if method == "hdf5-vol" else method, "--case", case, "--writers", str(w), "--readers", str(r), "--steps", str(steps),
                  "--size", str(size), "--dir", os.path.join(self.work, "files"), "--csv", csv_path, "--run-id", run_id]
        if method == "adios2-sst" and w == 1:
            common += ["--opt", "note=ADIOS2 wheel has no MPI: 1 process per program"]
        mpiexec = ["mpiexec", "--oversubscribe", "--bind-to", "none"]
        if os.geteuid() == 0:
            mpiexec.append("--allow-run-as-root")
        cmd = mpiexec + ["-n", str(w), prog, "--role", "writer"] + common
        cmd += [":", "-n", str(r), prog, "--role", "reader"] + common
        if case == "kokkos":
            cmd += [":", "-n", str(r), prog, "--role", "reader2"] + common
        try:
            if method.startswith("cove") or method == "hdf5-vol":
                env.update(UCX_TLS=self.args.ucx_tls, UCX_WARN_UNUSED_ENV_VARS="n")
                env.setdefault("UCX_NET_DEVICES", "lo")  # the server and clients talk over loopback only
                env["COVE_CONNECT"] = self.start_server(env)
            if method == "hdf5-vol":
                env["HDF5_PLUGIN_PATH"] = open(os.path.join(self.bin, "h5vol_plugin_dir.txt")).read().strip()
                # The program names a file per step; the producer keeps the newest two in
                # Cove, as the server keeps two versions for the native methods.
                config = os.path.join(self.work, "cove-h5.toml")
                with open(config, "w") as f:
                    f.write("keep_files = 2\n")
                env["HDF5_VOL_CONNECTOR"] = f"cove config={config}"
            proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                    start_new_session=True)
            try:
                output, _ = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)  # the job we started, by its process group
                output, _ = proc.communicate()
                base.update(status="FAILED", note=f"timed out after {timeout} s")
                self.failed = True
                return base
        finally:
            if method.startswith("cove") or method == "hdf5-vol":
                self.stop_server(env)
        rows = list(csv.DictReader(open(csv_path), fieldnames=FIELDS)) if os.path.exists(csv_path) else []
        if rows:
            row = rows[-1]
            for k in ("writers", "readers", "bytes", "steps"):
                row[k] = int(row[k])
            for k in ("write_s", "read_s", "e2e_s", "gbps", "memcpy_gbps"):
                row[k] = float(row[k])
            row["counts"] = base["counts"]
            row["method"] = method
            if row["status"] not in ("ok", "skipped"):
                self.failed = True
                row["note"] = (row["note"] + " | " if row["note"] else "") + last_lines(output)
            return row
        self.failed = True
        log = os.path.join(self.out, f"failed-{run_id}.log")
        with open(log, "w") as f:
            f.write(" ".join(cmd) + "\n" + (output or ""))
        base.update(status="FAILED", note=f"exit {proc.returncode}: " + last_lines(output) + f" (log: {log})")
        return base

    def run(self):
        mode = "smoke" if self.args.smoke else "quick" if self.args.quick else "full"
        methods = self.args.methods.split(",") if self.args.methods else (ALWAYS if mode == "smoke" else METHODS)
        for m in methods:
            if m not in METHODS:
                sys.exit(f"compare.py: unknown method {m} (known: {', '.join(METHODS)})")
        configs = plan(mode)
        repeat = self.args.repeat or (3 if mode == "full" else 1)
        total = len(configs) * len(methods) * repeat
        timeout = 120 if mode != "full" else 600
        print(f"== Cove side-by-side benchmark ({mode}): {len(configs)} configurations x {len(methods)} methods; "
              f"Cove over UCX_TLS={self.args.ucx_tls}; {os.cpu_count()} cores, load average {load():.1f}", flush=True)
        if load() > 1.0:
            print("   (other work is running: expect noisy timings)")
        cores = os.cpu_count()
        for case, size, w, r, steps in configs:
            procs = w + r * (2 if case == "kokkos" else 1)
            print(f"   {case} {counts_label(case, w, r)} (--size {size}): {procs} processes "
                  f"(+1 server for Cove staged and direct) on {cores} cores"
                  + (" - oversubscribed" if procs + 1 > cores else ""))
        for m in methods:
            if self.programs[m].startswith("skipped"):
                print(f"   {m}: {self.programs[m]}")
        n = 0
        started = time.time()
        for case, size, w, r, steps in configs:
            # Each configuration's methods run one after another, `repeat`
            # times over; each method's row is its repeat with the median
            # end-to-end time, so that a burst of other work on the machine
            # during one run does not decide the figure.
            tries = {m: [] for m in methods}
            for k in range(repeat):
                for m in methods:
                    if tries[m] and tries[m][-1]["status"] == "skipped":
                        continue  # skipped once: the reason will not change
                    n += 1
                    t0 = time.time()
                    row = self.run_one(m, case, size, w, r, steps, timeout)
                    row["size"] = size
                    tries[m].append(row)
                    what = (f"{row['e2e_s'] * 1e3:10.2f} ms/step {row['gbps']:6.2f} GB/s" if row["status"] == "ok"
                            else f"{row['status']}: {row['note'][:90]}")
                    if row["status"] == "skipped":
                        total -= repeat - 1 - k
                    print(f"[{n:3d}/{total}] {case:14s} {counts_label(case, w, r):7s} {fmt_size(row, size):>9s} "
                          f"{m:12s} {what}  ({time.time() - t0:.1f} s)", flush=True)
            for m in methods:
                bad = [t for t in tries[m] if t["status"] not in ("ok", "skipped")]
                good = sorted((t for t in tries[m] if t["status"] == "ok"), key=lambda t: t["e2e_s"])
                row = bad[0] if bad else good[(len(good) - 1) // 2] if good else tries[m][0]
                row["repeats"] = len(good)
                self.rows.append(row)
        print(f"== {total} runs in {time.time() - started:.0f} s; load average now {load():.1f}")
        self.report()
        return 1 if self.failed else 0

    # -- output -----------------------------------------------------------
    def report(self):
        staged = {(r["case"], r["counts"], r["size"]): r for r in self.rows
                  if r["method"] == "cove-staged" and r["status"] == "ok"}
        # memcpy of a configuration's step bytes: the median of the figures its
        # runs measured (one per run, each the median of several copies), so
        # that one run disturbed by other work does not skew its ratio.
        self.memcpy = {}
        for r in self.rows:
            if r["status"] == "ok" and r["memcpy_gbps"] > 0:
                self.memcpy.setdefault((r["case"], r["counts"], r["size"]), []).append(r["memcpy_gbps"])
        self.memcpy = {k: statistics.median(v) for k, v in self.memcpy.items()}
        for r in self.rows:
            key = (r["case"], r["counts"], r["size"])
            ref = staged.get(key)
            r["vs_cove"] = r["e2e_s"] / ref["e2e_s"] if ref and r["status"] == "ok" and ref["e2e_s"] > 0 else 0
            mc = self.memcpy.get(key, 0)
            r["x_memcpy"] = r["gbps"] / mc if r["status"] == "ok" and mc > 0 else 0
        memcpys = [r["memcpy_gbps"] for r in self.rows if r["status"] == "ok" and r["memcpy_gbps"] > 0]
        large = [r["memcpy_gbps"] for r in self.rows if r["status"] == "ok" and r["case"] == "large"]
        print()
        if memcpys:
            print(f"memcpy of each run's step bytes, measured in that run: median {statistics.median(memcpys):.2f} GB/s "
                  f"(range {min(memcpys):.2f}-{max(memcpys):.2f})"
                  + (f"; large case {statistics.median(large):.2f} GB/s" if large else ""))
        header = (f"{'case':14s} {'size/step':>9s} {'procs':7s} {'method':30s} {'write s':>9s} {'read s':>9s} "
                  f"{'e2e s/step':>10s} {'GB/s':>6s} {'xmemcpy':>7s} {'vs Cove':>7s}  status")
        print(header)
        print("-" * len(header))
        last = None
        for r in self.rows:
            key = (r["case"], r["counts"], r["size"])
            if key != last:
                mc = self.memcpy.get(key)
                print(f"{'' if last is None else chr(10)}-- {r['case']} {r['counts']}, {fmt_size(r, r['size'])} per step; memcpy "
                      "of the same bytes: " + (f"{mc:.2f} GB/s" if mc else "not measured"))
            last = key
            if r["status"] == "ok":
                print(f"{r['case']:14s} {fmt_size(r, r['size']):>9s} {r['counts']:7s} {LABELS[r['method']]:30s} "
                      f"{r['write_s']:9.4f} {r['read_s']:9.4f} {r['e2e_s']:10.4f} {r['gbps']:6.2f} "
                      f"{r['x_memcpy']:7.2f} {fmt_ratio(r['vs_cove']):>7s}  ok{'  (' + r['note'] + ')' if r['note'] else ''}")
            else:
                print(f"{r['case']:14s} {fmt_size(r, r['size']):>9s} {r['counts']:7s} {LABELS[r['method']]:30s} "
                      f"{r['status']}: {r['note']}")
        print("\nxmemcpy: GB/s over the configuration's memcpy figure (the median of its runs' own measurements);\n"
              "vs Cove: the method's end-to-end time per step over Cove staged's (2.0 = twice as long).")
        self.targets()
        self.write_csv()
        self.write_markdown()
        if not self.args.no_plots:
            self.plot()

    def write_markdown(self):
        """The table and the targets as Markdown (compare.md), for docs/bench-compare.md."""
        out = ["| case | procs | bytes/step | memcpy GB/s | method | write s | read s | end-to-end s/step | GB/s "
               "| x memcpy | vs Cove |", "|" + " --- |" * 11]
        for r in self.rows:
            key = (r["case"], r["counts"], r["size"])
            mc = self.memcpy.get(key)
            head = [r["case"], r["counts"], fmt_size(r, r["size"]), f"{mc:.2f}" if mc else "-", LABELS[r["method"]]]
            if r["status"] == "ok":
                out.append("| " + " | ".join(head + [f"{r['write_s']:.4f}", f"{r['read_s']:.4f}", f"{r['e2e_s']:.4f}",
                                                      f"{r['gbps']:.2f}", f"{r['x_memcpy']:.2f}",
                                                      fmt_ratio(r["vs_cove"])]) + " |")
            else:
                out.append("| " + " | ".join(head + [f"{r['status']}: {r['note']}"] + [""] * 5) + " |")
        out += ["", "Targets:", ""] + [f"- {l.strip()}" for l in self.target_lines]
        path = os.path.join(self.out, "compare.md")
        with open(path, "w") as f:
            f.write("\n".join(out) + "\n")
        print(f"Markdown: {path}")

    def targets(self):
        ok = {(r["method"], r["case"], r["counts"], r["size"]): r for r in self.rows if r["status"] == "ok"}
        lines = []

        def check(name, pairs, goal, fmt):
            if not pairs:
                lines.append(f"  {name}: not measured in this run")
                return
            worst = min(v for _, v in pairs)
            detail = ", ".join(f"{k} {fmt(v)}" for k, v in pairs)
            lines.append(f"  {'met   ' if worst >= goal else 'MISSED'} {name}: {detail}")

        sst = []
        for size in (128, 512):
            s, a = ok.get(("cove-staged", "large", "1->1", size)), ok.get(("adios2-sst", "large", "1->1", size))
            if s and a:
                sst.append((f"{size} MiB", a["e2e_s"] / s["e2e_s"]))
        check("Cove staged vs ADIOS2 SST, 1->1 (goal >= 5x faster)", sst, 5, lambda v: f"{v:.1f}x")
        mem = [(f"{r['case']} {r['counts']} {fmt_size(r, r['size'])}", r["x_memcpy"]) for r in self.rows
               if r["method"] == "cove-staged" and r["status"] == "ok"]
        check("Cove staged end-to-end throughput (goal >= 0.4 x memcpy)", mem, 0.4, lambda v: f"{v:.2f}")
        direct = []
        for r in self.rows:
            if r["method"] == "cove-direct" and r["status"] == "ok":
                m = ok.get(("mpi", r["case"], r["counts"], r["size"]))
                if m:
                    direct.append((f"{r['case']} {r['counts']} {fmt_size(r, r['size'])}", m["e2e_s"] / r["e2e_s"]))
        check("Cove direct vs MPI redistribution (goal: no slower, MPI time / Cove time >= 1)", direct, 1.0,
              lambda v: f"{v:.2f}")
        files = []
        for r in self.rows:
            if r["method"] in ("binary-cold", "hdf5-cold") and r["status"] == "ok":
                s = ok.get(("cove-staged", r["case"], r["counts"], r["size"]))
                if s:
                    files.append((f"{r['method']} {r['case']} {r['counts']}", r["e2e_s"] / s["e2e_s"]))
        check("Cove staged vs files with the cache dropped (goal >= 5x faster)", files, 5, lambda v: f"{v:.1f}x")
        vol, vol_files = [], []
        for r in self.rows:
            if r["method"] == "hdf5-vol" and r["status"] == "ok":
                label = f"{r['case']} {r['counts']} {fmt_size(r, r['size'])}"
                s = ok.get(("cove-staged", r["case"], r["counts"], r["size"]))
                if s:
                    vol.append((label, s["e2e_s"] / r["e2e_s"]))
                c = ok.get(("hdf5-cold", r["case"], r["counts"], r["size"]))
                if c:
                    vol_files.append((label, c["e2e_s"] / r["e2e_s"]))
        check("HDF5 through the Cove VOL vs Cove's native API (goal <= 1.15x its time: native time / VOL time >= 0.87)",
              vol, 1 / 1.15, lambda v: f"{1 / v:.2f}x the time")
        check("HDF5 through the Cove VOL vs HDF5 files with the cache dropped (goal >= 5x faster)", vol_files, 5,
              lambda v: f"{v:.1f}x")
        print("Targets (ratios measured in this run):")
        print("\n".join(lines))
        self.target_lines = lines

    def write_csv(self):
        path = os.path.join(self.out, "compare.csv")
        with open(path, "w", newline="") as f:
            wr = csv.writer(f)
            wr.writerow(FIELDS[:2] + ["size_arg"] + FIELDS[2:] + ["config_memcpy_gbps", "x_memcpy", "vs_cove"])
            for r in self.rows:
                mc = self.memcpy.get((r["case"], r["counts"], r["size"]), 0)
                wr.writerow([r["method"], r["case"], r["size"]] + [r[k] for k in FIELDS[2:]] +
                            [f"{mc:.4g}", f"{r['x_memcpy']:.4f}", f"{r['vs_cove']:.4f}"])
        print(f"CSV: {path}")

    def plot(self):
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            import matplotlib.ticker
        except ImportError:
            print("plots: matplotlib is not available to this Python (scripts/setup-bench.sh installs it into "
                  "BUILD/bench-venv; make bench uses that); CSV only")
            return
        for case in dict.fromkeys(r["case"] for r in self.rows):
            rows = [r for r in self.rows if r["case"] == case]
            configs = list(dict.fromkeys((r["counts"], r["size"]) for r in rows))
            methods = [m for m in METHODS if any(r["method"] == m and r["status"] == "ok" for r in rows)]
            if not methods:
                continue
            fig, ax = plt.subplots(figsize=(max(7, 1.5 * len(configs) + 5), 4.2))
            width = 0.8 / len(methods)
            for i, m in enumerate(methods):
                xs, ys = [], []
                for j, c in enumerate(configs):
                    r = next((r for r in rows if r["method"] == m and (r["counts"], r["size"]) == c
                              and r["status"] == "ok"), None)
                    if r:
                        xs.append(j + (i - (len(methods) - 1) / 2) * width)
                        ys.append(r["e2e_s"] * 1e3)
                ax.bar(xs, ys, width, label=LABELS[m], color=f"C{METHODS.index(m)}")
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
            ax.set_xticks(range(len(configs)))
            ax.set_xticklabels([f"{c}\n{fmt_size(next(r for r in rows if (r['counts'], r['size']) == (c, s)), s)}"
                                for c, s in configs])
            ax.set_ylabel("end-to-end time per step (ms, log)")
            ax.set_title(f"{case}: end-to-end time per step (writers->readers, bytes per step)", fontsize=10)
            ax.grid(axis="y", which="both", alpha=0.3)
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
            fig.tight_layout()
            path = os.path.join(self.out, f"compare_{case}.png")
            fig.savefig(path, dpi=90, bbox_inches="tight")
            plt.close(fig)
            print(f"plot: {path}")


def load():
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


def fmt_size(row, size):
    b = row.get("bytes") or 0
    if not b:
        return f"{size}" if row["case"] == "grid-particles" else f"{size} MiB"
    return f"{b / 1048576:.0f} MiB" if b >= 10 * 1048576 else f"{b / 1048576:.1f} MiB"


def fmt_ratio(v):
    return f"{v:.2f}" if v else "-"


def last_lines(text, n=3):
    """The program's own error lines if any, else the last lines of the output."""
    lines = [l for l in (text or "").strip().splitlines() if l.strip() and not l.startswith("---")]
    own = [l for l in lines if l.startswith("cove-compare:")]
    return " / ".join((own or lines)[-n:])[:400]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default="build", help="build folder (default: build)")
    p.add_argument("--quick", action="store_true", help="small sizes and counts, under two minutes")
    p.add_argument("--smoke", action="store_true", help="tiny run of the always-built methods (the CTest)")
    p.add_argument("--methods", help="comma-separated subset of: " + ", ".join(METHODS))
    p.add_argument("--out", help="folder for CSV and plots (default: BUILD/bench-compare)")
    p.add_argument("--ucx-tls", default="tcp", choices=["tcp", "sm"],
                   help="UCX transports for Cove (tcp: with peer-failure detection, the default; sm: shared memory)")
    p.add_argument("--repeat", type=int, help="runs of each method and configuration; the median is reported "
                   "(default: 3 for the full run, 1 for --quick and --smoke)")
    p.add_argument("--no-plots", action="store_true")
    args = p.parse_args()
    bench = Bench(args)
    try:
        rc = bench.run()
    finally:
        if bench.server is not None:
            bench.server.kill()  # the server this driver started, by its PID
            bench.server.wait()
        shutil.rmtree(bench.work, ignore_errors=True)
    sys.exit(rc)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Runs the workflow emulator (bench/workflow_emulator.cpp): a staging server
group, a writer job, a first reader job started with it and a second reader
job started when the first has finished, as in the Kokkos Staging Space
paper's synthetic experiments.

  workflow.py run [options]          one configuration; a table per step
  workflow.py experiments [--quick]  the paper's three experiments (cycle time,
                                     server scale, subset size) for RAD, RASAR,
                                     RASIA, SAHR and the homogeneous case; CSV,
                                     markdown tables and PNG plots in --out

Every process is started here and stopped by PID; temporary files are removed.
The I/O times are the slowest rank's put or get per step; tables show the
median over steps 2.. (step 1 is left out as in the paper: the first reader
starts with the writer; the median because this 2-core machine is noisy).
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

METHODS = ["homogeneous", "rad", "rasar", "rasia", "sahr"]


def mpiexec(n):
    return ["mpiexec", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-n", str(n)]


class Servers:
    """A cove-server group started with mpiexec, stopped by PID."""

    def __init__(self, build, n, method, work, layouts=None):
        self.conn = os.path.join(work, "cove.conn")
        self.log = open(os.path.join(work, "servers.log"), "w")
        cmd = mpiexec(n) + [os.path.join(build, "tools", "cove-server"), "--connection-file", self.conn,
                            "--log-level", "warn", "--max-versions", "0", "--reorg", method]
        if os.geteuid() == 0:
            cmd.append("--allow-run-as-root")  # cove-server refuses root otherwise
        if layouts:
            cmd += ["--layouts", layouts]
        self.cove = os.path.join(build, "tools", "cove")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        for _ in range(400):
            if os.path.exists(self.conn):
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("the servers did not start; see " + self.log.name)

    def stop(self):
        if self.proc.poll() is None:
            subprocess.run([self.cove, "stop", "--connect", self.conn], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=30, check=False)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)  # the group of the mpiexec we started, by its PID
                self.proc.wait()
        self.log.close()


def wait_all(roles, cfg, limit=900):
    """Waits for every role; the first that fails (or the time limit) ends the run."""
    deadline = time.time() + limit
    while True:
        running = 0
        for name, p in roles.items():
            code = p.poll()
            if code is None:
                running += 1
            elif code != 0:
                raise RuntimeError("%s exited with status %d; configuration %s" % (name, code, cfg))
        if not running:
            return
        if time.time() > deadline:
            raise RuntimeError("the roles did not finish within %d s; configuration %s" % (limit, cfg))
        time.sleep(0.05)


def run_one(build, cfg, work):
    """Runs one configuration; returns the CSV rows of writer, reader1 and reader2."""
    method = cfg["method"]
    server_method = "rad" if method == "homogeneous" else method
    reader_layout = cfg["writer_layout"] if method == "homogeneous" else cfg["reader_layout"]
    servers = Servers(build, cfg["servers"], server_method, work)
    env = dict(os.environ, COVE_CONNECT=servers.conn)
    env.setdefault("UCX_TLS", "tcp")
    env.setdefault("UCX_WARN_UNUSED_ENV_VARS", "n")
    emulator = os.path.join(build, "bench", "cove-workflow")
    common = ["--domain", str(cfg["domain"]), "--steps", str(cfg["steps"]), "--delay", str(cfg["delay"])]

    def role(name, n, extra):
        out = os.path.join(work, name + ".csv")
        cmd = mpiexec(n) + [emulator, "--name", name, "--csv", out] + common + extra
        return subprocess.Popen(cmd, env=env, start_new_session=True), out

    procs = []
    try:
        writer = role("writer", cfg["writers"], ["--role", "writer", "--layout", cfg["writer_layout"]])
        procs.append(writer[0])
        reader_args = ["--role", "reader", "--layout", reader_layout, "--subset", str(cfg["subset"]),
                       "--writers", str(cfg["writers"])]
        reader1 = role("reader1", cfg["readers"], reader_args)
        procs.append(reader1[0])
        wait_all({"writer": writer[0], "reader 1": reader1[0]}, cfg)
        reader2 = role("reader2", cfg["readers"], reader_args)
        procs.append(reader2[0])
        wait_all({"reader 2": reader2[0]}, cfg)
        rows = []
        for _, path in (writer, reader1, reader2):
            with open(path) as f:
                rows += list(csv.DictReader(f))
        return rows
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        servers.stop()


def summarize(cfg, rows):
    """Medians over steps 2.. of each role's I/O time, and the servers' memory at the end."""
    out = dict(cfg)
    for role in ("writer", "reader1", "reader2"):
        mine = [r for r in rows if r["name"] == role]
        later = [float(r["io_s"]) for r in mine if int(r["step"]) > 1] or [float(r["io_s"]) for r in mine]
        out[role + "_s"] = statistics.median(later)
        out[role + "_bytes"] = int(mine[0]["bytes"])
        out["memcpy_gbps"] = float(mine[0]["memcpy_gbps"])
    last = [r for r in rows if r["name"] == "reader2"][-1]
    out["server_mib"] = float(last["server_bytes"]) / 2**20
    out["replica_mib"] = float(last["replica_bytes"]) / 2**20
    original = out["server_mib"] - out["replica_mib"]
    out["memory_x"] = out["server_mib"] / original if original > 0 else 0.0
    for role in ("reader1", "reader2"):
        gbps = out[role + "_bytes"] / out[role + "_s"] / 1e9
        out[role + "_x_memcpy"] = gbps / out["memcpy_gbps"]
    return out


def print_steps(rows):
    print("%-8s %5s %10s %12s %12s" % ("role", "step", "io ms", "server MiB", "replica MiB"))
    for r in rows:
        print("%-8s %5s %10.2f %12.1f %12.1f" % (r["name"], r["step"], float(r["io_s"]) * 1e3,
                                                 float(r["server_bytes"]) / 2**20, float(r["replica_bytes"]) / 2**20))


def table(summaries, key, label):
    lines = ["| %s | method | writer ms | reader 1 ms | reader 2 ms | reader 1 vs homog. | reader 2 vs homog. | "
             "reader 2 x memcpy | server MiB | x original |" % label,
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for value in sorted({s[key] for s in summaries}):
        group = [s for s in summaries if s[key] == value]
        homog = next((s for s in group if s["method"] == "homogeneous"), None)
        for s in group:
            r1 = s["reader1_s"] / homog["reader1_s"] if homog else float("nan")
            r2 = s["reader2_s"] / homog["reader2_s"] if homog else float("nan")
            lines.append("| %s | %s | %.1f | %.1f | %.1f | %.2f | %.2f | %.2f | %.0f | %.2f |" % (
                value, s["method"], s["writer_s"] * 1e3, s["reader1_s"] * 1e3, s["reader2_s"] * 1e3, r1, r2,
                s["reader2_x_memcpy"], s["server_mib"], s["memory_x"]))
    return "\n".join(lines)


def plot(out_dir, summaries, experiments):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    for name, key, label in experiments:
        rows = [s for s in summaries if s["experiment"] == name]
        values = sorted({s[key] for s in rows})
        fig, axes = plt.subplots(1, 4, figsize=(17, 3.8))
        width = 0.8 / len(METHODS)
        for ax, (metric, title) in zip(axes, [("writer_s", "writer"), ("reader1_s", "reader 1"),
                                              ("reader2_s", "reader 2"), ("server_mib", "server memory (MiB)")]):
            for i, m in enumerate(METHODS):
                ys = []
                for v in values:
                    s = next((r for r in rows if r[key] == v and r["method"] == m), None)
                    ys.append((s[metric] * (1 if metric == "server_mib" else 1e3)) if s else 0)
                ax.bar([j + i * width for j in range(len(values))], ys, width, label=m)
            ax.set_xticks([j + 0.4 - width / 2 for j in range(len(values))], [str(v) for v in values])
            ax.set_xlabel(label)
            ax.set_title(title + ("" if metric == "server_mib" else ": I/O ms per step"))
        axes[0].legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, "workflow_%s.png" % name), dpi=90)
        plt.close(fig)
    return True


def base_config(args):
    return {"method": "rad", "servers": args.servers, "writers": args.writers, "readers": args.readers,
            "domain": args.domain, "steps": args.steps, "delay": args.delay, "subset": args.subset,
            "writer_layout": args.writer_layout, "reader_layout": args.reader_layout}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["run", "experiments"])
    p.add_argument("--build", default="build")
    p.add_argument("--out", default=None, help="where CSV, tables and plots go (default BUILD/workflow)")
    p.add_argument("--quick", action="store_true", help="experiments: a small domain and 3 steps")
    p.add_argument("--only", default="cycle,servers,subset", help="experiments: which of them, comma-separated")
    p.add_argument("--method", default="rad", choices=METHODS)
    p.add_argument("--servers", type=int, default=2)
    p.add_argument("--writers", type=int, default=2)
    p.add_argument("--readers", type=int, default=2)
    p.add_argument("--domain", type=int, default=192)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--delay", type=float, default=0.0)
    p.add_argument("--subset", type=int, default=0, help="side of the centred cube the readers get (0: all)")
    p.add_argument("--writer-layout", default="C")
    p.add_argument("--reader-layout", default="F")
    args = p.parse_args()
    build = os.path.abspath(args.build)
    out_dir = os.path.abspath(args.out or os.path.join(build, "workflow"))
    os.makedirs(out_dir, exist_ok=True)
    work = tempfile.mkdtemp(prefix="cove-workflow.")
    try:
        if args.command == "run":
            cfg = dict(base_config(args), method=args.method)
            rows = run_one(build, cfg, work)
            print_steps(rows)
            s = summarize(cfg, rows)
            print("medians over steps 2..: writer %.1f ms, reader 1 %.1f ms, reader 2 %.1f ms; memcpy %.2f GB/s; "
                  "server memory %.0f MiB (x%.2f of the original)" % (
                      s["writer_s"] * 1e3, s["reader1_s"] * 1e3, s["reader2_s"] * 1e3, s["memcpy_gbps"],
                      s["server_mib"], s["memory_x"]))
            return 0
        if args.quick:
            args.domain, args.steps = min(args.domain, 96), 3
        side = args.domain
        experiments = [
            ("cycle", "delay", "delay (s)", [{"delay": d} for d in ([0, 0.25] if args.quick else [0, 0.25, 0.5, 1])]),
            ("servers", "servers", "servers", [{"servers": n} for n in ([1, 2] if args.quick else [1, 2, 4])]),
            ("subset", "subset", "subset side d", [{"subset": side // k} for k in (8, 4, 2)]),
        ]
        only = args.only.split(",")
        unknown = [e for e in only if e not in ("cycle", "servers", "subset")]
        if unknown:
            p.error("--only: unknown experiment %s" % ", ".join(unknown))
        experiments = [e for e in experiments if e[0] in only]
        summaries, all_rows = [], []
        total = sum(len(v) for *_, v in experiments) * len(METHODS)
        done = 0
        for name, key, label, variants in experiments:
            for variant in variants:
                for m in METHODS:
                    cfg = dict(base_config(args), method=m, **variant)
                    done += 1
                    print("[%d/%d] %s: %s=%s %s" % (done, total, name, key, cfg[key], m), flush=True)
                    rows = run_one(build, cfg, work)
                    s = summarize(cfg, rows)
                    s["experiment"] = name
                    summaries.append(s)
                    for r in rows:
                        all_rows.append(dict(r, experiment=name, method=m, **{k: cfg[k] for k in cfg if k != "method"}))
        with open(os.path.join(out_dir, "workflow_steps.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(all_rows[0].keys()))
            w.writeheader()
            w.writerows(all_rows)
        with open(os.path.join(out_dir, "workflow_summary.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(summaries[0].keys()))
            w.writeheader()
            w.writerows(summaries)
        text = ["# Workflow emulator: domain %d^3 float64 (%.0f MiB per step), %d steps, writer %d ranks, readers "
                "%d ranks each, writer layout %s, reader layout %s; memcpy %.2f GB/s in this run\n" % (
                    side, side**3 * 8 / 2**20, args.steps, args.writers, args.readers, args.writer_layout,
                    args.reader_layout, summaries[0]["memcpy_gbps"])]
        for name, key, label, _ in experiments:
            text.append("## %s\n\n%s\n" % (name, table([s for s in summaries if s["experiment"] == name], key, label)))
        with open(os.path.join(out_dir, "workflow_tables.md"), "w") as f:
            f.write("\n".join(text))
        print("\n".join(text))
        plotted = plot(out_dir, summaries, [(n, k, l) for n, k, l, _ in experiments])
        print("CSV and tables in %s%s" % (out_dir, "; plots workflow_*.png" if plotted
                                          else "; no plots (matplotlib is not installed for %s)" % sys.executable))
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

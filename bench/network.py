#!/usr/bin/env python3
"""The network benchmark (`make bench-network`, part of `make bench`): the
path between hosts, measured on one host over TCP, three ways in one run,
on two networks:

  - loopback: both sides on this host's `lo`;
  - netns: the two sides in two network namespaces joined by a veth pair
    (MTU 1500, as an Ethernet link between hosts), so every byte crosses
    a network device; needs root and `ip`, and is skipped (said in the
    output) without them.

On each:

  - MPI (Open MPI's ob1 with its tcp BTL): one-way bandwidth and the
    median 4 KiB ping-pong round trip (bench/net_mpi.cpp), the baseline;
  - UCX's own ucx_perftest over tcp (tag_bw, tag_lat), when installed
    (scripts/setup-bench.sh installs ucx-utils); its latency is half the
    round trip, doubled here, and its bandwidth is what the sender sees;
  - Cove, twice: a server with transport tcp (Cove's own TCP path) and
    clients with COVE_TRANSPORT=tcp, then transport ucx with
    COVE_TRANSPORT=ucx and UCX_TLS=tcp (bench/staging_bench.cpp's put and
    get of 64 and 512 MiB and its 4 KiB put and get medians, each a round
    trip).

On each network MPI runs first and again last, and the ratios are to its
better run of each figure. Prints one table, each row with its ratio to
that network's MPI figure of the same run and issue 34's target, and
writes the rows to BUILD/network_bench.csv.

  network.py [--build DIR] [--quick] [--transports tcp,ucx] [--networks loopback,netns]
"""
import argparse
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

MPI = ["mpiexec", "--oversubscribe", "--bind-to", "none"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
MIB = 1 << 20
HERE = os.path.dirname(os.path.abspath(__file__))
INTEGRATION = os.path.join(HERE, "..", "tests", "integration")


def run(cmd, env, timeout=900):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stdout}")
    return p.stdout


class Loopback:
    """Both sides on this host's loopback."""
    name = "loopback"
    device = "lo"
    server_ip = "127.0.0.1"
    side_a = side_b = []  # command prefixes: where the server (A) and the clients (B) run

    def mpi_pair(self, mca, program):
        return MPI + mca + ["-n", "2"] + program

    def listen(self):
        return []  # a server listens on loopback unless told otherwise

    def close(self):
        pass


class Netns:
    """Two network namespaces, A and B, joined by a veth pair named cove0 on
    both ends (MTU 1500). The server, ucx_perftest's server and MPI's rank 0
    run in A; clients, ucx_perftest's client and MPI's rank 1 in B. Abstract
    Unix sockets do not cross network namespaces, so Cove's local transport
    cannot reach the server and every byte goes over TCP through the link
    (Cove's TCP path uses no shared memory or process_vm_readv). mpiexec runs
    in A; rank 1 enters B through tests/integration/hosts.sh --rank, which
    relays mpiexec's PMIx port (on A's loopback) over the link."""
    name = "netns"
    device = "cove0"
    subnet = "10.214.7"
    server_ip = subnet + ".1"

    def __init__(self, work):
        self.work = work
        tag = f"covenet{os.getpid()}"
        self.a, self.b = tag + "-a", tag + "-b"
        self.made = []
        self.holder = None
        try:
            for ns in (self.a, self.b):
                self._ip("netns", "add", ns)
                self.made.append(ns)
            self._ip("link", "add", tag + "x", "netns", self.a, "type", "veth", "peer", "name", tag + "y", "netns",
                     self.b)
            for ns, end, host in ((self.a, tag + "x", 1), (self.b, tag + "y", 2)):
                self._ip("-n", ns, "link", "set", end, "name", self.device)
                self._ip("-n", ns, "addr", "add", f"{self.subnet}.{host}/24", "dev", self.device)
                self._ip("-n", ns, "link", "set", "lo", "up")
                self._ip("-n", ns, "link", "set", self.device, "up")
            # A process living in B, for hosts.sh --rank to enter B by.
            self.holder = subprocess.Popen(["ip", "netns", "exec", self.b, "sleep", "100000"])
        except Exception:
            self.close()
            raise
        self.side_a = ["ip", "netns", "exec", self.a]
        self.side_b = ["ip", "netns", "exec", self.b]

    @staticmethod
    def _ip(*args):
        subprocess.run(["ip", *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    @staticmethod
    def available():
        """'' when namespaces can be made here, else why not."""
        if os.geteuid() != 0:
            return "making network namespaces needs root"
        if not shutil.which("ip") or not shutil.which("nsenter"):
            return "no ip or nsenter"
        probe = f"covenetprobe{os.getpid()}"
        if subprocess.run(["ip", "netns", "add", probe], stderr=subprocess.DEVNULL).returncode != 0:
            return "cannot make network namespaces here"
        subprocess.run(["ip", "netns", "del", probe])
        return ""

    def mpi_pair(self, mca, program):
        rank1 = [os.path.join(INTEGRATION, "hosts.sh"), "--rank", str(self.holder.pid), self.server_ip, self.work]
        return self.side_a + MPI + mca + ["-n", "1"] + program + [":", "-n", "1"] + rank1 + program

    def listen(self):
        return ["--listen", self.device]

    def close(self):
        relays = os.path.join(self.work, "relays")
        if os.path.exists(relays):
            for pid in open(relays).read().split():
                try:
                    os.kill(int(pid), 9)
                except (OSError, ValueError):
                    pass
            os.remove(relays)
        if self.holder:
            self.holder.kill()
            self.holder.wait()
            self.holder = None
        for ns in self.made:
            subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)
        self.made = []


def mpi_baseline(build, quick, env, net):
    mca = ["--mca", "pml", "ob1", "--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", net.device]
    out = run(net.mpi_pair(mca, [os.path.join(build, "bench", "cove-net-mpi")] + (["--quick"] if quick else [])), env)
    rows = dict(line.split(",", 1) for line in out.splitlines() if re.match(r"^(one-way|round trip)", line))
    return {k: float(v) for k, v in rows.items()}


def perftest(test, size, iters, port, env, net):
    """ucx_perftest's final line: (median latency in us, overall bandwidth in GB/s)."""
    args = ["-t", test, "-s", str(size), "-n", str(iters), "-p", str(port), "-f"]
    server = subprocess.Popen(net.side_a + ["ucx_perftest"] + args, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    try:
        out = ""
        for _ in range(50):  # the server needs a moment to listen
            time.sleep(0.1)
            p = subprocess.run(net.side_b + ["ucx_perftest", net.server_ip] + args, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=300)
            out = p.stdout
            if p.returncode == 0:
                break
        else:
            raise RuntimeError(f"ucx_perftest {test} failed:\n{out}")
    finally:
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 8 and f[0].isdigit():
            # iterations, latency 50%ile, average, overall (us), bandwidth average, overall (MB/s: 2^20 bytes), rates
            return float(f[1]), float(f[5]) * MIB / 1e9
    raise RuntimeError(f"no result line from ucx_perftest {test}:\n{out}")


def cove(build, quick, env, work, transport, net):
    d = os.path.join(work, f"server-{net.name}-{transport}")
    server_sh = os.path.join(INTEGRATION, "server.sh")
    senv = dict(env, COVE_BIN=os.path.join(build, "tools"))
    subprocess.run(net.side_a + ["bash", server_sh, "start", d, "--transport", transport, "--log-level", "warn"] +
                   net.listen(), env=senv, check=True)
    try:
        out_csv = os.path.join(work, "staging.csv")
        cenv = dict(senv, COVE_CONNECT=os.path.join(d, "cove.conn"), COVE_TRANSPORT=transport)
        cmd = MPI + ["-n", "2"]
        for k in ("COVE_CONNECT", "COVE_TRANSPORT", "UCX_TLS", "UCX_NET_DEVICES", "UCX_WARN_UNUSED_ENV_VARS"):
            cmd += ["-x", k]
        # Seven repetitions of each bulk case, their median: the first one's
        # server block is fresh memory, the rest are recycled, as in a
        # workflow's steady state (MPI's figure is its mean over 5 messages).
        run(net.side_b + cmd + [os.path.join(build, "bench", "cove-staging-bench"), "--csv", out_csv, "--reps", "7"] +
            (["--quick"] if quick else []), cenv)
        with open(out_csv) as f:
            return {r[1]: float(r[2]) for r in csv.reader(f) if len(r) > 2 and r[1] != "case"}
    finally:
        subprocess.run(net.side_a + ["bash", server_sh, "stop", d], env=senv)


def measure(build, args, work, net, rows):
    """Every figure on one network, appended to rows as
    (network, case, value, unit, MPI's figure, ratio, target, verdict)."""
    env = dict(os.environ, UCX_TLS="tcp", UCX_NET_DEVICES=net.device, UCX_WARN_UNUSED_ENV_VARS="n")
    # MPI runs first and again last; the baseline is its better run of
    # each figure (MPI over loopback varies by 2x between runs on a
    # 2-core VM), so a ratio errs against Cove, never for it.
    mpi_runs = [mpi_baseline(build, args.quick, env, net)]
    mpi_bw, mpi_rtt = {}, 0.0

    def set_baseline():
        nonlocal mpi_rtt
        for mib in (64, 512):
            mpi_bw[mib] = max(r[f"one-way {mib} MiB"] for r in mpi_runs)
        mpi_rtt = min(r["round trip 4 KiB"] for r in mpi_runs)

    def bw_row(name, value, mib, target=None):
        ratio = value / mpi_bw[mib]
        rows.append((net.name, name, value, "GB/s", mpi_bw[mib], ratio, f">= {target}" if target else "",
                     "" if target is None else ("met" if ratio >= target else "MISSED")))

    def rtt_row(name, value, target=None):
        ratio = value / mpi_rtt
        rows.append((net.name, name, value, "us", mpi_rtt, ratio, f"<= {target}" if target else "",
                     "" if target is None else ("met" if ratio <= target else "MISSED")))

    measured = []  # (name, value, mib or None, target), made into rows once the baseline is final
    if shutil.which("ucx_perftest"):
        iters = {64: 10 if args.quick else 40, 512: 2 if args.quick else 6}
        for i, mib in enumerate((64, 512)):
            _, gbps = perftest("tag_bw", mib * MIB, iters[mib], 13400 + i, env, net)
            measured.append((f"ucx_perftest tag_bw {mib} MiB", gbps, mib, None))
        half, _ = perftest("tag_lat", 4096, 2000 if args.quick else 20000, 13402, env, net)
        measured.append(("ucx_perftest 4 KiB round trip", 2 * half, None, None))
    else:
        print("ucx_perftest not installed (ucx-utils; scripts/setup-bench.sh): its rows are skipped")
    for transport in args.transports.split(","):
        c = cove(build, args.quick, env, work, transport, net)
        for mib in (64, 512):
            for op in ("put", "get"):
                measured.append((f"Cove {transport} {op} {mib} MiB", c[f"{op} {mib} MiB"], mib, 0.8))
        measured.append((f"Cove {transport} put 4 KiB round trip", c["put 4 KiB, median"], None, 1.5))
        measured.append((f"Cove {transport} get 4 KiB round trip", c["get 4 KiB, median"], None, 1.5))
    mpi_runs.append(mpi_baseline(build, args.quick, env, net))
    set_baseline()
    for i, r in enumerate(mpi_runs):
        for mib in (64, 512):
            bw_row(f"MPI one-way {mib} MiB, run {i + 1}", r[f"one-way {mib} MiB"], mib)
        rtt_row(f"MPI 4 KiB round trip, run {i + 1}", r["round trip 4 KiB"])
    for name, value, mib, target in measured:
        if mib:
            bw_row(name, value, mib, target)
        else:
            rtt_row(name, value, target)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--transports", default="tcp,ucx", help="Cove's transports to run, of tcp and ucx")
    ap.add_argument("--networks", default="loopback,netns", help="where to run, of loopback and netns")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    work = tempfile.mkdtemp(prefix="cove-network-bench.")
    rows = []
    skipped = []
    try:
        for name in args.networks.split(","):
            if name == "loopback":
                net = Loopback()
            elif name == "netns":
                why = Netns.available()
                if why:
                    skipped.append(f"netns: skipped ({why})")
                    continue
                net = Netns(work)
            else:
                ap.error(f"--networks: '{name}' is not loopback or netns")
            try:
                measure(build, args, work, net, rows)
            finally:
                net.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("\nNetwork benchmark: TCP (UCX_TLS=tcp, MPI's tcp BTL) over loopback and between two network namespaces "
          "(veth, MTU 1500), one run; ratio = value / that network's MPI figure, the better of its two runs")
    for line in skipped:
        print(line)
    print(f"{'network':<8} | {'case':<36} | {'measured':>14} | {'MPI, same run':>14} | {'ratio':>6} | {'target':<7} |")
    print("-" * 103)
    for network, name, value, unit, base, ratio, target, met in rows:
        print(f"{network:<8} | {name:<36} | {value:>9.2f} {unit:<4} | {base:>9.2f} {unit:<4} | {ratio:>6.2f} | "
              f"{target:<7} | {met}")
    out = os.path.join(build, "network_bench.csv")
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["network", "case", "value", "unit", "mpi", "ratio", "target", "verdict"])
        w.writerows(rows)
    print(f"CSV: {out}")


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env bash
# The soak: CLIENTS clients (cove-soak) doing mixed operations against a
# group of 2 servers for SECONDS, every get checked; the servers' memory
# (RSS) and open descriptors sampled every INTERVAL seconds, printed as a
# table, written to DIR/soak.csv and, when matplotlib is there, plotted to
# DIR/soak.png.
#   soak.sh DIR SECONDS [INTERVAL] [CLIENTS]
# Pass: no wrong byte, no lost acknowledged put, no unexpected error; and,
# for runs of 120 s or more, each server's RSS and descriptors within 5% of
# their value at the end of the warm-up (the first fifth, at least 60 s)
# for the rest of the run. Every process started here is stopped by its PID.
set -euo pipefail
dir=$1 seconds=$2 interval=${3:-10} clients=${4:-8}
here=$(cd "$(dirname "$0")/../integration" && pwd)
export COVE_CONNECT=$dir/cove.conn
. "$here"/harness.sh
COVE_TEST_SERVERS=2 "$here"/server.sh start "$dir" --memory-budget 256MiB --max-versions 4
pids=()
for rank in 0 1; do
  p=$(sed -n "s/.*cove-server \([0-9]*\): serving as $rank of 2.*/\1/p" "$dir/server.log")
  [ -n "$p" ] || p=$(pgrep -P "$(cat "$dir/server.pid")" | sed -n "$((rank + 1))p")
  pids+=("$p")
done
[ -n "${pids[0]}" ] && [ -n "${pids[1]}" ] || { echo "no server PIDs"; cat "$dir/server.log"; exit 1; }
start_bg "$dir/clients.out" "$COVE_TEST_BIN"/cove-soak "$clients" "$seconds"
soak=$last
echo "seconds,server,rss_kib,fds" > "$dir/soak.csv"
t0=$(date +%s)
sample() {
  local t=$(($(date +%s) - t0))
  for rank in 0 1; do
    local p=${pids[$rank]}
    local rss fds
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$p/status" 2> /dev/null || echo 0)
    fds=$(ls "/proc/$p/fd" 2> /dev/null | wc -l)
    echo "$t,$rank,$rss,$fds" >> "$dir/soak.csv"
  done
}
sample
while kill -0 "$soak" 2> /dev/null; do
  for _ in $(seq $((interval * 10))); do kill -0 "$soak" 2> /dev/null || break; sleep 0.1; done
  kill -0 "$soak" 2> /dev/null && sample  # while the clients run (they close their connections at the end)
done
status=0
wait "$soak" || status=$?
cat "$dir/clients.out"
py=python3
[ -x "${COVE_BENCH_PYTHON:-}" ] && py=$COVE_BENCH_PYTHON
"$py" - "$dir/soak.csv" "$seconds" "$dir/soak.png" <<'PY' || status=1
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
seconds = float(sys.argv[2])
by = {}
for r in rows:
    by.setdefault(int(r["server"]), []).append((int(r["seconds"]), int(r["rss_kib"]), int(r["fds"])))
print(f"{'s':>6} " + " ".join(f"{'server ' + str(k) + ' RSS':>16} {'fds':>5}" for k in sorted(by)))
for i in range(len(by[0])):
    print(f"{by[0][i][0]:>6} " + " ".join(f"{by[k][i][1] / 1024:>13.1f} MiB {by[k][i][2]:>5}" for k in sorted(by) if i < len(by[k])))
ok = True
if seconds >= 120:
    warm = max(60.0, seconds / 5)
    for k, s in by.items():
        after = [x for x in s if x[0] >= warm]
        if len(after) < 2:
            continue
        base_rss, base_fds = after[0][1], after[0][2]
        worst_rss = max(abs(x[1] - base_rss) / base_rss for x in after)
        worst_fds = max(abs(x[2] - base_fds) / base_fds for x in after)
        flat = worst_rss <= 0.05 and worst_fds <= 0.05
        ok &= flat
        print(f"{'ok' if flat else 'FAIL'}: server {k} after {warm:.0f} s of warm-up: RSS within {100 * worst_rss:.1f}%, "
              f"descriptors within {100 * worst_fds:.1f}% (5% allowed)")
else:
    print(f"(a run of {seconds:.0f} s: RSS and descriptors are shown, flatness is judged from 120 s on)")
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(2, 1, sharex=True, figsize=(7, 5))
    for k, s in sorted(by.items()):
        a.plot([x[0] for x in s], [x[1] / 1024 for x in s], label=f"server {k}")
        b.plot([x[0] for x in s], [x[2] for x in s], label=f"server {k}")
    a.set_ylabel("RSS (MiB)"); b.set_ylabel("open descriptors"); b.set_xlabel("seconds")
    a.legend(); a.set_ylim(bottom=0); b.set_ylim(bottom=0)
    fig.suptitle("cove soak: servers' memory and descriptors")
    fig.savefig(sys.argv[3], dpi=100)
    print("plot:", sys.argv[3])
except ImportError:
    print("(no plot: matplotlib is not installed)")
sys.exit(0 if ok else 1)
PY
exit $status

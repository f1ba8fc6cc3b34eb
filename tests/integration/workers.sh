#!/usr/bin/env bash
# In-staging workers against a real group of 2 servers (docs/placement.md,
# "Workers" and "The real run"):
#  * the AMR + k-way reduction workflow, small, for every policy: every
#    task runs, every byte read is checked against what the producer wrote,
#    and the bytes read are all those of the graph (cove-placement-run fails otherwise);
#  * a worker whose partner on the other server never registers times out
#    naming that server;
#  * a server's worker slots run out: the next worker is refused naming them;
#    a worker that exits leaves its slot to the next.
#   workers.sh DIR   (COVE_BIN, COVE_RUN_BIN: the folders of cove and cove-placement-run)
set -euo pipefail
dir=$1
here=$(dirname "$0")
export COVE_TEST_SERVERS=2
. "$here"/harness.sh
mkdir -p "$dir"
cat > "$dir/placement.toml" <<'TOML'
[server]
worker_slots = 2
placement_variables = { "amr.rr-blocking" = "rr-blocking", "amr.rr-nonblocking" = "rr-nonblocking", "amr.time" = "time", "amr.data" = "data", "amr.hybrid" = "hybrid" }
TOML
# An unknown policy: the server refuses to start, naming the variable.
cat > "$dir/bad.toml" <<'TOML'
[server]
placement_variables = { rho = "fastest" }
TOML
as_root=()
[ "$(id -u)" -eq 0 ] && as_root=(--allow-run-as-root)
if "$COVE_BIN"/cove-server "${as_root[@]}" --config "$dir/bad.toml" --connection-file "$dir/bad.conn" > "$dir/bad.out" 2>&1; then
  echo "FAILED: a server started with an unknown placement policy"; exit 1
fi
grep -q "placement_variables\['rho'\].*fastest" "$dir/bad.out" || { cat "$dir/bad.out"; echo "FAILED: the bad policy is not named"; exit 1; }
"$here"/server.sh start "$dir" --config "$dir/placement.toml"
conn=$dir/cove.conn
cove=$COVE_BIN/cove

"$COVE_RUN_BIN"/cove-placement-run --connect "$conn" --cove "$cove" --out "$dir/run" --blocks 8 --k 2 --steps 3 \
  --per-server 2 --halo --base-ms 1 --sim-ms 2 --timeout-ms 20000 | tee "$dir/run.out"
for p in rr-blocking rr-nonblocking time data hybrid; do
  grep -q "^$p " "$dir/run.out" || { echo "FAILED: no result for $p"; exit 1; }
done
# Every policy's blocks were read from servers other than the reader's
# only through the halo: some bytes, never more than half.
python3 - "$dir/run/results.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1])):
    assert r["tasks"] > 0, r
    assert 0 <= r["remote_read_bytes"] <= r["read_bytes"] // 2, r
print("results:", [(r["policy"], r["remote_read_bytes"], r["remote_edge_bytes"]) for r in json.load(open(sys.argv[1]))])
PY

# The same with server 0 placing every block (put_placed, the policies of
# placement.toml, the graph handed over for affinity): all data verified again.
"$COVE_RUN_BIN"/cove-placement-run --connect "$conn" --cove "$cove" --out "$dir/served" --blocks 8 --k 2 --steps 3 \
  --per-server 2 --halo --base-ms 1 --sim-ms 2 --timeout-ms 20000 --server-placement | tee "$dir/served.out"
"$cove" stat --connect "$conn" | tee "$dir/stat.out"
grep -q "placement: 120 decisions" "$dir/stat.out" || { echo "FAILED: server 0 did not make 5 x 8 x 3 decisions"; exit 1; }
# A variable without a policy: put_placed falls back to put(), nothing is lost.
"$COVE_RUN_BIN"/cove-placement-run --connect "$conn" --cove "$cove" --out "$dir/unplaced" --blocks 8 --k 2 --steps 2 \
  --per-server 2 --base-ms 1 --sim-ms 2 --timeout-ms 20000 --server-placement --prefix unplaced --policies time
"$cove" stat --connect "$conn" | grep -q "placement: 120 decisions" || { echo "FAILED: an unplaced variable was placed"; exit 1; }

# The paper's task monitor: task times from the interval between a worker's
# consecutive reads (--monitor reads) instead of each task's report. Every
# read of every step ends one task at server 0 (the step's last one when
# the worker's tasks are done), and the data placed by it is verified as before.
reports() { "$cove" stat --connect "$conn" --json | python3 -c 'import json,sys; print(sum(s["task_reports"] for s in json.load(sys.stdin)["servers"]))'; }
before=$(reports)
"$COVE_RUN_BIN"/cove-placement-run --connect "$conn" --cove "$cove" --out "$dir/reads" --blocks 8 --k 2 --steps 3 \
  --per-server 2 --halo --base-ms 1 --sim-ms 2 --timeout-ms 20000 --server-placement --prefix reads --policies time \
  --monitor reads
after=$(reports)
reads=$(python3 -c 'import json,sys; print(3 * sum(len(t.get("reads", [])) for t in json.load(open(sys.argv[1]))["tasks"]))' \
  "$dir/reads/time.graph.json")
[ "$((after - before))" -eq "$reads" ] || { echo "FAILED: $((after - before)) task times by read intervals, expected $reads"; exit 1; }
echo "read intervals: $reads task times reported"

# --newest, the loosely coupled workflow: the producer never waits; the
# analysis takes the newest step when free (worker 0 of server 0 plans):
# rr-blocking the newest wholly written, the others the newest begun, read
# block by block as the producer writes them. Every step analysed is
# checked whole, and the last step is always analysed.
"$COVE_RUN_BIN"/cove-placement-run --connect "$conn" --cove "$cove" --out "$dir/newest" --blocks 8 --k 2 --steps 4 \
  --per-server 2 --base-ms 1 --sim-ms 2 --timeout-ms 20000 --newest --policies rr-blocking,time
python3 - "$dir/newest/results.json" <<'PY'
import json, sys
r = {x["policy"]: x for x in json.load(open(sys.argv[1]))}
for p in ("rr-blocking", "time"):
    analysed = [step for step, _, _ in r[p]["analysis"]]
    assert 1 <= r[p]["steps_analysed"] == len(analysed) <= 4, r[p]
    assert analysed[-1] == 3, r[p]
    assert len(r[p]["produced"]) == 4, r[p]
    # No step's analysis ends before its first block was written.
    for step, _, end in r[p]["analysis"]:
        assert end >= r[p]["produced"][step][0], (p, step, r[p])
PY

# A cyclic graph is refused, naming the cycle.
if "$cove" worker "$here"/../placement/cycle.json --server 0 --connect "$conn" > "$dir/cycle.out" 2>&1; then
  echo "FAILED: a worker ran a cyclic graph"; exit 1
fi
grep -q "cycle: local -> join -> fix -> local" "$dir/cycle.out" || { cat "$dir/cycle.out"; exit 1; }

# A worker of server 0 whose partner on server 1 never comes.
graph=$dir/run/time.graph.json
if "$cove" worker "$graph" --server 0 --name lonely --run lonely --timeout-ms 1500 --connect "$conn" > "$dir/lonely.out" 2>&1; then
  echo "FAILED: a worker ran although server 1 has none"; exit 1
fi
grep -q "worker 0 of server 1 (.*) has not registered" "$dir/lonely.out" || { cat "$dir/lonely.out"; echo "FAILED: the missing worker is not named"; exit 1; }

# Two slots: two waiting workers take them, a third is refused.
start_bg "$dir/w1.out" "$cove" worker "$graph" --server 0 --name w1 --run slots --per-server 2 --timeout-ms 4000 --connect "$conn"
w1=$last
start_bg "$dir/w2.out" "$cove" worker "$graph" --server 0 --name w2 --run slots --per-server 2 --timeout-ms 4000 --connect "$conn"
w2=$last
for _ in $(seq 100); do
  "$cove" stat --connect "$conn" | grep -q "workers (registered/slots, per server): 2/2, 0/2" && break
  sleep 0.05
done
"$cove" stat --connect "$conn" | grep "workers (registered/slots, per server): 2/2, 0/2"
if "$cove" worker "$graph" --server 0 --name w3 --run slots --timeout-ms 1000 --connect "$conn" > "$dir/w3.out" 2>&1; then
  echo "FAILED: a third worker got one of 2 slots"; exit 1
fi
grep -q "all 2 worker slots of server" "$dir/w3.out" || { cat "$dir/w3.out"; echo "FAILED: the refusal does not name the slots"; exit 1; }
kill_now "$w1"
wait "$w2" || true
# Both gone: their slots are free again.
for _ in $(seq 100); do
  "$cove" stat --connect "$conn" | grep -q "workers (registered/slots, per server): 0/2, 0/2" && break
  sleep 0.05
done
"$cove" stat --connect "$conn" | grep "workers (registered/slots, per server): 0/2, 0/2"
echo "workers: all checks passed"

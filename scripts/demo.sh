#!/usr/bin/env bash
# The main job: a coupled workflow through Cove.
#   - a group of 2 staging servers (mpiexec -n 2 cove-server),
#   - a 3-D heat-diffusion simulation on 4 MPI ranks that puts its field
#     every step (slabs along x),
#   - an analysis on 3 MPI ranks (slabs along y) that gets each step, prints
#     statistics and checks its checksum against the simulation's own.
# Prints the analysis table, the servers' view (cove ls / cove stat) and a
# final verified / FAILED line; stops the servers and leaves no process behind.
# With --python, the analysis is the Python one (examples/03_python_analysis:
# mpi4py, numpy, and matplotlib PNGs in --plots DIR), run by that interpreter,
# which must import cove (pip install ., or PYTHONPATH=BUILD/python).
#
#   demo.sh [--build DIR] [--n CELLS_PER_SIDE] [--steps STEPS] [--python PYTHON [--plots DIR]]
set -euo pipefail

build=build n=48 steps=10 python="" plots=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --n) n=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --python) python=$2; shift 2 ;;
    --plots) plots=$(mkdir -p "$2" && cd "$2" && pwd); shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--n N] [--steps S] [--python PYTHON [--plots DIR]]" >&2; exit 2 ;;
  esac
done
bin=$(cd "$build" && pwd)
tools=$bin/tools examples=$bin/examples
for f in "$tools/cove-server" "$examples/heat-simulation" "$examples/heat-analysis"; do
  [ -x "$f" ] || { echo "demo: $f is missing; build first (make run does)" >&2; exit 1; }
done

# Clients on this host use the local transport; UCX (over TCP here) is only
# for other hosts (see docs/transport.md).
export UCX_TLS=${UCX_TLS:-tcp} UCX_WARN_UNUSED_ENV_VARS=n
mpirun=(mpiexec --allow-run-as-root --oversubscribe)
work=$(mktemp -d "${TMPDIR:-/tmp}/cove-demo.XXXXXX")
export COVE_CONNECT=$work/cove.conn
server_pid=""

cleanup() {
  if [ -n "$server_pid" ]; then
    "$tools/cove" stop > /dev/null 2>&1 || true
    for _ in $(seq 100); do kill -0 "$server_pid" 2> /dev/null || break; sleep 0.05; done
    if kill -0 "$server_pid" 2> /dev/null; then kill -TERM "$server_pid"; sleep 1; kill -KILL "$server_pid" 2> /dev/null || true; fi
  fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "== starting 2 staging servers"
as_root=(); [ "$(id -u)" -eq 0 ] && as_root=(--allow-run-as-root)  # refused otherwise
"${mpirun[@]}" -n 2 "$tools/cove-server" --connection-file "$COVE_CONNECT" --log-level warn "${as_root[@]}" > "$work/servers.log" 2>&1 &
server_pid=$!
for _ in $(seq 200); do
  [ -f "$COVE_CONNECT" ] && break
  kill -0 "$server_pid" 2> /dev/null || { cat "$work/servers.log"; exit 1; }
  sleep 0.05
done
[ -f "$COVE_CONNECT" ] || { echo "demo: the servers did not start"; cat "$work/servers.log"; exit 1; }

analysis=("$examples/heat-analysis" --n "$n" --steps "$steps")
if [ -n "$python" ]; then
  here=$(cd "$(dirname "$0")/.." && pwd)
  analysis=("$python" "$here/examples/03_python_analysis/analysis.py" --n "$n" --steps "$steps")
  [ -n "$plots" ] && analysis+=(--plots "$plots")
fi
echo "== simulation on 4 ranks, ${python:+Python }analysis on 3 ranks: ${n}^3 cells, $steps steps"
"${mpirun[@]}" -n 3 "${analysis[@]}" > "$work/analysis.out" 2>&1 &
analysis=$!
sim_status=0
"${mpirun[@]}" -n 4 "$examples/heat-simulation" --n "$n" --steps "$steps" || sim_status=$?
analysis_status=0
wait "$analysis" || analysis_status=$?

echo "== the servers' view"
"$tools/cove" ls | head -8
"$tools/cove" stat
echo "== analysis"
cat "$work/analysis.out"
if [ "$sim_status" -ne 0 ] || [ "$analysis_status" -ne 0 ]; then
  echo "FAILED: simulation exit $sim_status, analysis exit $analysis_status"
  exit 1
fi

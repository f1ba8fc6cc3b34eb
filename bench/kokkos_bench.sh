#!/usr/bin/env bash
# Runs the Kokkos staging benchmark (cove-kokkos-bench) against one
# cove-server started for it, and stops that server (by its PID) at exit.
#   kokkos_bench.sh [--build DIR] [cove-kokkos-bench options...]
set -euo pipefail
build=build
if [ "${1:-}" = "--build" ]; then build=$2; shift 2; fi
bin=$(cd "$build" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/cove-kokkos-bench.XXXXXX")
server=""
cleanup() {
  if [ -n "$server" ]; then
    COVE_CONNECT=$work/cove.conn "$bin/tools/cove" stop > /dev/null 2>&1 || true
    for _ in $(seq 100); do kill -0 "$server" 2> /dev/null || break; sleep 0.05; done
    kill -KILL "$server" 2> /dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
as_root=()
[ "$(id -u)" -eq 0 ] && as_root=(--allow-run-as-root)  # cove-server refuses root otherwise
export COVE_CONNECT=$work/cove.conn
"$bin/tools/cove-server" --connection-file "$COVE_CONNECT" --log-level warn "${as_root[@]}" &
server=$!
for _ in $(seq 200); do [ -f "$COVE_CONNECT" ] && break; sleep 0.05; done
"$bin/bench/cove-kokkos-bench" "$@"

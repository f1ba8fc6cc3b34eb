#!/usr/bin/env bash
# Runs the Kokkos staging benchmark (cove-kokkos-bench) against one
# cove-server started for it by tests/integration/server.sh, which stops it
# (by its PID) at exit.
#   kokkos_bench.sh [--build DIR] [cove-kokkos-bench options...]
set -euo pipefail
build=build
if [ "${1:-}" = "--build" ]; then build=$2; shift 2; fi
bin=$(cd "$build" && pwd)
server_sh=$(cd "$(dirname "$0")/.." && pwd)/tests/integration/server.sh
work=$(mktemp -d "${TMPDIR:-/tmp}/cove-kokkos-bench.XXXXXX")
export COVE_BIN=$bin/tools COVE_CONNECT=$work/cove.conn
trap '"$server_sh" stop "$work"' EXIT
"$server_sh" start "$work" --log-level warn
"$bin/bench/cove-kokkos-bench" "$@"

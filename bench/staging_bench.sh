#!/usr/bin/env bash
# Runs the staging benchmark (1 writer, 1 server, 1 reader process) over the
# local transport (Unix-domain sockets, shared-memory segments), over Cove's
# own TCP path, and over UCX with TCP (docs/transport.md).
#   staging_bench.sh [--build DIR] [--quick]
set -euo pipefail
build=build quick=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --quick) quick=--quick; shift ;;
    *) echo "usage: $0 [--build DIR] [--quick]" >&2; exit 2 ;;
  esac
done
bin=$(cd "$build" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/cove-bench.XXXXXX")
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
csv=$bin/staging_bench.csv
echo "transport,case,value,memcpy_gbps,ratio,target" > "$csv"
as_root=()
[ "$(id -u)" -eq 0 ] && as_root=(--allow-run-as-root)  # cove-server refuses root otherwise
for transport in local tcp ucx; do
  export COVE_TRANSPORT=$transport UCX_TLS=tcp UCX_WARN_UNUSED_ENV_VARS=n COVE_CONNECT=$work/cove.conn
  rm -f "$COVE_CONNECT"
  serves=tcp  # the server's transport: its local part for the local runs
  [ "$transport" = ucx ] && serves=ucx
  "$bin/tools/cove-server" --connection-file "$COVE_CONNECT" --transport "$serves" --log-level warn "${as_root[@]}" &
  server=$!
  for _ in $(seq 200); do [ -f "$COVE_CONNECT" ] && break; sleep 0.05; done
  # Unbound: each process has a progress thread besides its main thread, and
  # a rank bound to one core makes a woken caller wait behind its own
  # spinning progress thread (docs/transport.md).
  mpiexec --allow-run-as-root --oversubscribe --bind-to none -n 2 "$bin/bench/cove-staging-bench" $quick --csv "$csv"
  "$bin/tools/cove" stop > /dev/null
  wait "$server" || true
  server=""
done
echo "CSV: $csv"

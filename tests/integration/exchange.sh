#!/usr/bin/env bash
# One n-to-m exchange through its own cove-server: readers start first (they
# wait for the data), then writers; both must succeed. The server is
# stopped (by PID) and its files removed however the test ends.
#   exchange.sh DIR WRITERS READERS NDIM [--local] [--reader-layout F]
set -euo pipefail
dir=$1 nw=$2 nr=$3 ndim=$4
shift 4
here=$(dirname "$0")
"$here"/server.sh start "$dir"
trap '"$here"/server.sh stop "$dir"' EXIT
export COVE_CONNECT=$dir/cove.conn
mpirun=(mpiexec --allow-run-as-root --oversubscribe)
"${mpirun[@]}" -n "$nr" "$COVE_TEST_BIN"/cove-test-exchange --role reader --ndim "$ndim" --versions 2 "$@" &
readers=$!
sleep 0.3
"${mpirun[@]}" -n "$nw" "$COVE_TEST_BIN"/cove-test-exchange --role writer --ndim "$ndim" --versions 2 "$@"
wait "$readers"

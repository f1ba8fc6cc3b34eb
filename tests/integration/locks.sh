#!/usr/bin/env bash
# The lock manager against a real cove-server (locks.cpp): FIFO order,
# exclusion, errors, and a holder killed while another client waits.
#   locks.sh DIR
set -euo pipefail
dir=$1
here=$(dirname "$0")
export COVE_CONNECT=$dir/cove.conn
. "$here"/harness.sh
"$here"/server.sh start "$dir"
bin=$COVE_TEST_BIN/cove-test-locks
"$bin" fifo
"$bin" exclusion
"$bin" errors
"$bin" capi

# A holder killed: the waiter behind it gets the lock.
start_bg "$dir/hold.out" "$bin" hold victim
holder=$last
wait_for "$dir/hold.out" locked
start_bg "$dir/wait.out" "$bin" wait victim
waiter=$last
sleep 1
if grep -q acquired "$dir/wait.out"; then echo "FAILED: the waiter got the lock while the holder lived"; exit 1; fi
kill_now "$holder"
wait_for "$dir/wait.out" acquired
wait "$waiter"
echo "locks: all checks passed"

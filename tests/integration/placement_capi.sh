#!/usr/bin/env bash
# The worker and placement calls of the C API (placement_capi.c) against a
# real group of 2 servers, 1 worker slot each, 'placed' placed by time and
# 'grid' by hybrid; then `cove stat` shows what server 0 counted: one
# decision per put_placed of a placed variable, the task times reported,
# and every worker slot free again once the program has gone.
#   placement_capi.sh DIR   (COVE_BIN: cove; COVE_TEST_BIN: cove-test-placement-capi)
set -euo pipefail
dir=$1
here=$(dirname "$0")
export COVE_TEST_SERVERS=2
export COVE_CONNECT=$dir/cove.conn
. "$here"/harness.sh
mkdir -p "$dir"
cat > "$dir/placement.toml" <<'TOML'
[server]
worker_slots = 1
placement_variables = { placed = "time", grid = "hybrid" }
TOML
"$here"/server.sh start "$dir" --config "$dir/placement.toml"
"$COVE_TEST_BIN"/cove-test-placement-capi "$here"/../placement "$dir"
"$COVE_BIN"/cove stat --connect "$dir/cove.conn" > "$dir/stat.out"
cat "$dir/stat.out"
# 'placed': 3 versions x 4 blocks; 'grid': 1; 'unplaced' has no policy.
grep -q "placement: 13 decisions" "$dir/stat.out" || { echo "FAILED: server 0 did not make 13 placement decisions"; exit 1; }
grep -q ", 7 task times reported" "$dir/stat.out" || { echo "FAILED: the 4 task times and 3 by read intervals were not counted"; exit 1; }
for _ in $(seq 100); do
  "$COVE_BIN"/cove stat --connect "$dir/cove.conn" | grep -q "workers (registered/slots, per server): 0/1, 0/1" && break
  sleep 0.05
done
"$COVE_BIN"/cove stat --connect "$dir/cove.conn" | grep "workers (registered/slots, per server): 0/1, 0/1" \
  || { echo "FAILED: worker slots still taken after the program ended"; exit 1; }
echo "placement capi: all checks passed"

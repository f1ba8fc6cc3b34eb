#!/usr/bin/env bash
# Server 0's placement through a real group (docs/placement.md):
#   placed.sh DIR decisions   2 servers: the decision log through Client::placements
#                             and `cove stat --placements [N]` (text and JSON), `cove top`
#   placed.sh DIR window      2 servers, placement_window_ms = 1000: a burst of
#                             put_placed is placed longest EET first, every block readable
#   placed.sh DIR kill0       3 servers, replicas = 2: server 0 is SIGKILLed while a
#                             writer does put_placed in a loop; every put_placed that
#                             returned reads back exactly from the survivors
# (COVE_BIN, COVE_TEST_BIN: the folders of cove and cove-test-placed)
set -euo pipefail
dir=$1 case=$2
here=$(dirname "$0")
placed=$COVE_TEST_BIN/cove-test-placed
cove=$COVE_BIN/cove
export COVE_CONNECT=$dir/cove.conn
. "$here"/harness.sh
mkdir -p "$dir"
cat > "$dir/placement.toml" <<'TOML'
[server]
worker_slots = 2
placement_variables = { tm = "time", rr = "rr-blocking", win = "time", killed = "time" }
TOML

case "$case" in
  decisions)
    COVE_TEST_SERVERS=2 "$here"/server.sh start "$dir" --config "$dir/placement.toml"
    "$placed" decisions
    "$cove" stat --placements | tee "$dir/stat.out"
    grep -q "placements (newest 10 of 10, oldest first):" "$dir/stat.out" || { echo "FAILED: no placements header"; exit 1; }
    [ "$(grep -c '^  #' "$dir/stat.out")" -eq 10 ] || { echo "FAILED: not 10 decision lines"; exit 1; }
    grep -q "^  #0 rr \[0:512) 4.0 KiB policy rr-blocking server [01] slot [01] eet " "$dir/stat.out" ||
      { echo "FAILED: the first decision is not rr's block 0 by rr-blocking"; exit 1; }
    grep -q "^  #9 tm \[2560:3072) 4.0 KiB policy time server [01] " "$dir/stat.out" ||
      { echo "FAILED: the last decision is not tm's block 5 by time"; exit 1; }
    "$cove" stat --placements 3 | grep -c '^  #' | grep -qx 3 || { echo "FAILED: --placements 3"; exit 1; }
    "$cove" stat --placements 4 --json > "$dir/stat.json"
    python3 - "$dir/stat.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["placements"]
assert [d["sequence"] for d in p] == [6, 7, 8, 9], p
assert all(d["variable"] == "tm" and d["policy"] == "time" and d["applied"] == "time" for d in p), p
assert all(d["server"] in (0, 1) and d["bytes"] == 4096 and d["ect"] == d["min_ect"] for d in p), p
print("stat --json: 4 decisions, the newest")
PY
    "$cove" stat | grep -q "placements (newest" && { echo "FAILED: decisions shown without --placements"; exit 1; }
    "$cove" top --interval 0.05 --count 1 --placements 2 | tee "$dir/top.out"
    grep -q "placements (newest 2, oldest first):" "$dir/top.out" || { echo "FAILED: top shows no decisions"; exit 1; }
    [ "$(grep -c '^  #' "$dir/top.out")" -eq 2 ] || { echo "FAILED: top does not show 2 decisions"; exit 1; }
    if "$cove" stat --placements 2000 > "$dir/bad.out" 2>&1; then echo "FAILED: --placements 2000 accepted"; exit 1; fi ;;
  window)
    # Out of range: refused at start, naming the value (TOML, the flag, ServerOptions).
    printf '[server]\nplacement_window_ms = 5000\n' > "$dir/bad.toml"
    as_root=()
    [ "$(id -u)" -eq 0 ] && as_root=(--allow-run-as-root)
    if "$COVE_BIN"/cove-server "${as_root[@]}" --config "$dir/bad.toml" --connection-file "$dir/bad.conn" > "$dir/bad.out" 2>&1; then
      echo "FAILED: a server started with placement_window_ms = 5000"; exit 1
    fi
    grep -q "placement_window_ms must be an integer in 0..1000" "$dir/bad.out" || { cat "$dir/bad.out"; exit 1; }
    if "$COVE_BIN"/cove-server "${as_root[@]}" --placement-window-ms 2000 --connection-file "$dir/bad.conn" > "$dir/bad.out" 2>&1; then
      echo "FAILED: a server started with --placement-window-ms 2000"; exit 1
    fi
    grep -q "2000" "$dir/bad.out" || { cat "$dir/bad.out"; exit 1; }
    echo "placement_window_ms = 1000" >> "$dir/placement.toml"
    COVE_TEST_SERVERS=2 "$here"/server.sh start "$dir" --config "$dir/placement.toml"
    "$placed" window
    "$cove" stat --placements 8 ;;
  kill0)
    COVE_TEST_SERVERS=3 "$here"/server.sh start "$dir" --config "$dir/placement.toml" --replicas 2
    start_bg "$dir/w.out" "$placed" writer killed "$dir/stop"; w=$last
    wait_for "$dir/w.out" "acked 3"
    # Server 0 has placed pieces on itself: they must survive it (their second copies).
    "$cove" stat --placements 24 > "$dir/before.out"
    grep -q "^  #.* killed .* server 0 slot" "$dir/before.out" || { cat "$dir/before.out"; echo "FAILED: nothing placed on server 0"; exit 1; }
    victim=$(sed -n 's/.*cove-server \([0-9]*\): serving as 0 of 3.*/\1/p' "$dir/server.log")
    [ -n "$victim" ] || { cat "$dir/server.log"; exit 1; }
    before=$(grep -c acked "$dir/w.out")
    kill -KILL "$victim"
    sleep 6  # the writer goes on; the survivors notice
    touch "$dir/stop"
    wait "$w"
    after=$(grep -c acked "$dir/w.out")
    echo "acknowledged: $before versions before the kill, $after in all; $(grep -c '^failed' "$dir/w.out" || true) failed"
    [ "$after" -gt "$before" ] || { tail -20 "$dir/w.out"; echo "FAILED: no put_placed succeeded after server 0 died"; exit 1; }
    grep '^failed' "$dir/w.out" | head -3 || true
    "$placed" check killed "$dir/w.out" ;;
  *) echo "usage: $0 DIR decisions|window|kill0"; exit 2 ;;
esac
echo "placed $case: all checks passed"

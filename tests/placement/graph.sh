#!/usr/bin/env bash
# `cove graph` on dataflow graph files: a reduction split into 2 and 4
# nodes along its subtrees, and bad graphs refused with a message naming
# the problem (exit 1).
#   graph.sh   (COVE_BIN: the folder of the cove program)
set -euo pipefail
here=$(dirname "$0")
cove=$COVE_BIN/cove
out=$("$cove" graph "$here/reduction8.toml" --nodes 2)
echo "$out"
grep -q "15 tasks, 8 objects" <<< "$out"
# Each half of the tree on one node: b0..b3 together, b4..b7 together.
grep -Eq "^node [01]: b0 b1 b2 b3$" <<< "$out"
grep -Eq "^node [01]: b4 b5 b6 b7$" <<< "$out"
out=$("$cove" graph "$here/reduction8.toml" --nodes 4 --json)
python3 - "$out" <<'PY'
import json, sys
g = json.loads(sys.argv[1])["groups"]
pairs = [("b0", "b1"), ("b2", "b3"), ("b4", "b5"), ("b6", "b7")]
assert all(g[a] == g[b] for a, b in pairs), g
assert len({g[a] for a, _ in pairs}) == 4, g
PY
# METIS refusing the imbalance: a warning, exit 0, no groups.
"$cove" graph "$here/reduction8.toml" --nodes 2 --imbalance -5 2>/dev/null | grep -q "warning: METIS_PartGraphKway failed"
set +e
err=$("$cove" graph "$here/cycle.json" --nodes 2 2>&1); rc=$?
set -e
echo "$err"
[ $rc -eq 1 ] && grep -q "dataflow graph has a cycle: local -> join -> fix -> local" <<< "$err"
set +e
err=$("$cove" graph "$here/missing.toml" --nodes 2 2>&1); rc=$?
set -e
[ $rc -eq 1 ] && grep -q "missing.toml" <<< "$err"
echo "graph: all checks passed"

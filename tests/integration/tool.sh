#!/usr/bin/env bash
# The `cove` command against a real server: usage and exit statuses,
# refusing root, ls/stat as text and JSON after a put, top's frames, stop.
# Every process started here is stopped by its PID.
#   tool.sh DIR
set -euo pipefail
dir=$1
here=$(dirname "$0")
cove=$COVE_BIN/cove
export COVE_CONNECT=$dir/cove.conn
trap '"$here"/server.sh stop "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# Usage: --help succeeds, unknown options and missing subcommands are status 2.
"$cove" --help | grep -q "top" || fail "cove --help does not list top"
"$COVE_BIN"/cove-server --help | grep -q -- "--allow-run-as-root" || fail "cove-server --help lacks --allow-run-as-root"
set +e
"$cove" > /dev/null 2>&1; [ $? -eq 2 ] || fail "no subcommand should exit 2"
"$cove" stat --bogus > /dev/null 2>&1; [ $? -eq 2 ] || fail "an unknown option should exit 2"
"$cove" serve --max-versions=-3 > /dev/null 2>&1; [ $? -eq 2 ] || fail "a negative --max-versions should exit 2"
out=$("$cove" serve --pool-reserve=-1GiB --connection-file "$dir.bad.conn" --allow-run-as-root 2>&1); rc=$?
[ $rc -eq 1 ] && echo "$out" | grep -q -- "--pool-reserve = '-1GiB' is not a size" || fail "a bad --pool-reserve was not refused by name: $out"
set -e

# As root, the server refuses to start without --allow-run-as-root.
if [ "$(id -u)" -eq 0 ]; then
  mkdir -p "$dir"
  set +e
  out=$("$COVE_BIN"/cove-server --connection-file "$dir/root.conn" 2>&1); rc=$?
  set -e
  [ $rc -ne 0 ] || fail "cove-server ran as root without --allow-run-as-root"
  echo "$out" | grep -q "allow-run-as-root" || fail "the refusal does not say how to override: $out"
  [ ! -e "$dir/root.conn" ] || fail "the refused server wrote a connection file"
  echo "ok: root refused: $out"
fi

"$here"/server.sh start "$dir" --log-level info
"$COVE_TEST_BIN"/cove-test-fault seed
# By default the server listens on TCP (Cove's own), on loopback only: no
# other host can reach it, and no UCX runs.
grep -q 'tcp:127\.0\.0\.1:' "$dir/cove.conn" || { cat "$dir/cove.conn"; fail "the server's TCP address is not on loopback"; }
! grep -q 'ucx:' "$dir/cove.conn" || { cat "$dir/cove.conn"; fail "the default server runs UCX"; }

"$cove" ls | grep -q "^small  <f8  ndim 2" || fail "cove ls does not show the variable"
"$cove" stat | grep -q "bytes out" || fail "cove stat has no bytes-out column"
"$cove" ls --json > "$dir/ls.json"
"$cove" stat --json > "$dir/stat.json"
python3 - "$dir/ls.json" "$dir/stat.json" <<'PY'
import json, sys
ls = json.load(open(sys.argv[1]))
st = json.load(open(sys.argv[2]))
assert [v["name"] for v in ls] == ["small"], ls
v = ls[0]
assert v["dtype"] == "<f8" and v["ndim"] == 2 and v["shape"] == "[0:32, 0:32)", v
assert [x["version"] for x in v["versions"]] == [1], v["versions"]
assert sum(p["bytes"] for p in v["versions"][0]["pieces"]) == 32 * 32 * 8
s = st["servers"]
assert len(s) == 1, s
assert s[0]["variables"] == 1 and s[0]["versions"] == 1 and s[0]["pieces"] == 1, s[0]
assert s[0]["owned_bytes"] == 32 * 32 * 8 and s[0]["bytes_in"] == 32 * 32 * 8, s[0]
assert s[0]["clients"] >= 1 and s[0]["requests"] > 0 and s[0]["uptime_ms"] > 0, s[0]
print("ok: ls and stat JSON agree with what was put")
PY

# A name holding terminal escapes and bytes that are not UTF-8 is printed
# escaped, as text and as JSON.
"$COVE_TEST_BIN"/cove-test-fault hostile-name > /dev/null
"$cove" ls > "$dir/ls.out"
! grep -q $'\x1b' "$dir/ls.out" || fail "cove ls printed an escape character raw"
grep -qF 'evil\x1b]0;pwned\x07\x1b[2J\xff\\end  |u1' "$dir/ls.out" || { cat "$dir/ls.out"; fail "cove ls did not escape the name"; }
"$cove" ls --json > "$dir/ls.json"
! grep -q $'\x1b' "$dir/ls.json" || fail "cove ls --json printed an escape character raw"
python3 -c 'import json,sys; n=[v["name"] for v in json.load(open(sys.argv[1]))]; assert "evil\x1b]0;pwned\x07\x1b[2J\ufffd\\end" in n, n' "$dir/ls.json" \
  || fail "cove ls --json does not hold the escaped name"
echo "ok: names are escaped in listings"

"$cove" top --interval 0.2 --count 2 > "$dir/top.out"
[ "$(grep -c '^cove top: 1 server' "$dir/top.out")" -eq 2 ] || { cat "$dir/top.out"; fail "cove top did not draw 2 frames"; }
grep -q "memory / budget" "$dir/top.out" || fail "cove top has no memory column"
grep -Eq '^0 +8.0 KiB / unlimited' "$dir/top.out" || { cat "$dir/top.out"; fail "cove top does not show the 8 KiB held"; }
echo "ok: cove top"

# undefine removes a variable and what it held.
"$cove" undefine small | grep -q "undefined 'small': 1 pieces dropped" || fail "cove undefine did not drop the piece"
"$cove" stat --json | python3 -c 'import json,sys; s=json.load(sys.stdin)["servers"][0]; assert s["owned_bytes"] == 0 and s["pieces"] == 0, s'
set +e
out=$("$cove" undefine small 2>&1); rc=$?
set -e
[ $rc -eq 1 ] && echo "$out" | grep -q "NotFound: variable 'small' is not defined" || fail "a second undefine: $rc $out"
echo "ok: cove undefine"

# The server logged the client's connection at info level.
grep -q "connection from\|hello from" "$dir/server.log" || { cat "$dir/server.log"; fail "no connection in the log"; }
"$cove" stop | grep -q "server stopped"
for _ in $(seq 100); do kill -0 "$(cat "$dir/server.pid")" 2> /dev/null || break; sleep 0.05; done
grep -q "stopped after" "$dir/server.log" || { cat "$dir/server.log"; fail "no shutdown line in the log"; }
echo "ok: stopped, and the log says so"

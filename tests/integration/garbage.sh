#!/usr/bin/env bash
# Garbage on the listeners of a real cove-server (garbage.py says which
# shapes), after which the server must still serve a put and a get with
# every value checked, and have lost nothing stored before.
#   garbage.sh DIR cove|ucx|listen [SECONDS]
#     cove    the server's own listeners (Unix sockets, and its TCP port:
#             the default transport, tcp, is Cove's own), one round, or
#             SECONDS of rounds (make fuzz)
#     ucx     every TCP port of a server of transport ucx (UCX's
#             listeners): known to abort UCX 1.13 and 1.22
#             (docs/transport.md); not in make test
#     listen  where the server listens: every TCP listener on loopback by
#             default, even with UCX_NET_DEVICES=all in its environment; on
#             the named interface's address alone with --listen
#     descriptors  a server with 256 descriptors, and 12 processes holding
#             40 connections each: it runs out of descriptors, drops what it
#             cannot take (logged once a second, not in a loop), and serves
#             again once they are gone
# Every process started here is stopped by its PID.
set -euo pipefail
dir=$1 case=$2 seconds=${3:-0}
here=$(dirname "$0")
sec=$COVE_TEST_BIN/cove-test-security
export COVE_CONNECT=$dir/cove.conn
. "$here"/harness.sh
deadline_in $((seconds + 100))

# TCP listeners of process $1 ("IP:PORT" each).
tcp_listeners() { ss -ltnpH | awk -v p="pid=$1," 'index($0, p) {print $4}'; }

# Every TCP listener of the server started in $dir is on address $1.
only_on() {
  local pid all off
  pid=$(cat "$dir/server.pid")
  all=$(tcp_listeners "$pid")
  [ -n "$all" ] || { echo "FAIL: the server (pid $pid) has no TCP listener"; exit 1; }
  off=$(echo "$all" | grep -v "^$1:" || true)
  [ -z "$off" ] || { echo "FAIL: the server listens off $1:"; echo "$off"; exit 1; }
  echo "ok: every TCP listener of the server is on $1 ($(echo "$all" | tr '\n' ' '))"
}

case "$case" in
  listen)
    UCX_NET_DEVICES=all "$here"/server.sh start "$dir"
    only_on 127.0.0.1
    "$here"/server.sh stop "$dir"
    # An interface of this host other than loopback, if there is one.
    iface=$(ip -o -4 addr show | awk '$2 != "lo" {print $2; exit}')
    if [ -n "$iface" ]; then
      ip=$(ip -o -4 addr show dev "$iface" | awk '{print $4; exit}' | cut -d/ -f1)
      UCX_NET_DEVICES=lo "$here"/server.sh start "$dir" --listen "$iface"
      only_on "$ip"
      "$here"/server.sh stop "$dir"
    else
      echo "note: no interface but loopback here; --listen not tried"
    fi
    exit 0 ;;
  descriptors)
    (ulimit -n 256 && exec "$here"/server.sh start "$dir")
    server=$(cat "$dir/server.pid")
    bounded "a put before" "$sec" serves put before
    local_name=$(ss -lxpH | awk -v p="pid=$server," 'index($0, p) {print $5; exit}')
    holders=()
    for _ in $(seq 12); do
      python3 -c '
import socket, sys, time
held = []
for i in range(40):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect("\0" + sys.argv[1][1:])
        held.append(s)
    except OSError:
        pass
time.sleep(3)
' "$local_name" &
      holders+=("$!")
      started+=("$!")
    done
    for p in "${holders[@]}"; do wait "$p" || true; done
    kill -0 "$server" || { echo "FAIL: the server died"; tail -20 "$dir/server.log"; exit 1; }
    grep -q "out of descriptors\|connections from one process" "$dir/server.log" ||
      { echo "FAIL: no drop was logged"; tail -20 "$dir/server.log"; exit 1; }
    lines=$(grep -c "dropped a connection" "$dir/server.log" || true)
    echo "ok: 480 connections from 12 processes against 256 descriptors; $lines drops logged:"
    grep "dropped a connection" "$dir/server.log" | sed "s/.*dropped a connection from /  /" | sort | uniq -c | sort -rn | head -5
    [ "$lines" -le 60 ] || { echo "FAIL: $lines drop lines: logged in a loop"; exit 1; }
    bounded "a check after" "$sec" serves check before
    echo "the server is still running and serving"
    exit 0 ;;
  cove) transport=tcp ;;
  ucx) transport=ucx ;;
  *) echo "unknown case $case" >&2; exit 2 ;;
esac

"$here"/server.sh start "$dir" --transport "$transport"
server=$(cat "$dir/server.pid")
bounded "a put before the garbage" "$sec" serves put before
during="'$sec' serves put during > '$dir/during.log' 2>&1 && '$sec' serves check during >> '$dir/during.log' 2>&1"
start=$SECONDS
bounded "the garbage" python3 "$here"/garbage.py --pid "$server" --mode "$case" --seconds "$seconds" --during "$during" ||
  { cat "$dir/during.log" 2> /dev/null; tail -20 "$dir/server.log"; exit 1; }
took=$((SECONDS - start + 1))
bounded "a check after the garbage" "$sec" serves check before
COVE_TRANSPORT=$transport bounded "a check over $transport after the garbage" "$sec" serves check before
kill -0 "$server" || { echo "FAIL: the server died"; tail -20 "$dir/server.log"; exit 1; }
# Drops are logged at most once per second per peer address.
logged=$(grep -c "dropped a connection from" "$dir/server.log" || true)
worst=$(sed -n 's/^\[\([^.]*\)\.[0-9]*\].*dropped a connection from \(.*\): .*/\1 \2/p' "$dir/server.log" | sort | uniq -c | sort -rn | head -1)
echo "ok: $logged drops logged in about $took s; the most for one peer in one second: ${worst:-none}"
if [ -n "$worst" ] && [ "$(echo "$worst" | awk '{print $1}')" -gt 1 ]; then
  echo "FAIL: more than one drop logged in one second for one peer"; exit 1
fi
echo "the server is still running and serving"

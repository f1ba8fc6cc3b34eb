#!/usr/bin/env bash
# CTest fixture helper: start or stop a cove-server for the integration tests.
#   server.sh start DIR [cove-server options...]   starts it, waits for DIR/cove.conn
#     (COVE_TEST_SERVERS=N starts a group of N under mpiexec)
#   server.sh stop DIR                             cove stop, then waits for the PID; kills it if it lingers
# Only the PID recorded in DIR/server.pid is ever signalled.
set -euo pipefail
cmd=$1 dir=$2
shift 2
bin=$(dirname "$0")
case "$cmd" in
  start)
    mkdir -p "$dir" && rm -f "$dir/cove.conn" "$dir/server.pid" "$dir/server.log"
    launch=() as_root=()
    [ "$(id -u)" -eq 0 ] && as_root=(--allow-run-as-root)  # cove-server refuses root otherwise
    if [ "${COVE_TEST_SERVERS:-1}" -gt 1 ]; then
      # --enable-recovery: when one member dies, the others serve on.
      launch=(mpiexec --allow-run-as-root --oversubscribe --enable-recovery -n "$COVE_TEST_SERVERS")
    fi
    "${launch[@]}" "$COVE_BIN"/cove-server --connection-file "$dir/cove.conn" "${as_root[@]}" "$@" > "$dir/server.log" 2>&1 &
    echo $! > "$dir/server.pid"
    for _ in $(seq 200); do
      [ -f "$dir/cove.conn" ] && exit 0
      kill -0 "$(cat "$dir/server.pid")" 2>/dev/null || { cat "$dir/server.log"; exit 1; }
      sleep 0.05
    done
    echo "server did not write $dir/cove.conn"; cat "$dir/server.log"; exit 1 ;;
  stop)
    pid=$(cat "$dir/server.pid" 2>/dev/null || true)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ -f "$dir/cove.conn" ]; then
      "$COVE_BIN"/cove stop --connect "$dir/cove.conn" > /dev/null 2>&1 || true
    fi
    for _ in $(seq 100); do
      [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null && break
      sleep 0.05
    done
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; sleep 1; kill -KILL "$pid" 2>/dev/null || true; fi
    rm -rf "$dir" ;;
  *) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# Fault tests against a real cove-server process, its clients on the local
# transport (a closed Unix-domain socket tells the server at once that a peer
# died). Every process started here is stopped by its PID.
#   faults.sh DIR killed-writer|server-dies|late-client|sigterm|garbage
set -euo pipefail
dir=$1 case=$2
here=$(dirname "$0")
fault=$COVE_TEST_BIN/cove-test-fault
export COVE_CONNECT=$dir/cove.conn
. "$here"/harness.sh

case "$case" in
  killed-writer)
    "$here"/server.sh start "$dir"
    "$fault" seed
    "$fault" big-put > "$dir/writer.out" 2>&1 &
    writer=$!; started+=("$writer")
    wait_for "$dir/writer.out" putting
    sleep 0.1
    kill -KILL "$writer"
    wait "$writer" 2> /dev/null || true
    grep -q "put finished" "$dir/writer.out" && { echo "the put finished before the kill: test did not test"; exit 1; }
    sleep 0.5  # the server notices the dead writer
    "$fault" check-intact ;;
  server-dies)
    "$here"/server.sh start "$dir"
    "$fault" wait-on-death > "$dir/reader.out" 2>&1 &
    reader=$!; started+=("$reader")
    wait_for "$dir/reader.out" waiting
    sleep 0.3
    kill -KILL "$(cat "$dir/server.pid")"
    status=0
    wait "$reader" || status=$?
    cat "$dir/reader.out"
    exit $status ;;
  late-client)
    rm -rf "$dir" && mkdir -p "$dir"
    "$fault" late > "$dir/late.out" 2>&1 &
    client=$!; started+=("$client")
    sleep 1
    "$here"/server.sh start "$dir"
    status=0
    wait "$client" || status=$?
    cat "$dir/late.out"
    exit $status ;;
  sigterm)
    "$here"/server.sh start "$dir"
    "$fault" seed
    pid=$(cat "$dir/server.pid")
    kill -TERM "$pid"
    for _ in $(seq 100); do kill -0 "$pid" 2> /dev/null || break; sleep 0.05; done
    kill -0 "$pid" 2> /dev/null && { echo "the server did not stop on SIGTERM"; exit 1; }
    [ -e "$dir/cove.conn" ] && { echo "the server left its connection file behind"; exit 1; }
    grep -q "stopped" "$dir/server.log" || { cat "$dir/server.log"; exit 1; }
    echo "SIGTERM: server stopped and removed its connection file" ;;
  garbage)
    "$here"/server.sh start "$dir"
    "$fault" seed
    "$fault" garbage
    "$fault" check-intact ;;
  *) echo "unknown case $case" >&2; exit 2 ;;
esac

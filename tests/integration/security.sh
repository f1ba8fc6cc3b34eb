#!/usr/bin/env bash
# Hostile-input tests against a real cove-server process (roles in
# security.cpp). After each attack the server must still be running and
# serving. Every process started here is stopped by its PID.
#   security.sh DIR forge-keys|forge-ucx|server-ops|oversize|bad-hello|bad-connection-file|impersonate
set -euo pipefail
dir=$1 case=$2
here=$(dirname "$0")
sec=$COVE_TEST_BIN/cove-test-security
export COVE_CONNECT=$dir/cove.conn
. "$here"/harness.sh
# forge-ucx attacks UCX's own path: its server runs transport ucx; the
# others meet the default, tcp, on its network port.
transport=tcp
[ "$case" != forge-ucx ] || transport=ucx
"$here"/server.sh start "$dir" --transport "$transport"
server=$(cat "$dir/server.pid")

case "$case" in
  forge-keys)
    "$sec" hold-secret "$dir/secret" &
    started+=("$!")
    wait_for_file "$dir/secret"
    "$sec" forge-keys "$dir/secret" "$server"
    # Again where the kernel does not let the server copy: the writer's own table answers.
    COVE_CMA=0 "$sec" forge-keys "$dir/secret" "$server" ;;
  forge-ucx) "$sec" forge-ucx ;;
  server-ops) "$sec" server-ops ;;
  oversize) "$sec" oversize "$server" ;;
  bad-hello) "$sec" bad-hello ;;
  bad-connection-file) "$sec" bad-connection-file "$dir/bad.conn" ;;
  impersonate)
    "$sec" hold-local "$dir/writer" &
    started+=("$!")
    wait_for_file "$dir/writer"
    "$sec" impersonate "$dir/writer" ;;
  *) echo "unknown case $case" >&2; exit 2 ;;
esac
kill -0 "$server" || { echo "the server died"; cat "$dir/server.log"; exit 1; }
echo "the server is still running"

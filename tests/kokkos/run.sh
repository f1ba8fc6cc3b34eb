#!/usr/bin/env bash
# Kokkos staging tests against a real cove-server (harness.sh stops what
# this starts, by PID):
#   run.sh DIR exchange PROGRAM WRITER_ARGS... -- READER_ARGS...
#       the writer and the reader as separate processes, the reader started first
#   run.sh DIR cases CASE     one single-process case of cove-kokkos-cases
set -euo pipefail
dir=$1 mode=$2
shift 2
here=$(cd "$(dirname "$0")/../integration" && pwd)
export COVE_CONNECT=$dir/cove.conn
. "$here"/harness.sh
"$here"/server.sh start "$dir"
case "$mode" in
  exchange)
    program=$1
    shift
    writer=() reader=()
    while [ "$1" != "--" ]; do writer+=("$1"); shift; done
    shift
    reader=("$@")
    # The reader first: its get waits for the writer's version.
    start_bg "$dir/reader.log" "$COVE_TEST_BIN/$program" reader "${reader[@]}"
    reader_pid=$last
    "$COVE_TEST_BIN/$program" writer "${writer[@]}"
    status=0
    wait "$reader_pid" || status=$?
    cat "$dir/reader.log"
    exit "$status" ;;
  cases)
    "$COVE_TEST_BIN"/cove-kokkos-cases "$1" ;;
  *) echo "usage: $0 DIR exchange|cases ..." >&2; exit 2 ;;
esac

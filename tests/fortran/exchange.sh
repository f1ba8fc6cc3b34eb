#!/usr/bin/env bash
# Fortran and C programs exchanging arrays through a real cove-server, as
# separate processes; each checks every element it gets.
#   exchange.sh DIR fortran_to_c|c_to_fortran|reader_first|comm
set -euo pipefail
dir=$1 case=$2
here=$(dirname "$0")/../integration
export COVE_CONNECT=$dir/cove.conn
. "$here"/harness.sh
"$here"/server.sh start "$dir"
case "$case" in
  fortran_to_c)
    # The writer holds its put_local piece until the reader is done.
    start_bg "$dir/writer.out" "$COVE_TEST_BIN"/cove-test-fortran-writer "$dir/reader-done"
    writer=$last
    wait_for "$dir/writer.out" ready
    status=0
    "$COVE_TEST_BIN"/cove-test-c-reader || status=$?
    touch "$dir/reader-done"
    wait "$writer" || status=$?
    cat "$dir/writer.out"
    exit $status ;;
  c_to_fortran)
    "$COVE_TEST_BIN"/cove-test-c-writer
    "$COVE_TEST_BIN"/cove-test-fortran-reader ;;
  reader_first)
    # The reader asks before anything is defined; its get waits.
    start_bg "$dir/reader.out" "$COVE_TEST_BIN"/cove-test-fortran-first
    reader=$last
    sleep 0.5
    status=0
    "$COVE_TEST_BIN"/cove-test-c-late-writer || status=$?
    wait "$reader" || status=$?
    cat "$dir/reader.out"
    exit $status ;;
  comm)
    # Three ranks connect collectively through one read of the file.
    mpiexec --allow-run-as-root --oversubscribe -n 3 "$COVE_TEST_BIN"/cove-test-fortran-comm ;;
  *) echo "unknown case $case" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# CTest driver for the HDF5 VOL connector: a cove-server, then the
# unmodified HDF5 writer and reader (tests/h5vol/writer.c, reader.c) with
# the connector chosen by environment variables alone.
#   run.sh DIR CASE [ARGS...]
# Cases:
#   nm NW NR STEPS       NW writer ranks and NR reader ranks, concurrently, STEPS versions
#   staged NW NR         the writer finishes before the reader starts
#   readerfirst NW NR    the reader starts (and waits) before the writer
#   missing              opening a file nobody writes fails, naming it, after the timeout
#   policy POLICY ARGS   see below
# Environment: COVE_BIN (cove-server, cove), COVE_TEST_BIN (the test
# programs), COVE_H5VOL_DIR (the plugin's folder).
set -euo pipefail
dir=$1 case=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
server=$here/../integration/server.sh
mpi=(mpiexec --allow-run-as-root --oversubscribe)
export OMPI_MCA_rmaps_base_oversubscribe=1

cleanup() { "$server" stop "$dir/server" || true; }
trap cleanup EXIT
rm -rf "$dir" && mkdir -p "$dir"
"$server" start "$dir/server" ${SERVER_ARGS:-}
export COVE_CONNECT=$dir/server/cove.conn
export HDF5_PLUGIN_PATH=$COVE_H5VOL_DIR
export HDF5_VOL_CONNECTOR="cove config=$dir/cove.toml"
cat > "$dir/cove.toml" <<TOML
open_timeout_ms = ${OPEN_TIMEOUT_MS:-60000}
read_timeout_ms = 20000
${EXTRA_TOML:-}
TOML
cd "$dir"
file=data.h5

expect_steps() {  # expect_steps LOG "steps: ..."
  grep -qx "$2" "$1" || { echo "FAIL: $1 says '$(grep steps: "$1" || true)', want '$2'"; cat "$1"; exit 1; }
}

case "$case" in
  nm)
    nw=$1 nr=$2 steps=$3
    "${mpi[@]}" -n "$nr" "$COVE_TEST_BIN/cove-h5vol-reader" "$file" "$steps" > reader.log 2>&1 &
    rpid=$!
    "${mpi[@]}" -n "$nw" "$COVE_TEST_BIN/cove-h5vol-writer" "$file" "$steps" > writer.log 2>&1 || { cat writer.log; exit 1; }
    wait "$rpid" || { cat reader.log; exit 1; }
    cat writer.log reader.log
    expect_steps reader.log "steps: $(seq -s ' ' 1 "$steps")" ;;
  staged)
    "${mpi[@]}" -n "$1" "$COVE_TEST_BIN/cove-h5vol-writer" "$file" 1 > writer.log 2>&1 || { cat writer.log; exit 1; }
    "${mpi[@]}" -n "$2" "$COVE_TEST_BIN/cove-h5vol-reader" "$file" 1 > reader.log 2>&1 || { cat reader.log; exit 1; }
    cat writer.log reader.log
    expect_steps reader.log "steps: 1" ;;
  readerfirst)
    "${mpi[@]}" -n "$2" "$COVE_TEST_BIN/cove-h5vol-reader" "$file" 1 > reader.log 2>&1 &
    rpid=$!
    sleep 2
    kill -0 "$rpid" || { echo "FAIL: the reader ended before any writer ran"; cat reader.log; exit 1; }
    "${mpi[@]}" -n "$1" "$COVE_TEST_BIN/cove-h5vol-writer" "$file" 1 > writer.log 2>&1 || { cat writer.log; exit 1; }
    wait "$rpid" || { cat reader.log; exit 1; }
    cat writer.log reader.log
    expect_steps reader.log "steps: 1" ;;
  missing)
    "${mpi[@]}" -n 2 "$COVE_TEST_BIN/cove-h5vol-reader" nobody.h5 --missing > reader.log 2>&1 || { cat reader.log; exit 1; }
    cat reader.log
    grep -q 'no version of file "nobody.h5"' reader.log || { echo "FAIL: the error does not name the file"; exit 1; }
    # The server still serves: a writer and a reader afterwards.
    "${mpi[@]}" -n 1 "$COVE_TEST_BIN/cove-h5vol-writer" "$file" 1 > writer.log 2>&1 || { cat writer.log; exit 1; }
    "${mpi[@]}" -n 1 "$COVE_TEST_BIN/cove-h5vol-reader" "$file" 1 > reader2.log 2>&1 || { cat reader2.log; exit 1; }
    expect_steps reader2.log "steps: 1" ;;
  *) echo "unknown case $case" >&2; exit 2 ;;
esac
echo PASS

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
#   latest, every       the consumer's version policies (H5VOL_POLICY, H5VOL_EVERY set them)
#   fanout, fanin       one producer and two consumers; two producers and one consumer
#   file, both          modes file and both (H5VOL_MODE): h5dump reads back what plain HDF5 writes
#   embedded            one MPMD mpiexec job, the server embedded in the producer's rank 0
#   datasets            mode both with per-dataset rules (memory only, file only)
#   transfers           per-dataset transfers shallow, local and deep: a reader beside the
#                       writer, and one after it, get exact values or "retired" errors
#   series              transfers with a file per step and keep_files = 2: held versions of a
#                       removed file are retired, the writer garbles their buffers then
#   api                 calls of HDF5's API tests (api_calls.c: H5Lcreate_hard with H5L_SAME_LOC,
#                       H5Fmount, H5Ovisit, reference counts, attributes by index, invalid property
#                       lists) print what they print natively (memory mode: H5Fmount refused)
#   api_suite PROGRAM   HDF5's own API tests (h5_api_test, scripts/build-hdf5-api-tests.sh), every
#                       serial group: none fails, crashes or hangs
#   badconfig           a bad mode in the config fails H5Fcreate, naming it
#   h5py                h5py (COVE_PYTHON: a Python whose h5py uses the same HDF5) reads from memory
#   split               same-name creates on split communicators (split_writer.c): no hang, each
#                       rank reads back the version it wrote last
#   h5py_suite MIN MOD...  h5py's own test modules natively and in memory mode (tests/conformance/hdf5.sh):
#                       no crash or hang, and at least MIN of the native passes pass in memory
#   h5py_life CASE      tests/h5vol/h5py_file_life.py CASE: a file's life in one h5py process
#                       (anonymous, reopen, fill, errors, refexit, fork, external, vlen, access, objids, named, lossy, times, transform, closefail); must exit 0 and print "CASE: ok"
# Environment: COVE_BIN (cove-server, cove), COVE_TEST_BIN (the test
# programs), COVE_H5VOL_DIR (the plugin's folder), COVE_H5DUMP (h5dump of
# the HDF5 build the connector uses).
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
mode = "${H5VOL_MODE:-memory}"
policy = "${H5VOL_POLICY:-next}"
every = ${H5VOL_EVERY:-1}
TOML
cd "$dir"
file=data.h5

# Writes ref.h5 (step $1) with plain HDF5, no connector, and checks that
# h5dump (of that HDF5 build) prints data.h5 the same.
native_reference() {
  env -u HDF5_VOL_CONNECTOR -u HDF5_PLUGIN_PATH "${mpi[@]}" -n 2 "$COVE_TEST_BIN/cove-h5vol-writer" ref.h5 1 "$1" \
    > native.log 2>&1 || { cat native.log; exit 1; }
  env -u HDF5_VOL_CONNECTOR -u HDF5_PLUGIN_PATH "$COVE_H5DUMP" data.h5 | tail -n +2 > data.dump
  env -u HDF5_VOL_CONNECTOR -u HDF5_PLUGIN_PATH "$COVE_H5DUMP" ref.h5 | tail -n +2 > ref.dump
  [ "$(wc -l < data.dump)" -gt 100 ] || { echo "FAIL: h5dump printed little of data.h5"; cat data.dump; exit 1; }
  diff ref.dump data.dump > /dev/null || { echo "FAIL: h5dump differs:"; diff ref.dump data.dump | head -20; exit 1; }
  rm -f ./*.h5
}

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
  latest)  # 4 versions are there; the latest policy skips to the 4th
    "${mpi[@]}" -n 2 "$COVE_TEST_BIN/cove-h5vol-writer" "$file" 4 > writer.log 2>&1 || { cat writer.log; exit 1; }
    "${mpi[@]}" -n 3 "$COVE_TEST_BIN/cove-h5vol-reader" "$file" 1 > reader.log 2>&1 || { cat reader.log; exit 1; }
    expect_steps reader.log "steps: 4" ;;
  every)  # every 2nd of 6 versions, the reader started first
    "${mpi[@]}" -n 2 "$COVE_TEST_BIN/cove-h5vol-reader" "$file" 3 > reader.log 2>&1 &
    rpid=$!
    "${mpi[@]}" -n 3 "$COVE_TEST_BIN/cove-h5vol-writer" "$file" 6 > writer.log 2>&1 || { cat writer.log; exit 1; }
    wait "$rpid" || { cat reader.log; exit 1; }
    expect_steps reader.log "steps: 2 4 6" ;;
  fanout)  # one producer, two consumers, each gets every version
    "${mpi[@]}" -n 2 "$COVE_TEST_BIN/cove-h5vol-reader" "$file" 3 > reader1.log 2>&1 &
    r1=$!
    "${mpi[@]}" -n 3 "$COVE_TEST_BIN/cove-h5vol-reader" "$file" 3 > reader2.log 2>&1 &
    r2=$!
    "${mpi[@]}" -n 2 "$COVE_TEST_BIN/cove-h5vol-writer" "$file" 3 > writer.log 2>&1 || { cat writer.log; exit 1; }
    wait "$r1" || { cat reader1.log; exit 1; }
    wait "$r2" || { cat reader2.log; exit 1; }
    expect_steps reader1.log "steps: 1 2 3"
    expect_steps reader2.log "steps: 1 2 3" ;;
  fanin)  # two producers' files read by one consumer
    "${mpi[@]}" -n 3 "$COVE_TEST_BIN/cove-h5vol-reader" a.h5,b.h5 2 > reader.log 2>&1 &
    rpid=$!
    "${mpi[@]}" -n 2 "$COVE_TEST_BIN/cove-h5vol-writer" a.h5 2 > writer_a.log 2>&1 &
    wa=$!
    "${mpi[@]}" -n 1 "$COVE_TEST_BIN/cove-h5vol-writer" b.h5 2 > writer_b.log 2>&1 || { cat writer_b.log; exit 1; }
    wait "$wa" || { cat writer_a.log; exit 1; }
    wait "$rpid" || { cat reader.log; exit 1; }
    expect_steps reader.log "steps: 1 1 2 2" ;;
  file)  # mode file: a file equal to the one HDF5 writes without the connector, read back through it
    "${mpi[@]}" -n 2 "$COVE_TEST_BIN/cove-h5vol-writer" "$file" 1 > writer.log 2>&1 || { cat writer.log; exit 1; }
    "${mpi[@]}" -n 3 "$COVE_TEST_BIN/cove-h5vol-reader" "$file" 1 > reader.log 2>&1 || { cat reader.log; exit 1; }
    expect_steps reader.log "steps: 1"
    native_reference 1 ;;
  both)  # mode both: the consumer reads every version from memory, and the file is written too
    "${mpi[@]}" -n 3 "$COVE_TEST_BIN/cove-h5vol-reader" "$file" 2 > reader.log 2>&1 &
    rpid=$!
    "${mpi[@]}" -n 2 "$COVE_TEST_BIN/cove-h5vol-writer" "$file" 2 > writer.log 2>&1 || { cat writer.log; exit 1; }
    wait "$rpid" || { cat reader.log; exit 1; }
    expect_steps reader.log "steps: 1 2"
    native_reference 2 ;;
  h5py)  # h5py, built against the same HDF5, reads the producer's file from memory
    "${mpi[@]}" -n 2 "$COVE_TEST_BIN/cove-h5vol-writer" "$file" 1 > writer.log 2>&1 || { cat writer.log; exit 1; }
    "$COVE_PYTHON" "$here/h5py_reader.py" "$file" > reader.log 2>&1 || { cat reader.log; exit 1; }
    cat reader.log
    # h5py as the producer: str attributes are variable-length strings.
    "$COVE_PYTHON" "$here/h5py_strings.py" write py.h5 > pywriter.log 2>&1 || { cat pywriter.log; exit 1; }
    "$COVE_PYTHON" "$here/h5py_strings.py" read py.h5 > pyreader.log 2>&1 || { cat pyreader.log; exit 1; }
    cat pyreader.log ;;
  split)  # ranks {0,1} then {1,2} create the same name: they agree on versions without hanging
    timeout -k 5 90 "${mpi[@]}" -n 3 "$COVE_TEST_BIN/cove-h5vol-split-writer" split.h5 > split.log 2>&1 ||
      { echo "FAIL: exit status $? (124: hung)"; cat split.log; exit 1; }
    cat split.log
    [ "$(grep -c 'split: rank . ok' split.log)" -eq 3 ] || { echo "FAIL: not every rank finished"; exit 1; } ;;
  h5py_suite)  # the fast subset of make conformance's h5py part
    min=$1
    shift
    H5PY_OUT=$dir/out H5PY_MODULE_TIMEOUT=120 bash "$here/../conformance/hdf5.sh" "$COVE_BUILD" "$dir/rows" "$@" > suite.log 2>&1 ||
      { cat suite.log; exit 1; }
    cat "$dir/rows"
    passed=$(awk -F'\t' '$2 == "memory mode, passes of native'"'"'s" {print $3}' "$dir/rows")
    grep -q $'memory mode, crashes and hangs\t0\t' "$dir/rows" || { echo "FAIL: a module crashed or hung"; cat suite.log; exit 1; }
    [ "${passed:-0}" -ge "$min" ] || { echo "FAIL: $passed of native's passes in memory mode, fewer than $min"; exit 1; } ;;
  h5py_life)  # one h5py process creates, reopens, forks...: no hang (ctest's timeout), no crash at exit
    timeout -k 5 120 "$COVE_PYTHON" "$here/h5py_file_life.py" "$1" "$dir/life.h5" > life.log 2>&1 ||
      { echo "FAIL: exit status $?"; cat life.log; exit 1; }
    cat life.log
    grep -qx "$1: ok" life.log || { echo "FAIL: no '$1: ok'"; exit 1; }
    if grep -qiE "segmentation|core dumped|terminate called|Failed to extract" life.log; then exit 1; fi ;;
  embedded)  # one MPMD job, no cove-server: the producer's rank 0 serves
    "$server" stop "$dir/server"
    cat >> "$dir/cove.toml" <<TOML
[embedded]
path = "$dir/embedded.addr"
linger_ms = 30000
TOML
    "${mpi[@]}" -n 2 "$COVE_TEST_BIN/cove-h5vol-writer" "$file" 2 : -n 3 "$COVE_TEST_BIN/cove-h5vol-reader" "$file" 2 \
      > job.log 2>&1 || { cat job.log; exit 1; }
    cat job.log
    expect_steps job.log "steps: 1 2"
    [ ! -e "$dir/embedded.addr" ] || { echo "FAIL: the embedded server's address file was left behind"; exit 1; } ;;
  api_suite)  # HDF5's own API tests (scripts/build-hdf5-api-tests.sh), each serial group through the
              # connector: none may fail or crash (skips are those of the capabilities it reports)
    api_test=$1
    for g in file group dataset datatype attribute link object misc; do
      mkdir -p "api-$g"
      rc=0
      (cd "api-$g" && HDF5_API_TEST_PATH_PREFIX="$PWD/" timeout -k 10 120 "$api_test" "$g" > out.txt 2>&1) || rc=$?
      if [ "$rc" != 0 ] || grep -aq 'FAILED' "api-$g/out.txt"; then
        echo "FAIL: HDF5's API tests, group $g: exit $rc"; tr '\r' '\n' < "api-$g/out.txt" | grep -a -B3 -A12 'FAILED' | head -80
        exit 1
      fi
      echo "group $g: $(grep -a 'API tests passed' "api-$g/out.txt" | tail -n 1)"
    done ;;
  api)  # calls of HDF5's API tests (api_calls.c): mode file prints what native HDF5 prints, memory mode
        # too except that H5Fmount is refused
    env -u HDF5_VOL_CONNECTOR -u HDF5_PLUGIN_PATH "$COVE_TEST_BIN/cove-h5vol-api-calls" native.h5 native-child.h5 \
      > native.out 2> native.err || { cat native.out native.err; exit 1; }
    for want in "g/y: 7, g/z: 7" "both same_loc: -1" "mount: 0" "mnt/c: 11" "mnt/c after unmount: -1" \
                "attribute index 0 order 0: first a = 11, second's creation order 0" "rc x: 3, g: 1" "incr: 0, rc 4" \
                "visit g/y: type 1, rc 3" "co max_corder emptied: 0" "invalid gapl: -1" "invalid lapl delete: -1" \
                "attributes a2: 0, b2: 1, c: 1" "move into itself: 0" "g/self3/x... 7, rc g: 3" \
                "invalid lapl move: -1" "invalid lapl info: -1" "bad: 0, bad2: 0, bad3: 0, x: 1" \
                "set_extent contiguous: -1" "set_extent chunked: 0" \
                "corder co/q: valid 1, 1; x: valid 0, 0" "delete: 0" "open deleted: -1" \
                "open deleted read-write: -1" "accessible deleted: 0" "delete again: -1" \
                "recreated: w 6, v exists 0"; do
      grep -qx "$want" native.out || { echo "FAIL: native HDF5 did not print '$want'"; cat native.out; exit 1; }
    done
    "$COVE_TEST_BIN/cove-h5vol-api-calls" cove.h5 cove-child.h5 > cove.out 2> cove.err ||
      { echo "FAIL: exit $? through the connector"; cat cove.out cove.err; exit 1; }
    if [ "${H5VOL_MODE:-memory}" = file ]; then
      cp native.out want.out
    else
      grep -v '^mnt/c\|^unmount' native.out | sed 's/^mount: 0$/mount: -1/' > want.out
    fi
    diff want.out cove.out || { echo "FAIL: the connector's output differs (above)"; cat cove.err; exit 1; }
    cat cove.out
    rm -f native.h5 native-child.h5
    if [ "${H5VOL_MODE:-memory}" = file ]; then
      [ -f cove.h5 ] && [ -f cove-child.h5 ] || { echo "FAIL: mode file wrote no files"; exit 1; }
      rm -f cove.h5 cove-child.h5
    fi ;;
  badconfig)  # a bad value in the config: H5Fcreate fails with an error naming it, nothing crashes
    echo 'mode = "disk"' > "$dir/bad.toml"
    HDF5_VOL_CONNECTOR="cove config=$dir/bad.toml" "${mpi[@]}" -n 1 "$COVE_TEST_BIN/cove-h5vol-writer" "$file" 1 \
      > writer.log 2>&1 && { echo "FAIL: the writer ran with mode = disk"; exit 1; }
    grep -q 'mode "disk" is not memory, file or both' writer.log || { echo "FAIL: no error naming the bad mode"; cat writer.log; exit 1; }
    grep -q "H5Fcreate" writer.log || { echo "FAIL: the error does not name H5Fcreate"; cat writer.log; exit 1; }
    if grep -qiE "segmentation|core dumped|terminate called" writer.log; then cat writer.log; exit 1; fi
    printf '[[dataset]]\npattern = "/fields/*"\ntransfer = "lazy"\n' > "$dir/bad2.toml"
    HDF5_VOL_CONNECTOR="cove config=$dir/bad2.toml" "${mpi[@]}" -n 1 "$COVE_TEST_BIN/cove-h5vol-writer" "$file" 1 \
      > writer2.log 2>&1 && { echo "FAIL: the writer ran with transfer = lazy"; exit 1; }
    grep -q 'transfer "lazy" is not deep, local or shallow' writer2.log ||
      { echo "FAIL: no error naming the bad transfer"; cat writer2.log; exit 1; } ;;
  datasets)  # mode both with dataset rules: /fields/d3 only in memory, /names only in the file
    cat >> "$dir/cove.toml" <<TOML
[[dataset]]
pattern = "/fields/d3"
mode = "memory"
[[dataset]]
pattern = "/names"
mode = "file"
TOML
    H5VOL_NAMES_FILE_ONLY=1 "${mpi[@]}" -n 2 "$COVE_TEST_BIN/cove-h5vol-reader" "$file" 1 > reader.log 2>&1 &
    rpid=$!
    "${mpi[@]}" -n 2 "$COVE_TEST_BIN/cove-h5vol-writer" "$file" 1 > writer.log 2>&1 || { cat writer.log; exit 1; }
    wait "$rpid" || { cat reader.log; exit 1; }
    expect_steps reader.log "steps: 1"
    env -u HDF5_VOL_CONNECTOR -u HDF5_PLUGIN_PATH "$COVE_H5DUMP" -H data.h5 > data.dump
    grep -q 'DATASET "names"' data.dump || { echo "FAIL: /names is not in the file"; exit 1; }
    grep -q 'DATASET "d2"' data.dump || { echo "FAIL: /fields/d2 is not in the file"; exit 1; }
    if grep -q 'DATASET "d3"' data.dump; then echo "FAIL: /fields/d3 (memory only) is in the file"; exit 1; fi
    rm -f ./*.h5 ;;
  transfers)  # transfer per dataset: shallow (from the writer's buffers), local (a copy in the writer), deep
    cat >> "$dir/cove.toml" <<TOML
[[dataset]]
pattern = "/held"
transfer = "shallow"
[[dataset]]
pattern = "/converted"
transfer = "shallow"
[[dataset]]
pattern = "/copied"
transfer = "local"
TOML
    # A reader beside the writer: whatever it gets of a version is exact, or an error.
    "${mpi[@]}" -n 3 "$COVE_TEST_BIN/cove-h5vol-shallow-reader" live.h5 6 > live.log 2>&1 &
    rpid=$!
    H5VOL_TEST_PACE_MS=300 "${mpi[@]}" -n 2 "$COVE_TEST_BIN/cove-h5vol-shallow-writer" live.h5 6 "$dir/live.done" \
      > writer1.log 2>&1 &
    wpid=$!
    wait "$rpid" || { cat live.log writer1.log; exit 1; }
    touch "$dir/live.done"
    wait "$wpid" || { cat writer1.log; exit 1; }
    cat live.log
    [ "$(grep -c '^step ' live.log)" = 6 ] || { echo "FAIL: the live reader did not report 6 versions"; exit 1; }
    grep -qx 'step 6: held=ok converted=ok copied=ok deep=ok' live.log ||
      { echo "FAIL: the newest version was not served in full"; exit 1; }
    # A reader after the writer has written 4 versions (and still runs): 1 to 3 are retired.
    "${mpi[@]}" -n 2 "$COVE_TEST_BIN/cove-h5vol-shallow-writer" late.h5 4 "$dir/late.done" > writer2.log 2>&1 &
    wpid=$!
    for _ in $(seq 600); do grep -q 'wrote 4 versions' writer2.log && break; sleep 0.1; done
    "${mpi[@]}" -n 3 "$COVE_TEST_BIN/cove-h5vol-shallow-reader" late.h5 4 > late.log 2>&1 || { cat late.log; exit 1; }
    touch "$dir/late.done"
    wait "$wpid" || { cat writer2.log; exit 1; }
    grep '^step ' late.log
    for s in 1 2 3; do
      grep -qx "step $s: held=retired converted=retired copied=retired deep=ok" late.log ||
        { echo "FAIL: version $s of late.h5"; cat late.log; exit 1; }
    done
    grep -qx 'step 4: held=ok converted=ok copied=ok deep=ok' late.log || { echo "FAIL: version 4 of late.h5"; cat late.log; exit 1; }
    grep -q 'dataset /held of file "late.h5" version 1 was retired by its producer' late.log ||
      { echo "FAIL: no error naming the retired dataset and version"; cat late.log; exit 1; } ;;
  series)  # a file per step, keep_files = 2: the writer reuses a /held buffer once its file was removed
    cat >> "$dir/cove.toml" <<TOML
keep_files = 2
[[dataset]]
pattern = "/held"
transfer = "shallow"
[[dataset]]
pattern = "/converted"
transfer = "shallow"
[[dataset]]
pattern = "/copied"
transfer = "local"
TOML
    H5VOL_TEST_DEEP_MAY_GO=1 "${mpi[@]}" -n 2 "$COVE_TEST_BIN/cove-h5vol-shallow-reader" s%d.h5 6 > reader.log 2>&1 &
    rpid=$!
    H5VOL_TEST_BUFFERS=3 H5VOL_TEST_PACE_MS=300 "${mpi[@]}" -n 2 "$COVE_TEST_BIN/cove-h5vol-shallow-writer" s%d.h5 6 \
      "$dir/done" > writer.log 2>&1 &
    wpid=$!
    wait "$rpid" || { cat reader.log writer.log; exit 1; }
    # s1.h5 went by keep_files: its held datasets were retired (an error at once), /deep removed.
    sed 's/^read_timeout_ms = .*/read_timeout_ms = 1000/' "$dir/cove.toml" > "$dir/late.toml"
    HDF5_VOL_CONNECTOR="cove config=$dir/late.toml" H5VOL_TEST_DEEP_MAY_GO=1 "${mpi[@]}" -n 1 \
      "$COVE_TEST_BIN/cove-h5vol-shallow-reader" s%d.h5 1 > late.log 2>&1 || { cat late.log; exit 1; }
    touch "$dir/done"
    wait "$wpid" || { cat writer.log; exit 1; }
    grep '^step ' reader.log late.log
    grep -qx 'step 1: held=retired converted=retired copied=retired deep=retired' late.log ||
      { echo "FAIL: s1.h5 is still served after keep_files removed it"; cat late.log; exit 1; }
    grep -q 'dataset /held of file "s1.h5" version 1 was retired by its producer' late.log ||
      { echo "FAIL: no error naming the retired dataset"; cat late.log; exit 1; }
    [ "$(grep -c '^step ' reader.log)" = 6 ] || { echo "FAIL: the reader did not report 6 files"; cat reader.log; exit 1; }
    grep -qx 'step 6: held=ok converted=ok copied=ok deep=ok' reader.log ||
      { echo "FAIL: the newest file was not served in full"; cat reader.log; exit 1; } ;;
  *) echo "unknown case $case" >&2; exit 2 ;;
esac
# Memory mode: the data went through Cove, and no file was written.
if ls ./*.h5 > /dev/null 2>&1; then echo "FAIL: memory mode wrote $(ls ./*.h5)"; exit 1; fi
echo PASS

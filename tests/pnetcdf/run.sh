#!/usr/bin/env bash
# Unmodified PnetCDF programs (tests/pnetcdf/*.c, linked with -lpnetcdf
# only) coupled through a real cove-server by LD_PRELOAD=libcove-pnetcdf.so,
# as separate mpiexec jobs.
#   run.sh DIR CASE [ARGS]
#     exchange NW NR   writer on NW ranks, 2 versions, then reader on NR ranks; the
#                      coupled file never reaches the disk, the uncoupled one does
#     two_readers      one writer, two reader jobs at once on the same version
#     two_writers      two writer jobs (2 and 1 ranks) write one file each; one reader job reads both
#                      (both: the coupled files never reach the disk; `cove ls` shows
#                      their pieces on the server)
#     shallow          transfer = "shallow": the bytes stay in the writer (put_local),
#                      which stays up until the reader is done
#     both             `both` mode: the real file too (ncmpidiff against one written
#                      without Cove), and the pieces on the server (`cove ls`); the
#                      reader through Cove with the real file moved away, then the same
#                      reader on the real file without Cove
#     file             `file` mode: pass-through, the real file (ncmpidiff)
#     dtf              writer and reader that call dtf_init/dtf_transfer/dtf_finalize,
#                      linked against libcove-pnetcdf ahead of -lpnetcdf
#     types            every external type put from and got as every memory type (in range or
#                      NC_ERANGE), through Cove and on real files: the outputs must be identical
#     missing          a reader of a file nobody writes fails after the timeout, naming it
#     bad_config       a malformed config fails the first call, naming the key and line
#     edges            bad input (types, dimension sizes, coordinates that overflow, paths
#                      and names with ':'): PnetCDF's codes on real files and through Cove;
#                      a writer that exits before close, then one that writes half the file
#     wait_cancel      ncmpi_wait and ncmpi_cancel on an uncoupled file behave as without the
#                      preload (a cancelled put is not written, each wait's mode rules), the
#                      same output line for line; then on a coupled file
#     s3d              the Fortran S3D-IO-shaped writer (2x2x1 ranks) and readers (2x2x1, 2x1x1),
#                      I/O methods 0 (put/get_vara_all) and 1 (iput/iget + wait_all): on real
#                      files, then coupled; every reader line the same as on the real file
#     life             one process creates a file with fill values, closes it, reopens it
#                      read-only, NC_WRITE (changes it), read-only again: every value and
#                      return code the same through Cove as on a real file
#     layout           the layout queries (header size and extent, variable offsets, record
#                      size, put/get sizes, striping, inq_file_info's hints) of CDF-1, 2 and 5
#                      files through enddef, __enddef, redef and reopen, and the formats' size
#                      limits (NC_EVARSIZE at enddef and close): the same through Cove as on
#                      real files, line for line
# Needs COVE_BIN (cove-server), COVE_PNETCDF_LIB (the library), COVE_TEST_BIN (the programs).
set -euo pipefail
dir=$1 case=$2
shift 2
here=$(dirname "$0")/../integration
export COVE_CONNECT=$dir/cove.conn
. "$here"/harness.sh
"$here"/server.sh start "$dir"
data=$dir/data
mkdir -p "$data"
mpi=(mpiexec --allow-run-as-root --oversubscribe)
pre=(-x LD_PRELOAD="$COVE_PNETCDF_LIB" -x COVE_CONNECT -x COVE_PNETCDF_CONFIG)
w=$COVE_TEST_BIN/cove-test-pnetcdf-writer
r=$COVE_TEST_BIN/cove-test-pnetcdf-reader
export COVE_PNETCDF_CONFIG=$dir/cove-pnetcdf.toml

config() {  # config MODE
  cat > "$COVE_PNETCDF_CONFIG" << EOT
# written by tests/pnetcdf/run.sh
timeout = 20
transfer = "${TRANSFER:-deep}"
[[file]]
name = "coupled.nc"
mode = "$1"
EOT
}

check_plain() {  # the uncoupled file went to disk, unchanged
  ncmpidump "$data/plain.nc" | tr -d ' \n' | grep -q 'plain=0,7,14,21,28,35,42,49,56,63;' ||
    { echo "plain.nc is not what the writer wrote:"; ncmpidump "$data/plain.nc"; exit 1; }
}

not_on_disk() {  # not_on_disk FILE...: memory mode kept each coupled file off the disk
  for f in "$@"; do
    [ ! -e "$f" ] || { echo "memory mode wrote $f to disk"; exit 1; }
  done
}

# on_server DEEP|SHALLOW NAME...: `cove ls --json` lists pieces of a coupled
# file whose variables' names hold each NAME, and (DEEP) every one of them
# is held on the server, or (SHALLOW) none is (put_local: the writer's).
on_server() {
  local how=$1
  shift
  "$COVE_BIN"/cove ls --json > "$dir/ls.json"
  python3 -c '
import json, sys
how, listing, names = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3:]
ok = True
for name in names:
    pieces = [p for v in listing if name in v["name"] for ver in v["versions"] for p in ver["pieces"]]
    held = [p for p in pieces if p["on_server"]]
    print(f"{how}: {len(pieces)} pieces of {name}, {len(held)} on the server")
    ok = ok and bool(pieces) and len(held) == (len(pieces) if how == "deep" else 0)
sys.exit(0 if ok else 1)' "$how" "$dir/ls.json" "$@" || { echo "the data did not go through Cove as it should"; exit 1; }
}

reference() {  # the file the writer writes without Cove (in the same folder: its name is an attribute)
  "${mpi[@]}" -n "$1" "$w" 1 "$data" > /dev/null
  mv "$data/coupled.nc" "$dir/reference.nc"
}

# staged_same_as_real NAME GLOB FILE [LINE...]: test program NAME on real
# files, then with the files GLOB matches staged (FILE must stay off the
# disk); the outputs must be the same, and the real run must print each
# LINE (the library's answers the test stands on).
staged_same_as_real() {
  local name=$1 glob=$2 file=$3 line
  shift 3
  local t=$COVE_TEST_BIN/cove-test-pnetcdf-$name
  mkdir -p "$dir/real"
  "${mpi[@]}" -n 2 "$t" "$dir/real" > "$dir/real.out"
  printf 'timeout = 5\n[[file]]\nname = "%s"\n' "$glob" > "$COVE_PNETCDF_CONFIG"
  "${mpi[@]}" "${pre[@]}" -n 2 "$t" "$data" > "$dir/cove.out"
  not_on_disk "$data/$file"
  for line in "$@"; do grep -qxF -- "$line" "$dir/real.out" || { cat "$dir/real.out"; exit 1; }; done
  diff "$dir/real.out" "$dir/cove.out" && echo "$name: $(wc -l < "$dir/cove.out") lines identical"
}

case "$case" in
  exchange)
    config memory
    "${mpi[@]}" "${pre[@]}" -n "$1" "$w" 2 "$data"
    not_on_disk "$data/coupled.nc"
    check_plain
    "${mpi[@]}" "${pre[@]}" -n "$2" "$r" 2 1 "$data" ;;
  two_readers)
    config memory
    "${mpi[@]}" "${pre[@]}" -n 2 "$w" 1 "$data"
    not_on_disk "$data/coupled.nc"
    on_server deep "$data/coupled.nc"
    start_bg "$dir/r1.out" "${mpi[@]}" "${pre[@]}" -n 2 "$r" 1 1 "$data"
    r1=$last
    start_bg "$dir/r2.out" "${mpi[@]}" "${pre[@]}" -n 1 "$r" 1 1 "$data"
    r2=$last
    status=0
    wait "$r1" || status=1
    wait "$r2" || status=1
    cat "$dir/r1.out" "$dir/r2.out"
    not_on_disk "$data/coupled.nc"
    exit $status ;;
  two_writers)
    config memory
    sed -i 's/^name = .*/name = "*\/coupled.nc"/' "$COVE_PNETCDF_CONFIG"
    mkdir -p "$data/a" "$data/b"
    "${mpi[@]}" "${pre[@]}" -n 2 "$w" 1 "$data/a"
    "${mpi[@]}" "${pre[@]}" -n 1 "$w" 1 "$data/b"
    not_on_disk "$data/a/coupled.nc" "$data/b/coupled.nc"
    on_server deep "$data/a/coupled.nc" "$data/b/coupled.nc"
    "${mpi[@]}" "${pre[@]}" -n 3 "$r" 1 1 "$data/a" "$data/b"
    not_on_disk "$data/a/coupled.nc" "$data/b/coupled.nc" ;;
  shallow)
    TRANSFER=shallow config memory
    start_bg "$dir/writer.out" "${mpi[@]}" "${pre[@]}" -n 2 "$w" 2 "$data" "$dir/reader-done"
    writer=$last
    wait_for "$dir/writer.out" "waiting for"
    # The bytes are the writer's (put_local), not copies on the server.
    not_on_disk "$data/coupled.nc"
    on_server shallow "$data/coupled.nc"
    status=0
    "${mpi[@]}" "${pre[@]}" -n 3 "$r" 2 1 "$data" || status=$?
    touch "$dir/reader-done"
    wait "$writer" || status=$?
    cat "$dir/writer.out"
    exit $status ;;
  both)
    config both
    reference 3
    "${mpi[@]}" "${pre[@]}" -n 2 "$w" 1 "$data"
    check_plain
    ncmpidiff "$dir/reference.nc" "$data/coupled.nc"
    on_server deep "$data/coupled.nc"
    # The reader through Cove, with the real file out of its reach: what it
    # reads can only have come from Cove.
    mv "$data/coupled.nc" "$dir/real.nc"
    "${mpi[@]}" "${pre[@]}" -n 4 "$r" 1 1 "$data"
    not_on_disk "$data/coupled.nc"
    mv "$dir/real.nc" "$data/coupled.nc"
    # The real file holds the same: the reader passes on it without Cove.
    "${mpi[@]}" -n 2 "$r" 1 1 "$data" ;;
  file)
    config file
    reference 1
    "${mpi[@]}" "${pre[@]}" -n 2 "$w" 1 "$data"
    check_plain
    ncmpidiff "$dir/reference.nc" "$data/coupled.nc"
    ncmpidump -h "$data/coupled.nc" | grep -q 'time = UNLIMITED ; // (3 currently)'
    "${mpi[@]}" "${pre[@]}" -n 3 "$r" 1 1 "$data" ;;
  dtf)
    # dtf_init names the config and the component; the file is coupled for
    # these two components only.
    config memory
    printf 'writer = "wrt"\nreaders = ["rdr"]\n' >> "$COVE_PNETCDF_CONFIG"
    export DTF_CONFIG=$COVE_PNETCDF_CONFIG
    unset COVE_PNETCDF_CONFIG
    "${mpi[@]}" -x COVE_CONNECT -x DTF_CONFIG -n 2 "$COVE_TEST_BIN"/cove-test-pnetcdf-dtf-writer 1 "$data"
    not_on_disk "$data/coupled.nc"
    "${mpi[@]}" -x COVE_CONNECT -x DTF_CONFIG -n 3 "$COVE_TEST_BIN"/cove-test-pnetcdf-dtf-reader 1 1 "$data" ;;
  types)
    t=$COVE_TEST_BIN/cove-test-pnetcdf-types
    mkdir -p "$dir/real"
    "${mpi[@]}" -n 1 "$t" write "$dir/real" > "$dir/real.out"
    "${mpi[@]}" -n 1 "$t" read "$dir/real" >> "$dir/real.out"
    printf 'timeout = 20\n[[file]]\nname = "types*.nc"\n' > "$COVE_PNETCDF_CONFIG"
    "${mpi[@]}" "${pre[@]}" -n 1 "$t" write "$data" > "$dir/cove.out"
    [ ! -e "$data/types5.nc" ] || { echo "memory mode wrote types5.nc to disk"; exit 1; }
    "${mpi[@]}" "${pre[@]}" -n 1 "$t" read "$data" >> "$dir/cove.out"
    [ "$(grep -c ': -60' "$dir/real.out")" -gt 50 ] || { echo "too few NC_ERANGE cases"; exit 1; }
    diff "$dir/real.out" "$dir/cove.out" && echo "types: $(wc -l < "$dir/cove.out") lines identical" ;;
  missing)
    config memory
    sed -i 's/^timeout = .*/timeout = 1/' "$COVE_PNETCDF_CONFIG"
    if "${mpi[@]}" "${pre[@]}" -n 2 "$r" 1 1 "$data" > "$dir/out" 2>&1; then
      echo "the reader opened a file nobody wrote"; cat "$dir/out"; exit 1
    fi
    cat "$dir/out"
    grep -q "no writer published the coupled file $data/coupled.nc" "$dir/out"
    grep -q "Specified netCDF file does not exist" "$dir/out"  # ncmpi_strerror(NC_ENOENT), as the program printed it
    ;;
  bad_config)
    printf 'timeout = 5\nmode = "fast"\n' > "$COVE_PNETCDF_CONFIG"
    if "${mpi[@]}" "${pre[@]}" -n 1 "$w" 1 "$data" > "$dir/out" 2>&1; then
      echo "the writer ran with a malformed config"; cat "$dir/out"; exit 1
    fi
    cat "$dir/out"
    grep -q "cove-pnetcdf.toml: line 2: key 'mode': 'fast' is not one of memory, file, both" "$dir/out"
    printf '[[file]]\nname = "coupled.nc"\nwriters = "a"\n' > "$COVE_PNETCDF_CONFIG"
    if "${mpi[@]}" "${pre[@]}" -n 1 "$w" 1 "$data" > "$dir/out" 2>&1; then exit 1; fi
    grep -q "line 3: key 'file.writers': unknown key" "$dir/out" || { cat "$dir/out"; exit 1; }
    printf 'mode = "memory"\ntimeout = \n' > "$COVE_PNETCDF_CONFIG"
    if "${mpi[@]}" "${pre[@]}" -n 1 "$w" 1 "$data" > "$dir/out" 2>&1; then exit 1; fi
    grep -q "cove-pnetcdf.toml: line 2: " "$dir/out" || { cat "$dir/out"; exit 1; }
    printf 'mode = "memory"\n\ntimeout = nan\n' > "$COVE_PNETCDF_CONFIG"
    if "${mpi[@]}" "${pre[@]}" -n 1 "$w" 1 "$data" > "$dir/out" 2>&1; then exit 1; fi
    grep -q "line 3: key 'timeout': nan is not a number of seconds" "$dir/out" || { cat "$dir/out"; exit 1; }
    if COVE_PNETCDF_CONFIG=$dir/none.toml "${mpi[@]}" "${pre[@]}" -n 1 "$w" 1 "$data" > "$dir/out" 2>&1; then exit 1; fi
    grep -q "none.toml: File could not be opened" "$dir/out" || { cat "$dir/out"; exit 1; }
    # Without a config nothing is coupled: the same program writes real files.
    unset COVE_PNETCDF_CONFIG
    "${mpi[@]}" -x LD_PRELOAD="$COVE_PNETCDF_LIB" -n 2 "$w" 1 "$data"
    check_plain
    "${mpi[@]}" -n 2 "$r" 1 1 "$data" ;;
  edges)
    t=$COVE_TEST_BIN/cove-test-pnetcdf-edges
    mkdir -p "$dir/real"
    "${mpi[@]}" -n 1 "$t" real "$dir/real"
    printf 'timeout = 5\n[[file]]\nname = "edges*"\n' > "$COVE_PNETCDF_CONFIG"
    "${mpi[@]}" "${pre[@]}" -n 1 "$t" crash "$data"
    "${mpi[@]}" "${pre[@]}" -n 1 "$t" cove "$data"
    [ ! -e "$data/edges.nc" ] || { echo "memory mode wrote edges.nc to disk"; exit 1; } ;;
  wait_cancel)
    t=$COVE_TEST_BIN/cove-test-pnetcdf-wait_cancel
    mkdir -p "$dir/real"
    # PnetCDF's close warns on stdout of the requests it cancels; Cove on stderr.
    "${mpi[@]}" -n 2 "$t" file "$dir/real/wait.nc" | grep -v '^PnetCDF warning' > "$dir/native.out"
    printf 'timeout = 5\n[[file]]\nname = "coupled*.nc"\n' > "$COVE_PNETCDF_CONFIG"
    "${mpi[@]}" "${pre[@]}" -n 2 "$t" file "$data/wait.nc" | grep -v '^PnetCDF warning' > "$dir/preloaded.out"
    diff "$dir/native.out" "$dir/preloaded.out"
    ncmpidiff "$dir/real/wait.nc" "$data/wait.nc"
    "${mpi[@]}" "${pre[@]}" -n 2 "$t" coupled "$data/coupled-wait.nc" > "$dir/coupled.out"
    not_on_disk "$data/coupled-wait.nc"
    diff "$dir/native.out" "$dir/coupled.out"
    echo "wait_cancel: $(wc -l < "$dir/preloaded.out") lines identical native, preloaded and coupled" ;;
  s3d)
    t=$COVE_TEST_BIN/cove-test-pnetcdf-s3d
    grid=(8 8 4)
    mkdir -p "$dir/real"
    printf 'timeout = 20\n[[file]]\nname = "s3d_*.nc"\n' > "$COVE_PNETCDF_CONFIG"
    for m in 0 1; do
      "${mpi[@]}" -n 4 "$t" write "$m" "$dir/real/s3d_m$m.nc" 2 2 1 "${grid[@]}" > "$dir/real-w$m.out"
      "${mpi[@]}" -n 4 "$t" read "$m" "$dir/real/s3d_m$m.nc" 2 2 1 "${grid[@]}" > "$dir/real-r4-$m.out"
      "${mpi[@]}" -n 2 "$t" read "$m" "$dir/real/s3d_m$m.nc" 2 1 1 "${grid[@]}" > "$dir/real-r2-$m.out"
      "${mpi[@]}" "${pre[@]}" -n 4 "$t" write "$m" "$data/s3d_m$m.nc" 2 2 1 "${grid[@]}" > "$dir/cove-w$m.out"
      not_on_disk "$data/s3d_m$m.nc"
      "${mpi[@]}" "${pre[@]}" -n 4 "$t" read "$m" "$data/s3d_m$m.nc" 2 2 1 "${grid[@]}" > "$dir/cove-r4-$m.out"
      "${mpi[@]}" "${pre[@]}" -n 2 "$t" read "$m" "$data/s3d_m$m.nc" 2 1 1 "${grid[@]}" > "$dir/cove-r2-$m.out"
      for o in w$m r4-$m r2-$m; do diff "$dir/real-$o.out" "$dir/cove-$o.out"; done
      grep -q '^read mismatches 0$' "$dir/cove-r2-$m.out"
      echo "s3d method $m: writer 2x2x1 -> readers 2x2x1 and 2x1x1, the same as on real files"
    done ;;
  life) staged_same_as_real life 'life*.nc' life.nc 'a = 1 2 -2147483647 -2147483647 -2147483647 55' ;;
  # The real library's answers this test stands on: an aligned header, an enddef that fails.
  layout) staged_same_as_real layout 'layout*.nc' layout_cdf1.nc \
    'after enddef: rc 0 header 400 extent 512 recsize 28 striping 0 0' 'enddef: NC_EVARSIZE' ;;
  *) echo "unknown case $case" >&2; exit 2 ;;
esac

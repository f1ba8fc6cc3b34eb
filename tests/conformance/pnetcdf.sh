#!/usr/bin/env bash
# make conformance, PnetCDF suite (docs/pnetcdf.md, "Conformance"):
# PnetCDF 1.12.3's own programs of test/testcases (the .m4 ones included),
# test/nonblocking and examples/C, built unmodified from the Debian source
# package of the installed libpnetcdf-dev, run on 4 ranks
#   native       without Cove: the baseline;
#   no rule      preloaded with libcove-pnetcdf and a configuration that
#                matches none of their files: every native pass must pass,
#                its output files ncmpidiff-identical to the native ones;
#   staged       preloaded with every file they create or open coupled
#                through a cove-server (memory mode): >= 90% of the native passes;
#   error codes  null_args, error_precedence, collective_error and
#                noclobber staged: all pass.
# A program passes when it exits 0 within the time limit.
#
# The source is fetched with apt-get source into BUILD/conformance/pnetcdf,
# the mirror read from this machine's apt sources (a private sources list
# there; the system's apt configuration is not changed), once.
#   pnetcdf.sh BUILD ROWS    (called by scripts/conformance.sh)
set -uo pipefail
build=$(cd "${1:?usage: pnetcdf.sh BUILD ROWS}" && pwd)
rows=${2:?usage: pnetcdf.sh BUILD ROWS}
here=$(cd "$(dirname "$0")/../.." && pwd)
work=$build/conformance/pnetcdf
lib=$build/src/pnetcdf/libcove-pnetcdf.so
export COVE_BIN=$build/tools
nprocs=${PNETCDF_CONFORMANCE_NPROCS:-4}
limit_s=${PNETCDF_CONFORMANCE_TIMEOUT:-60}
log() { echo "pnetcdf: $*" >&2; }

[ -f "$lib" ] || { log "no $lib: build the cove_pnetcdf target first"; exit 1; }
[ -x "$COVE_BIN/cove-server" ] || { log "no $COVE_BIN/cove-server: build the cove_tool target first"; exit 1; }
version=$(dpkg-query -W -f '${Version}' libpnetcdf-dev 2>/dev/null | sed 's/-[^-]*$//')
[ -n "$version" ] || { log "libpnetcdf-dev is not installed"; exit 1; }

# --- the source ---------------------------------------------------------
src=$work/pnetcdf-$version
if [ ! -d "$src/test/testcases" ]; then
  log "fetching Debian's pnetcdf $version source package"
  bash "$here/scripts/fetch-debian-source.sh" bookworm "$work" "pnetcdf=$version-1" pnetcdf || exit 1
  tarball=$(ls "$work"/pnetcdf_"$version".orig.tar.* 2> /dev/null | head -n1)
  [ -n "$tarball" ] || { log "the source package is not pnetcdf $version: $(ls "$work")"; exit 1; }
  tar -xf "$tarball" -C "$work" || exit 1
fi

# --- the programs -------------------------------------------------------
bin=$work/bin
mkdir -p "$bin"
programs=()  # dir/name
shopt -s nullglob
for d in test/testcases test/nonblocking examples/C; do
  for s in "$src/$d"/*.c "$src/$d"/*.m4; do
    name=$(basename "${s%.*}")
    programs+=("$d/$name")
  done
done
# A program's key: its folder's last part and its name (nonblocking/req_all
# and C/req_all are two programs).
key() { local d=${1%/*}; echo "${d##*/}/${1##*/}"; }
build_one() {  # build_one DIR/NAME: BIN/KEY from its .c or .m4
  local d=${1%/*} name=${1##*/} k c
  k=$(key "$1")
  mkdir -p "$bin/${k%/*}"
  [ -x "$bin/$k" ] && return 0
  c=$src/$d/$name.c
  if [ -f "$src/$d/$name.m4" ]; then
    c=$bin/$k.c
    m4 -I "$src/m4" -DPNETCDF -DERANGE_FILL "$src/$d/$name.m4" > "$c" || return 1
  fi
  # PnetCDF's own build gives its tests the short type names (schar, ...)
  # of its nctypes.h.
  mpicc -O1 -w -DHAVE_DECL_MPI_OFFSET -DHAVE_SYS_TYPES_H -DHAVE_PTRDIFF_T -include "$src/src/include/nctypes.h" -I "$src/test/common" -I "$src/$d" -o "$bin/$k" "$c" \
    "$src/test/common/testutils.c" -lpnetcdf -lm -lpthread > "$bin/$k.build.log" 2>&1
}
log "building ${#programs[@]} programs into $bin"
for p in "${programs[@]}"; do build_one "$p" || log "$(key "$p") does not build (see $bin/$(key "$p").build.log)"; done

# --- the runs -----------------------------------------------------------
mpi=(mpiexec --allow-run-as-root --oversubscribe -n "$nprocs")
runs=$work/runs
rm -rf "$runs"
mkdir -p "$runs"

# run_one RUN DIR/NAME OUT [PRELOAD...]: exit status of one program, its
# output in RUN/KEY.log, its files in OUT/FOLDER
run_one() {
  local run=$1 p=$2 name=${2##*/} k
  k=$(key "$p")
  local out=$3/${k%/*}
  shift 3
  mkdir -p "$out" "$runs/$run/${k%/*}"
  local args=("$out/$name.nc")
  case "$p" in
    examples/C/get_vara) args=(-q "$out/put_vara.nc") ;;
    examples/C/*) args=(-q "$out/$name.nc") ;;
    test/testcases/tst_version) args=() ;;
  esac
  [ -x "$bin/$k" ] || return 127
  (cd "$out" && timeout "$limit_s" "${mpi[@]}" "$@" "$bin/$k" "${args[@]}") > "$runs/$run/$k.log" 2>&1
}

# get_vara reads what put_vara wrote: put_vara first.
ordered=()
for p in "${programs[@]}"; do [ "${p##*/}" = get_vara ] || ordered+=("$p"); done
for p in "${programs[@]}"; do [ "${p##*/}" = get_vara ] && ordered+=("$p"); done

declare -A native
run_native() {
  mkdir -p "$runs/native/files"
  local n=0
  for p in "${ordered[@]}"; do
    if run_one native "$p" "$runs/native/files"; then
      native[$p]=1
      n=$((n + 1))
    else
      log "native: $(key "$p") fails (see $runs/native/$(key "$p").log); left out of the other runs"
    fi
  done
  log "native: $n of ${#ordered[@]} pass"
  printf 'pnetcdf\tnative, %d ranks\t%d\t%d\t-\tbaseline\n' "$nprocs" "$n" "${#ordered[@]}" >> "$rows"
}

# Preloaded, no rule matches: each native pass passes and writes the same files.
run_norule() {
  local out=$runs/norule/files n=0 of=0
  mkdir -p "$out"
  printf '[[file]]\nname = "no-such-file-is-ever-written.nc"\nmode = "memory"\n' > "$runs/norule/cove-pnetcdf.toml"
  export COVE_PNETCDF_CONFIG=$runs/norule/cove-pnetcdf.toml
  for p in "${ordered[@]}"; do
    [ -n "${native[$p]:-}" ] || continue
    of=$((of + 1))
    local name=${p##*/} ok=1 k
    k=$(key "$p")
    run_one norule "$p" "$out" -x LD_PRELOAD="$lib" -x COVE_PNETCDF_CONFIG || ok=0
    if [ $ok = 1 ]; then
      for f in "$runs/native/files/$k".nc*; do
        [ -f "$f" ] || continue
        case "$name" in tst_pthread|pthread) continue ;; esac  # thread-numbered files: its exit status checks them
        # Byte-identical, or else the same to ncmpidiff (which cannot
        # allocate last_large_var's declared 2 GiB variable: cmp settles it).
        local g=$out/$k${f#"$runs/native/files/$k"}
        cmp -s "$f" "$g" || ncmpidiff -q "$f" "$g" >> "$runs/norule/$k.log" 2>&1 ||
          { ok=0; echo "ncmpidiff: $(basename "$f") differs" >> "$runs/norule/$k.log"; }
      done
    fi
    if [ $ok = 1 ]; then n=$((n + 1)); else log "no rule: $k fails (see $runs/norule/$k.log)"; fi
  done
  unset COVE_PNETCDF_CONFIG
  log "no rule: $n of $of native passes pass"
  local verdict="not met"
  [ "$n" -eq "$of" ] && verdict=met
  printf 'pnetcdf\tpreloaded, no rule matching their files\t%d\t%d\t100%% of native, ncmpidiff\t%s\n' "$n" "$of" \
    "$verdict" >> "$rows"
}

# Staged: every file coupled through one cove-server.
staged_pass=()
run_staged() {  # run_staged RUN PROGRAM...: sets staged_pass
  local run=$1 dir=$runs/$1
  shift
  mkdir -p "$dir/files"
  printf 'timeout = 5\n[[file]]\nname = "*"\nmode = "memory"\n' > "$dir/cove-pnetcdf.toml"
  export COVE_PNETCDF_CONFIG=$dir/cove-pnetcdf.toml COVE_CONNECT=$dir/server/cove.conn
  "$here"/tests/integration/server.sh start "$dir/server" > /dev/null || { log "$run: the cove-server did not start"; return 1; }
  staged_pass=()
  for p in "$@"; do
    if run_one "$run" "$p" "$dir/files" -x LD_PRELOAD="$lib" -x COVE_PNETCDF_CONFIG -x COVE_CONNECT; then
      staged_pass+=("$p")
    else
      log "$run: $(key "$p") fails (see $dir/$(key "$p").log)"
    fi
  done
  "$here"/tests/integration/server.sh stop "$dir/server" > /dev/null 2>&1
  unset COVE_PNETCDF_CONFIG COVE_CONNECT
}

run_native
run_norule
passes=()
for p in "${ordered[@]}"; do [ -n "${native[$p]:-}" ] && passes+=("$p"); done
run_staged staged "${passes[@]}"
n=${#staged_pass[@]} of=${#passes[@]}
log "staged: $n of $of native passes pass"
verdict="not met"
[ $((n * 10)) -ge $((of * 9)) ] && verdict=met
printf 'pnetcdf\tpreloaded, their files staged in memory\t%d\t%d\t>= 90%% of native\t%s\n' "$n" "$of" "$verdict" >> "$rows"

errs=(test/testcases/null_args test/testcases/error_precedence test/testcases/collective_error test/testcases/noclobber)
run_staged errors "${errs[@]}"
n=${#staged_pass[@]}
verdict="not met"
[ "$n" -eq 4 ] && verdict=met
printf 'pnetcdf\tthe four error-code programs, staged\t%d\t4\tall pass\t%s\n' "$n" "$verdict" >> "$rows"
exit 0

#!/usr/bin/env bash
# make conformance, HDF5 API part (docs/hdf5.md "Conformance"): HDF5's own API
# tests (test/API and testpar/API of the HDF5 source scripts/setup-hdf5.sh
# builds), natively (native connector on files) and through the Cove VOL
# connector in mode `file` (pass-through) and in memory mode against a
# cove-server. Serial: h5_api_test, one process per test group; parallel:
# h5_api_test_parallel on 4 ranks, one run per group.
#   hdf5_api.sh BUILD ROWS [GROUP...]
# Appends rows "suite run passed of target verdict" to ROWS (see
# scripts/conformance.sh). Outputs go to BUILD/conformance/hdf5_api/.
#
# The test programs are built once into BUILD/hdf5-api
# (scripts/build-hdf5-api-tests.sh: scripts/setup-hdf5.sh builds them beside
# HDF5; otherwise from the same Debian source package, fetched).
# Environment: H5API_TIMEOUT (seconds per group and run, default 300).
set -uo pipefail
build=$(cd "${1:?usage: hdf5_api.sh BUILD ROWS [GROUP...]}" && pwd)
rows=${2:?usage: hdf5_api.sh BUILD ROWS [GROUP...]}
shift 2
here=$(cd "$(dirname "$0")/../.." && pwd)
plugin=$build/h5vol-plugin
out=$build/conformance/hdf5_api
api=$build/hdf5-api
groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=(file group dataset datatype attribute link object misc)
limit=${H5API_TIMEOUT:-300}
ranks=4

[ -x "$build/hdf5/bin/h5dump" ] || { echo "hdf5_api.sh: no $build/hdf5 (scripts/setup-hdf5.sh)" >&2; exit 1; }
[ -f "$plugin/libcove_h5vol.so" ] || { echo "hdf5_api.sh: no $plugin/libcove_h5vol.so (build cove_h5vol)" >&2; exit 1; }
[ -x "$build/tools/cove-server" ] || { echo "hdf5_api.sh: no $build/tools/cove-server" >&2; exit 1; }

# ---- the API test programs, built once (by scripts/setup-hdf5.sh, or here) ----
bash "$here/scripts/build-hdf5-api-tests.sh" "$build" || exit 1

rm -rf "$out" && mkdir -p "$out"
# run_group RUN KIND GROUP [VAR=VALUE...]: one group of one program (KIND serial or parallel) in a
# directory of its own (HDF5_API_TEST_PATH_PREFIX makes the file names of every run distinct, which
# the server's names need); the output and the exit status are kept.
run_group() {
  local run=$1 kind=$2 g=$3 dir rc
  shift 3
  dir=$out/$run/$kind/$g
  mkdir -p "$dir"
  local launch=("$api/h5_api_test")
  [ "$kind" = parallel ] && launch=(mpiexec --allow-run-as-root --oversubscribe -n "$ranks" -x HDF5_VOL_CONNECTOR
                                     -x HDF5_PLUGIN_PATH -x COVE_CONNECT -x HDF5_API_TEST_PATH_PREFIX
                                     "$api/h5_api_test_parallel")
  (cd "$dir" && env -u HDF5_VOL_CONNECTOR -u HDF5_PLUGIN_PATH HDF5_API_TEST_PATH_PREFIX="$dir/" "$@" \
     timeout -k 10 "$limit" "${launch[@]}" "$g" > "$dir/out.txt" 2>&1)
  rc=$?
  echo "$rc" > "$dir/rc"
  echo "hdf5_api.sh: $run $kind $g: exit $rc, $(grep -h 'API tests passed' "$dir/out.txt" | tail -n 1)" >&2
}
run_all() {
  local run=$1 g
  shift
  for g in "${groups[@]}"; do run_group "$run" serial "$g" "$@"; done
  for g in "${groups[@]}"; do run_group "$run" parallel "$g" "$@"; done
}

run_all native
cat > "$out/file.toml" <<TOML
mode = "file"
TOML
run_all file HDF5_PLUGIN_PATH="$plugin" HDF5_VOL_CONNECTOR="cove config=$out/file.toml"

. "$here/tests/conformance/memory_server.sh"
in_memory hdf5_api.sh run_all

# Counts per run and program: the outcome marks the driver prints (PASSED, *FAILED*, -SKIP-; rank 0
# prints them for the parallel program). HDF5's own closing summary counts the same marks, but it is
# missing when a group crashed or hung, and its totals do not add up (a skipped test is also run).
python3 - "$out" "$rows" "$ranks" "${groups[@]}" <<'PY'
import sys, re, os
out, rows, ranks, groups = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
def count(run, kind):
    tot = {"passed": 0, "failed": 0, "skipped": 0}
    bad = []
    for g in groups:
        d = f"{out}/{run}/{kind}/{g}"
        text = open(f"{d}/out.txt", errors="replace").read()
        rc = int(open(f"{d}/rc").read())
        if rc not in (0, 1):
            bad.append(f"{g} (exit {rc})")
        tot["passed"] += len(re.findall(r"\bPASSED\b", text))
        tot["failed"] += len(re.findall(r"\*FAILED\*", text))
        tot["skipped"] += len(re.findall(r"-SKIP-", text))
    return tot, bad
with open(rows, "a") as f:
    for kind, label in (("serial", "h5_api_test"), ("parallel", f"h5_api_test_parallel, {ranks} ranks")):
        nat, nbad = count("native", kind)
        n = nat["passed"]
        note = lambda t, b: f"{t['failed']} failed, {t['skipped']} skipped" + (f"; crashed or hung: {', '.join(b)}" if b else "")
        f.write(f"hdf5-api\tnative, {label}\t{n}\t{n + nat['failed'] + nat['skipped']}\t-\t{note(nat, nbad)}\n")
        for run, target, ok in (("file", "= native's passes", lambda p: p == n),
                                ("memory", ">= 90% of native", lambda p: p >= -(-90 * n // 100))):
            t, b = count(run, kind)
            verdict = "met" if ok(t["passed"]) and not b else "not met"
            f.write(f"hdf5-api\tmode {run}, {label}\t{t['passed']}\t{n}\t{target}\t{verdict} ({note(t, b)})\n")
print(f"hdf5_api.sh: outputs in {out}", file=sys.stderr)
PY

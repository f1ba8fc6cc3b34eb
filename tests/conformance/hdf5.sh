#!/usr/bin/env bash
# make conformance, HDF5 part (docs/hdf5.md "Conformance"): h5py's own test
# modules, one process per module, natively (no connector) and through the
# Cove VOL connector in memory mode against a cove-server; the memory run's
# passes are counted among the tests that pass natively.
#   hdf5.sh BUILD ROWS [MODULE...]
# Appends rows "suite run passed of target verdict" to ROWS (see
# scripts/conformance.sh). Per-test outcomes go to BUILD/conformance/hdf5/.
# Environment: H5PY_MODULE_TIMEOUT (seconds per module and run, default 600),
# H5PY_OUT (where the per-test outcomes go, default BUILD/conformance/hdf5).
set -uo pipefail
build=$(cd "${1:?usage: hdf5.sh BUILD ROWS [MODULE...]}" && pwd)
rows=${2:?usage: hdf5.sh BUILD ROWS [MODULE...]}
shift 2
here=$(cd "$(dirname "$0")/../.." && pwd)
py=$build/venv/bin/python
plugin=$build/h5vol-plugin
out=${H5PY_OUT:-$build/conformance/hdf5}
modules=("$@")
[ ${#modules[@]} -gt 0 ] || modules=(test_dataset test_dataset_getitem test_group test_attrs test_attrs_data
  test_attribute_create test_slicing test_selections test_dimension_scales test_datatype test_dtype test_base test_objects)
limit=${H5PY_MODULE_TIMEOUT:-600}

[ -x "$py" ] || { echo "hdf5.sh: no $py (scripts/setup-python.sh, scripts/setup-h5py.sh)" >&2; exit 1; }
[ -f "$plugin/libcove_h5vol.so" ] || { echo "hdf5.sh: no $plugin/libcove_h5vol.so (build cove_h5vol)" >&2; exit 1; }
[ -x "$build/tools/cove-server" ] || { echo "hdf5.sh: no $build/tools/cove-server" >&2; exit 1; }
tests=$("$py" -c 'import h5py.tests, os; print(os.path.dirname(h5py.tests.__file__))') ||
  { echo "hdf5.sh: no h5py in $py (scripts/setup-h5py.sh)" >&2; exit 1; }
rm -rf "$out" && mkdir -p "$out"

# run_modules NAME [VAR=VALUE...]: every module in its own pytest process (junit XML per
# module; a crash or a timeout is recorded as such).
run_modules() {
  local name=$1 m rc
  shift
  mkdir -p "$out/$name"
  for m in "${modules[@]}"; do
    (cd "$out/$name" && env -u HDF5_VOL_CONNECTOR -u HDF5_PLUGIN_PATH PYTHONDONTWRITEBYTECODE=1 "$@" timeout -k 10 "$limit" "$py" -m pytest -q -p no:cacheprovider \
      --junitxml="$out/$name/$m.xml" "$tests/$m.py" > "$out/$name/$m.log" 2>&1)
    rc=$?
    echo "$rc" > "$out/$name/$m.rc"
    echo "hdf5.sh: $name $m: exit $rc, $(tail -n 1 "$out/$name/$m.log")" >&2
  done
}

run_modules native

. "$here/tests/conformance/memory_server.sh"
in_memory hdf5.sh run_modules

# Counts from the junit files: passes natively, passes in memory among
# them, skips of each, modules that crashed or timed out.
"$py" - "$out" "$rows" "${modules[@]}" <<'PY'
import sys, os, xml.etree.ElementTree as ET
out, rows, modules = sys.argv[1], sys.argv[2], sys.argv[3:]
def outcomes(run):
    res, bad = {}, []
    for m in modules:
        rc = int(open(f"{out}/{run}/{m}.rc").read())
        if rc not in (0, 1):
            bad.append(f"{m} (exit {rc})")
        path = f"{out}/{run}/{m}.xml"
        if not os.path.exists(path):
            continue
        for case in ET.parse(path).iter("testcase"):
            key = f"{case.get('classname')}::{case.get('name')}"
            kids = {c.tag for c in case}
            res[key] = ("failed" if kids & {"failure", "error"} else "skipped" if "skipped" in kids else "passed")
    return res, bad
nat, nbad = outcomes("native")
mem, mbad = outcomes("memory")
npass = {k for k, v in nat.items() if v == "passed"}
mpass = {k for k in npass if mem.get(k) == "passed"}
nskip = sum(v == "skipped" for v in nat.values())
mskip = sum(v == "skipped" for v in mem.values())
with open(f"{out}/memory-failures.txt", "w") as f:
    for k in sorted(npass - mpass):
        f.write(f"{k}\t{mem.get(k, 'not run')}\n")
need = -(-97 * len(npass) // 100)
with open(rows, "a") as f:
    f.write(f"h5py\tnative ({len(modules)} modules)\t{len(npass)}\t{len(nat)}\t-\t{'; '.join(nbad) or 'ran'}\n")
    f.write(f"h5py\tmemory mode, passes of native's\t{len(mpass)}\t{len(npass)}\t>= 97% of native\t"
            f"{'met' if len(mpass) >= need else 'not met'}\n")
    f.write(f"h5py\tmemory mode, crashes and hangs\t{len(mbad)}\t{len(modules)}\t0\t"
            f"{'met' if not mbad else 'not met: ' + ', '.join(mbad)}\n")
    f.write(f"h5py\tmemory mode, skips\t{mskip}\t{nskip}\t= native's\t{'met' if mskip == nskip else 'not met'}\n")
print(f"hdf5.sh: h5py native {len(npass)} passed of {len(nat)}, memory {len(mpass)} of those; "
      f"failures listed in {out}/memory-failures.txt", file=sys.stderr)
PY

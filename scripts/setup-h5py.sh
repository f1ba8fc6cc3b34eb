#!/usr/bin/env bash
# h5py built from source against the parallel HDF5 1.14 in BUILD/hdf5
# (scripts/setup-hdf5.sh), in BUILD/venv (scripts/setup-python.sh), for the
# HDF5 VOL connector's Python test (docs/hdf5.md). PyPI's h5py wheels carry
# their own HDF5 and would never load the connector. A serial h5py build
# (no HDF5_MPI, so no mpi4py build) is enough: the Python reader is one process.
# Idempotent; prints nothing when h5py there already uses that HDF5.
#   setup-h5py.sh BUILD
set -euo pipefail
build=${1:?usage: setup-h5py.sh BUILD}
prefix="$(cd "$build" && pwd)/hdf5"
venv=$build/venv
[ -f "$prefix/.cove-stamp" ] || { echo "setup-h5py: no HDF5 1.14 in $prefix (run scripts/setup-hdf5.sh first)" >&2; exit 1; }
[ -x "$venv/bin/python" ] || { echo "setup-h5py: no $venv (run scripts/setup-python.sh first)" >&2; exit 1; }
want=$(awk '/^#define H5_VERSION /{gsub(/"/,"",$3); print $3}' "$prefix/include/H5pubconf.h")
have=$("$venv/bin/python" -c "import h5py; print(h5py.version.hdf5_version)" 2>/dev/null || true)
stamp=$venv/.cove-h5py-stamp
config="h5py 3.14.0 link-iterate-v2"
[ "$have" = "$want" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$config" ] && exit 0
echo "setup-h5py: building h5py from source against HDF5 $want in $prefix"
# h5py calls HDF5's 1.10 link iteration API (H5Literate1 and the like),
# which HDF5 refuses for every connector but the native one; these macros
# make the same calls use the version-2 functions, whose callbacks take an
# H5L_info2_t that begins as the H5L_info1_t h5py reads.
api="-DH5Literate_vers=2 -DH5Literate_by_name_vers=2 -DH5Lvisit_vers=2 -DH5Lvisit_by_name_vers=2"
CFLAGS="${CFLAGS:-} $api" HDF5_DIR="$prefix" CC=mpicc "$venv/bin/python" -m pip install -q --disable-pip-version-check \
  --no-binary h5py --no-cache-dir --force-reinstall --no-deps "h5py==3.14.0"
"$venv/bin/python" -c "import h5py; assert h5py.version.hdf5_version == '$want', h5py.version.hdf5_version"
echo "$config" > "$stamp"

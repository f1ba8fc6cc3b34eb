#!/usr/bin/env bash
# Builds HDF5's own API test programs (test/API and testpar/API of the HDF5
# source: h5_api_test, and h5_api_test_parallel on MPI) against BUILD/hdf5
# into BUILD/hdf5-api, for `make test` (tests/h5vol, case api_suite) and
# `make conformance` (tests/conformance/hdf5_api.sh).
#
# SRC: an unpacked HDF5 source tree of the same version (scripts/setup-hdf5.sh
# passes the one it just built); without it, the same Debian source package
# scripts/setup-hdf5.sh uses is fetched (scripts/fetch-debian-source.sh).
# The programs are compiled directly with mpicc (HDF5's CMake would build the
# whole library again).
#
# Runs once: BUILD/hdf5-api/.cove-stamp names the HDF5 version they were
# built for, and a second run for the same version does nothing.
# Usage: scripts/build-hdf5-api-tests.sh BUILD [SRC]
set -euo pipefail
build=$(cd "${1:?usage: build-hdf5-api-tests.sh BUILD [SRC]}" && pwd)
src=${2:-}
here=$(cd "$(dirname "$0")/.." && pwd)
api=$build/hdf5-api
[ -x "$build/hdf5/bin/h5dump" ] || { echo "build-hdf5-api-tests: no $build/hdf5 (scripts/setup-hdf5.sh)" >&2; exit 1; }
version=$("$build/hdf5/bin/h5dump" --version | awk '{print $NF}')
stamp="h5_api_test h5_api_test_parallel for HDF5 $version"
[ "$(cat "$api/.cove-stamp" 2>/dev/null)" = "$stamp" ] && exit 0

echo "build-hdf5-api-tests: building HDF5 $version's API tests into $api" >&2
rm -rf "$api" && mkdir -p "$api"
if [ -z "$src" ]; then
  release=$(sed -n 's/^release=//p' "$here/scripts/setup-hdf5.sh")
  bash "$here/scripts/fetch-debian-source.sh" "$release" "$api/src" hdf5 ||
    { echo "build-hdf5-api-tests: cannot fetch HDF5's source" >&2; exit 1; }
  tarball=$(ls "$api"/src/hdf5_"$version"[.+]*orig.tar.* 2>/dev/null | head -n1)
  [ -n "$tarball" ] || { echo "build-hdf5-api-tests: $release's hdf5 source is not $version: $(ls "$api/src")" >&2; exit 1; }
  tar -xf "$tarball" -C "$api/src" --wildcards '*/src/*' '*/test/*' '*/testpar/*' ||
    { echo "build-hdf5-api-tests: cannot unpack $tarball" >&2; exit 1; }
  src=$(find "$api/src" -mindepth 1 -maxdepth 1 -type d -name 'hdf5-*' | head -n1)
fi
s=$(cd "$src" && pwd)
# The CMake-configured headers: no async tests, no test driver; h5test.c's source directory.
sed -e 's|^#cmakedefine .*||' "$s/test/API/H5_api_test_config.h.in" > "$api/H5_api_test_config.h"
echo 'static const char *config_srcdir = ".";' > "$api/H5srcdir_str.h"
# -fcommon: testframe.c and the parallel driver both define the test counters.
cc=(mpicc -O1 -w -fcommon -DH5_TEST_EXPRESS_LEVEL_DEFAULT=3 -I"$api" -I"$s/src" -I"$build/hdf5/include" -I"$s/test"
    -I"$s/test/API" -I"$s/testpar" -I"$s/testpar/API")
ld=(-L"$build/hdf5/lib" -Wl,-rpath,"$build/hdf5/lib" -lhdf5)
common=("$s/test/API/H5_api_test_util.c" "$s/test/h5test.c" "$s/test/testframe.c")
serial=() parallel=()
for g in attribute dataset datatype file group link misc object; do
  serial+=("$s/test/API/H5_api_${g}_test.c")
  parallel+=("$s/testpar/API/H5_api_${g}_test_parallel.c")
done
"${cc[@]}" "${serial[@]}" "$s/test/API/H5_api_test.c" "${common[@]}" "${ld[@]}" -o "$api/h5_api_test" > "$api/build.log" 2>&1 &&
  "${cc[@]}" "${parallel[@]}" "$s/testpar/API/H5_api_test_parallel.c" "${common[@]}" "${ld[@]}" \
    -o "$api/h5_api_test_parallel" >> "$api/build.log" 2>&1 ||
  { tail -n 30 "$api/build.log" >&2; echo "build-hdf5-api-tests: cannot build the API tests" >&2; exit 1; }
rm -rf "$api/src"
echo "$stamp" > "$api/.cove-stamp"

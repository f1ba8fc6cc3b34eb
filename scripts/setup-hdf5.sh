#!/usr/bin/env bash
# Builds parallel HDF5 1.14 (C library, shared, with MPI, plus its tools such
# as h5dump) into BUILD/hdf5, for the Cove VOL connector (COVE_ENABLE_HDF5).
# Debian 12 ships HDF5 1.10, which has no VOL interface.
#
# The source is Debian's own source package from the next release (trixie):
# the mirror is read from this machine's apt sources, and the only entry
# added is a deb-src line for that release, in a private sources list under
# BUILD/ (the system's apt configuration is not changed). The upstream
# tarball of that package is configured directly: Debian's patches are for
# its Fortran, Java and flavour packaging, which this build does not use.
#
# Runs once: BUILD/hdf5/.cove-stamp records the configuration it built, and a
# second run with the same configuration does nothing and prints nothing.
# Usage: scripts/setup-hdf5.sh BUILD
set -euo pipefail

build=${1:?usage: setup-hdf5.sh BUILD}
release=trixie
config="hdf5-1.14 parallel shared tools hl v1"   # change it to rebuild
prefix="$(cd "$(dirname "$build")" && pwd)/$(basename "$build")/hdf5"
stamp="$prefix/.cove-stamp"

[ -f "$stamp" ] && [ "$(cat "$stamp")" = "$config" ] && exit 0

work="$build/hdf5-src"
rm -rf "$work"
echo "setup-hdf5: fetching Debian's hdf5 source package ($release) and building it into $prefix"
bash "$(dirname "$0")/fetch-debian-source.sh" "$release" "$work" hdf5 ||
  { echo "setup-hdf5: cannot fetch HDF5 1.14's source" >&2; exit 1; }
tarball=$(ls "$work"/hdf5_1.14.*.orig.tar.* 2>/dev/null | head -n1)
if [ -z "$tarball" ]; then
  echo "setup-hdf5: $release's hdf5 source package is not 1.14: $(ls "$work")" >&2
  exit 1
fi
tar -xf "$tarball" -C "$work"
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'hdf5-*' | head -n1)

jobs=$(nproc)
(
  cd "$src"
  CC=mpicc ./configure --prefix="$prefix" --enable-parallel --enable-shared --disable-static \
    --disable-fortran --disable-cxx --disable-java --enable-hl --enable-tools --disable-tests \
    --with-zlib --with-default-api-version=v114 --enable-build-mode=production \
    >"$PWD/../configure.log" 2>&1 || { tail -n 40 "$PWD/../configure.log" >&2; exit 1; }
  make -j "$jobs" >"$PWD/../make.log" 2>&1 || { tail -n 40 "$PWD/../make.log" >&2; exit 1; }
  make install >"$PWD/../install.log" 2>&1 || { tail -n 40 "$PWD/../install.log" >&2; exit 1; }
)
echo "$config" > "$stamp"
# HDF5's own API tests, from the same source: `make test` runs them through the connector.
bash "$(dirname "$0")/build-hdf5-api-tests.sh" "$build" "$src"
rm -rf "$work"
echo "setup-hdf5: HDF5 $("$prefix/bin/h5dump" --version | awk '{print $NF}') in $prefix"

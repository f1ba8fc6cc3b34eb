#!/usr/bin/env bash
# The Python build environment under the build folder: a virtual
# environment of Debian's python3 that sees Debian's numpy, mpi4py,
# matplotlib and pytest (installed by setup.sh), with nanobind and
# scikit-build-core from PyPI added. CMake finds nanobind through it
# (COVE_ENABLE_PYTHON), and `pip install .` in it builds the package.
# Idempotent; prints nothing when all is there.
#   setup-python.sh [BUILD_DIR]          (default: build)
set -euo pipefail
build=${1:-build}
venv=$build/venv
python=/usr/bin/python3   # Debian's, whose site-packages hold numpy and mpi4py

if [ ! -x "$venv/bin/python" ]; then
  mkdir -p "$build"
  "$python" -m venv --system-site-packages "$venv"
fi
if ! "$venv/bin/python" -c "import nanobind, scikit_build_core" 2> /dev/null; then
  echo "setup-python: pip install nanobind scikit-build-core into $venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "nanobind==2.9.2" "scikit-build-core==0.11.6"
fi

#!/usr/bin/env bash
# Builds and runs every device test and the GPU benchmark, and prints the
# benchmark's tables (docs/gpu.md). Run it on a machine with an NVIDIA GPU
# and the CUDA toolkit:
#
#   bench/gpu.sh [BENCH OPTIONS]
#       set up (scripts/setup.sh), build in build-gpu, run the device tests
#       (ctest -L gpu) and cove-gpu-bench
#   bench/gpu.sh --bundle DIR
#       on a machine without a GPU: copy the GPU test and bench programs of
#       build-gpu (built first), cove-server and the libraries they load into
#       DIR, for a GPU machine that cannot install packages
#   bench/gpu.sh --prebuilt DIR [BENCH OPTIONS]
#       on such a GPU machine: the same tests and benchmark from DIR
#
# BENCH OPTIONS go to cove-gpu-bench (--sizes 8,64,256,1024 --reps 5).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${COVE_GPU_BUILD:-$root/build-gpu}

build_it() {
  bash "$root/scripts/setup.sh"
  cmake -S "$root" -B "$build" -G Ninja --log-level=WARNING -DCMAKE_BUILD_TYPE=Release -DCOVE_ENABLE_CUDA=ON
  cmake --build "$build" -j "$(nproc)" --target cove_tool cove_cuda cove-gpu-check cove-gpu-bench _cove
}

run_all() {  # BIN_DIR CHECK_DIR BENCH [BENCH OPTIONS]
  local bin=$1 check=$2 bench=$3
  shift 3
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
  echo "== device tests"
  bash "$root/tests/gpu/run.sh" "$bin" "$check"
  echo "== benchmark"
  "$bench" --server "$bin/cove-server" "$@"
}

case "${1:-}" in
  --bundle)
    dir=$2
    build_it
    rm -rf "$dir" && mkdir -p "$dir/bin" "$dir/lib"
    cp "$build/tools/cove" "$build/tests/cove-gpu-check" "$build/bench/cove-gpu-bench" "$dir/bin/"
    ln -s cove "$dir/bin/cove-server"
    cp "$build/src/libcove-cuda.so" "$dir/lib/"
    # The package, for Python device arrays, and an interpreter of the
    # build's Python version with the standard modules the test imports:
    # the GPU machine's own Python may be another version.
    cp -r "$build/python" "$dir/python"
    py=$(readlink -f "$build/venv/bin/python")
    pyver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    mkdir -p "$dir/python-runtime/bin"
    cp "$py" "$dir/python-runtime/bin/python3"
    PYTHONPATH=$build/python "$py" -c 'import sys, array, ctypes, cove, encodings.utf_8, encodings.latin_1
print("\n".join(sorted({m.__file__ for m in list(sys.modules.values()) if getattr(m, "__file__", None)})))' |
      grep "^/usr/lib/python$pyver/" | while read -r f; do
        mkdir -p "$dir/python-runtime/lib/${f#/usr/lib/}" && rmdir "$dir/python-runtime/lib/${f#/usr/lib/}"
        cp "$f" "$dir/python-runtime/lib/${f#/usr/lib/}"
      done
    ldd "$dir"/python-runtime/lib/python"$pyver"/lib-dynload/*.so | awk '$3 ~ /^\// {print $3}' |
      grep -Ev '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*)\.so' | sort -u |
      while read -r lib; do cp -L "$lib" "$dir/lib/"; done
    # Every library they load but the C library's own and the CUDA driver.
    for f in "$dir"/bin/cove "$dir"/bin/cove-gpu-check "$dir"/bin/cove-gpu-bench "$dir"/python/cove/_cove*.so; do
      ldd "$f" | awk '$3 ~ /^\// {print $3}'
    done | sort -u | grep -Ev '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*|libcuda)\.so' |
      while read -r lib; do cp -L "$lib" "$dir/lib/"; done
    du -sh "$dir" ;;
  --prebuilt)
    dir=$(cd "$2" && pwd)
    shift 2
    export LD_LIBRARY_PATH=$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export COVE_CUDA_PLUGIN=$dir/lib/libcove-cuda.so
    export COVE_PYTHONPATH=$dir/python COVE_PYTHON=$dir/python-runtime/bin/python3
    run_all "$dir/bin" "$dir/bin" "$dir/bin/cove-gpu-bench" "$@" ;;
  *)
    build_it
    export COVE_PYTHONPATH=$build/python COVE_PYTHON=$build/venv/bin/python
    run_all "$build/tools" "$build/tests" "$build/bench/cove-gpu-bench" "$@" ;;
esac

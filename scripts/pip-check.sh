#!/usr/bin/env bash
# What a pip-only user gets (docs/python.md, "Installing"): a fresh virtual
# environment, `pip install .` into it, the console scripts `cove` and
# `cove-server` it installs, and two-process runs where the reader starts
# first:
#   1. a reader process, then a writer process whose cove.Server writes the
#      connection file the reader is waiting for;
#   2. a reader process, then `cove-server` (the console script), then a
#      writer process; `cove ls` and `cove stop` end it.
# Then `pip wheel .` (the same build, reused) must hold the program and both
# scripts. Prints the time of each part. Not in `make test`: the install
# builds the whole library (minutes). Needs the network for PyPI (numpy,
# scikit-build-core, nanobind), and scripts/setup.sh's compilers and headers.
#   pip-check.sh [BUILD_DIR]      (default: build; works in BUILD_DIR/pip-check)
# PIP_CHECK_JOBS: parallel compile jobs (default: all cores).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(mkdir -p "${1:-build}" && cd "${1:-build}" && pwd)
work=$build/pip-check
python=${PIP_CHECK_PYTHON:-python3}
export CMAKE_BUILD_PARALLEL_LEVEL=${PIP_CHECK_JOBS:-$(nproc)}

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2> /dev/null || true; done
  rm -f "$work"/*.conn
}
trap cleanup EXIT

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
fail() { echo "pip-check: FAILED: $*" >&2; exit 1; }

t_all=$(now)
rm -rf "$work/venv" "$work/dist" "$work"/*.log "$work"/*.conn
mkdir -p "$work"
echo "pip-check: fresh venv in $work/venv, pip install $root"
"$python" -m venv "$work/venv"
venv=$work/venv/bin
"$venv/python" -m pip install -q --disable-pip-version-check --upgrade pip > "$work/pip.log" 2>&1 || true
t=$(now)
# The build folder is kept between runs (only the venv is fresh), so a
# second run rebuilds what changed.
"$venv/python" -m pip install --disable-pip-version-check \
  --config-settings=build-dir="$work/wheel-build" "$root" >> "$work/pip.log" 2>&1 ||
  { tail -40 "$work/pip.log"; fail "pip install ."; }
echo "pip-check: pip install . took $(since "$t") s"

# The console scripts, from outside the source tree.
cd "$work"
[ -x "$venv/cove" ] && [ -x "$venv/cove-server" ] || fail "the console scripts cove and cove-server are not in $venv"
"$venv/cove-server" --help | head -1 | grep -q '^cove-server:' || fail "cove-server --help"
"$venv/cove" --help | head -1 | grep -q '^cove:' || fail "cove --help"
"$venv/python" -c 'import cove, sys; print("pip-check: cove", cove.__version__, "from", cove.__file__)'

cat > "$work/reader.py" << 'PY'
import sys, numpy as np, cove
conn, version = sys.argv[1], int(sys.argv[2])
with cove.connect(conn, timeout=120) as c:                  # waits for the connection file
    a = c.get("field", version, (0, 0), (64, 32), timeout=120)  # waits for the definition and the data
    assert np.array_equal(a, np.arange(64 * 32, dtype=np.float32).reshape(64, 32) * version), "wrong data"
    c.put_meta("read", version, b"done")
    print("reader: version", version, "sum", float(a.sum()), flush=True)
PY
cat > "$work/writer.py" << 'PY'
import sys, numpy as np, cove
conn, version, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
data = np.arange(64 * 32, dtype=np.float32).reshape(64, 32) * version
def write(c):
    c.define("field", np.float32, shape=(64, 32))
    c.put("field", version, (0, 0), data[:32])
    c.put("field", version, (32, 0), data[32:])
if mode == "server":      # this process serves: its connection file is what the reader waits for
    with cove.Server(transport="local", connection_file=conn) as s, cove.connect(s.address) as c:
        write(c)
        c.get_meta("read", version, timeout=120)   # serve until the reader says it has read
else:
    with cove.connect(conn, timeout=60) as c:
        write(c)
print("writer: version", version, "written", flush=True)
PY

# 1. The reader first, then a writer process that serves.
t=$(now)
"$venv/python" reader.py "$work/one.conn" 1 > reader1.log 2>&1 & reader=$!; pids+=("$reader")
sleep 1
"$venv/python" writer.py "$work/one.conn" 1 server > writer1.log 2>&1 & writer=$!; pids+=("$writer")
wait "$reader" || { cat reader1.log writer1.log; fail "run 1: the reader"; }
wait "$writer" || { cat reader1.log writer1.log; fail "run 1: the writer"; }
cat reader1.log writer1.log
[ ! -e "$work/one.conn" ] || fail "run 1: the writer's server left its connection file"
echo "pip-check: run 1 (reader first, cove.Server in the writer) took $(since "$t") s"

# 2. The reader first, then cove-server, then a writer process.
t=$(now)
root_flag=(); [ "$(id -u)" = 0 ] && root_flag=(--allow-run-as-root)
"$venv/python" reader.py "$work/two.conn" 2 > reader2.log 2>&1 & reader=$!; pids+=("$reader")
sleep 1
"$venv/cove-server" --transport local --connection-file "$work/two.conn" "${root_flag[@]}" > server2.log 2>&1 &
server=$!; pids+=("$server")
"$venv/python" writer.py "$work/two.conn" 2 client > writer2.log 2>&1 || { cat writer2.log server2.log; fail "run 2: the writer"; }
wait "$reader" || { cat reader2.log server2.log; fail "run 2: the reader"; }
cat reader2.log writer2.log
"$venv/cove" ls --connect "$work/two.conn" | grep -q field || fail "run 2: cove ls does not list field"
"$venv/cove" stop --connect "$work/two.conn" > /dev/null
wait "$server" || { cat server2.log; fail "run 2: cove-server did not stop cleanly"; }
echo "pip-check: run 2 (reader first, the cove-server script, a writer) took $(since "$t") s"

# The wheel: the same build, packed.
t=$(now)
"$venv/python" -m pip wheel --disable-pip-version-check --no-deps --no-build-isolation -q -w "$work/dist" \
  --config-settings=build-dir="$work/wheel-build" "$root" >> "$work/pip.log" 2>&1 ||
  "$venv/python" -m pip wheel --disable-pip-version-check --no-deps -q -w "$work/dist" \
    --config-settings=build-dir="$work/wheel-build" "$root" >> "$work/pip.log" 2>&1 || fail "pip wheel ."
"$venv/python" - "$work"/dist/cove-*.whl << 'PY' || fail "the wheel lacks the program or the scripts"
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
assert "cove/bin/cove" in names, names
entry = next(n for n in names if n.endswith("entry_points.txt"))
text = zipfile.ZipFile(sys.argv[1]).read(entry).decode()
assert "cove-server = cove._programs:cove_server" in text and "cove = cove._programs:cove" in text, text
print("pip-check: wheel", sys.argv[1].rsplit("/", 1)[-1], "holds cove/bin/cove and both scripts")
PY
echo "pip-check: pip wheel . took $(since "$t") s"
echo "pip-check: passed in $(since "$t_all") s"

# Sourced by the HDF5 suites (hdf5.sh, hdf5_api.sh), which set build, here,
# plugin and out. Runs a suite's runner in memory mode against a
# cove-server of its own (under $out/server), with the connector's
# configuration for it in $out/memory.toml; the runner takes the mode and
# then VAR=VALUE settings for the programs' environment.
#   in_memory SUITE RUNNER
in_memory() {
  local suite=$1 runner=$2
  local server=$here/tests/integration/server.sh
  COVE_BIN=$build/tools "$server" start "$out/server" || { echo "$suite: no cove-server" >&2; exit 1; }
  cat > "$out/memory.toml" <<TOML
open_timeout_ms = 3000
read_timeout_ms = 3000
mode = "memory"
TOML
  "$runner" memory COVE_CONNECT="$out/server/cove.conn" HDF5_PLUGIN_PATH="$plugin" \
    HDF5_VOL_CONNECTOR="cove config=$out/memory.toml"
  COVE_BIN=$build/tools "$server" stop "$out/server"
}

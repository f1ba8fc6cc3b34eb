#!/usr/bin/env bash
# Gets under churn (churn.cpp) against a cove-server that keeps one version
# of each variable; every byte of every successful get is checked.
#   churn.sh DIR staged|local SECONDS
set -euo pipefail
dir=$1 mode=$2 seconds=$3
here=$(dirname "$0")
export COVE_CONNECT=$dir/cove.conn
. "$here"/harness.sh
"$here"/server.sh start "$dir" --max-versions 1
"$COVE_TEST_BIN"/cove-test-churn "$mode" "$seconds"

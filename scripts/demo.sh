#!/usr/bin/env bash
# The main job on a fresh machine: set up, then build the example campaign with `ledger demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/ledger demo "${1:-/tmp/ledger-demo}"

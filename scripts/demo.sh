#!/usr/bin/env bash
# The main job on a fresh machine: set up, then build the example campaign with `ledger demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# A fresh folder each run unless one is given, so the command can be repeated as is.
exec .venv/bin/ledger demo "${1:-$(mktemp -d "${TMPDIR:-/tmp}/ledger-demo.XXXXXX")}"

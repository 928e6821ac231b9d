#!/usr/bin/env bash
# The whole test suite on a fresh machine: set up (venv, torch CPU, chromium), then pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
exec .venv/bin/python -m pytest -n 2 -q "$@"

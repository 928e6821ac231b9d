#!/usr/bin/env bash
# Set up a fresh machine: a virtual environment in .venv with ledger, its site extra, and
# with --test the collectors (torch CPU) and the test tools.
# Idempotent: a second run only checks. Usage: bash scripts/setup.sh [--test]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
  .venv/bin/pip install -q --upgrade pip
fi
stamp=.venv/.ledger-installed
want="$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -c1-16)${1:-}"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  if [ "${1:-}" = "--test" ]; then
    # torch 2.13.0 is the CPU build on disk here; an unpinned torch would pull a CUDA build of several GB.
    .venv/bin/pip install -q "torch==2.13.0"
    .venv/bin/pip install -q -e ".[site,collectors,test]"
  else
    # The core (`pip install ledger`) plus the site, which `ledger demo` builds.
    .venv/bin/pip install -q -e ".[site]"
  fi
  echo "$want" > "$stamp"
fi
if [ "${1:-}" = "--test" ] && ! command -v chromium >/dev/null 2>&1; then
  # Debian's chromium is the real browser of the site tests (Playwright drives it; no browser download).
  if [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) || echo "warning: chromium could not be installed; browser tests will be skipped" >&2
  else
    echo "warning: chromium is not installed (sudo apt-get install chromium); browser tests will be skipped" >&2
  fi
fi

#!/usr/bin/env bash
# The whole test suite on a fresh machine: set up (venv, torch CPU, chromium), then pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
# Tests commit to real git repositories: give them an identity when the machine has none.
if ! git config user.email >/dev/null 2>&1; then
  export GIT_AUTHOR_NAME="ledger tests" GIT_AUTHOR_EMAIL=tests@ledger.invalid
  export GIT_COMMITTER_NAME="ledger tests" GIT_COMMITTER_EMAIL=tests@ledger.invalid
fi
# Coverage of src/ledger, held at [tool.coverage.report] fail_under (pyproject.toml). Data a
# killed `ledger` process of an earlier run left behind would be combined into this run's.
rm -f .coverage .coverage.*
exec .venv/bin/python -m pytest -n 2 -q --cov --cov-report=term "$@"

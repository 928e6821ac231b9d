"""`python -m ledger`: the same command as `ledger` (git hooks fall back to it)."""

from .cli.main import entry

if __name__ == "__main__":
    entry()

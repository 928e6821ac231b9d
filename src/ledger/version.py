"""The version of ledger, stamped into every record."""

__version__ = "0.1.0"

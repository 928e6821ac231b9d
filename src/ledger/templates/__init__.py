"""Jinja2 templates and init templates shipped with ledger (package data)."""

"""Arithmetic on records: figures and their digits, metrics (throughput, MFU), the sandwich
verdict, comparisons of two sets of samples and the derived stopping point.

Pure functions over schema models and plain numbers: no I/O, no git, no printing.
"""

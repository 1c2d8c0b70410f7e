"""Benchmarks, run by hand (`python benchmarks/NAME.py`): each prints its figures and ratios."""

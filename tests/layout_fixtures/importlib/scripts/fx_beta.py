"""Imports fx_alpha, which loads this module."""
import fx_alpha  # noqa: F401

VALUE = 1

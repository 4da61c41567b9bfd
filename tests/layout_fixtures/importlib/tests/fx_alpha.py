"""Loads fx_beta by name at run time."""
import importlib


def run():
    return importlib.import_module("fx_beta").VALUE

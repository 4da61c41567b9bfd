import importlib

VALUE = importlib.import_module("fx_two").VALUE

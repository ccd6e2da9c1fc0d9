"""The generated ``ember.*`` operator functions live in this module's namespace (see _ops/public.py)."""

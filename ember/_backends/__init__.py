"""Backends: kernels only. Arrays in, arrays out; no Tensors, no autograd (a test enforces it)."""

"""Helpers for passes (torch.fx.passes.utils)."""

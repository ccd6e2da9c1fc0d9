"""Public functions that are not operators (they take Python values, or wrap several operators)."""
__all__ = []

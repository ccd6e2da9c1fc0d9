"""ember._dynamo.config: settings of capture (torch._dynamo.config's names).

``cache_size_limit``: how many compiled versions (one per distinct guard set: shapes, dtypes, grad mode,
training flags...) a function keeps before it warns and runs eagerly.
``suppress_errors``: when a backend fails to compile, run eagerly instead of raising.
"""
cache_size_limit = 8
recompile_limit = cache_size_limit
suppress_errors = False

"""ember._dynamo.config: settings of capture (torch._dynamo.config's names).

``cache_size_limit``: how many compiled versions (one per distinct guard set: shapes, dtypes, grad mode,
training flags...) a function keeps before it warns and runs eagerly.
``suppress_errors``: when a backend fails to compile, run eagerly instead of raising.
"""
cache_size_limit = 8
recompile_limit = cache_size_limit
suppress_errors = False

# calls that run eagerly before the first capture (ember's own setting, NOTE [capture and guards]). Python state a
# function creates lazily on its first call (an optimizer's momentum buffers) must be made by real code, not by the
# trace, which runs on fake tensors: when a trace stores a fake tensor in such state, ember restores the state,
# runs that call eagerly and captures on the next one, so 0 is safe for optimizers; raise it for other lazy state
warmup_calls = 0

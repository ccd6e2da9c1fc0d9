"""The determinism switches (torch.use_deterministic_algorithms, torch.utils.deterministic), kept here so that the
operator layer's factories can read them: with deterministic algorithms on and ``fill_uninitialized_memory`` set
(its default), ``empty``/``empty_like``/``empty_strided`` fill their memory as torch's do (NaN for floating and
complex dtypes, the largest value for integers, True for bool), so that reading it by mistake gives the same
result on every run."""
state = {'deterministic': False, 'warn_only': False, 'fill_uninitialized_memory': True}


def fills_uninitialized_memory():
    return state['deterministic'] and state['fill_uninitialized_memory']

"""Which operators vmap runs per sample (the slow fallback, with torch's performance warning): the declared
operators that take a tensor and that ember/_functorch/batching.py gives no batching rule.
``python bench/vmap_coverage.py`` prints the count and the names; tests/test_vmap_ops.py bounds the count."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def fallback_operators():
    import ember  # noqa: F401  (registers the operators and the batching kernels)
    from ember._ops.registry import BY_OP
    from ember._functorch.batching import rule_for
    from ember._core.dispatch_key import DispatchKey as K
    sparse = {K.SparseCPU, K.SparseCsrCPU}
    dense = {K.CPU, K.CUDA, K.PrivateUse1, K.CompositeExplicitAutograd}     # Meta: every declared meta function
    out = []
    for d in set(BY_OP.values()):
        if d.composite is not None:
            continue
        if not any(a.base_type in ('Tensor', 'Tensor[]') for a in d.op.schema.arguments):
            continue        # factories: nothing to batch (the random ones have kernels of their own)
        if sparse & d.op.kernels.keys() and not dense & d.op.kernels.keys():
            continue        # runs on sparse tensors only, which vmap does not batch (as torch's)
        if 'quantized' in d.tags:
            continue        # makes or takes quantized tensors, which vmap does not batch either (as torch's)
        if rule_for(d)[0] is None:
            out.append(d.op.schema.full_name)
    return sorted(out)


if __name__ == '__main__':
    names = fallback_operators()
    print(f'{len(names)} operators run per sample under vmap:')
    print(' '.join(names))

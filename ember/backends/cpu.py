"""torch.backends.cpu: which SIMD level the CPU kernels use; NumPy picks its own at run time."""


def get_cpu_capability():
    return 'DEFAULT'

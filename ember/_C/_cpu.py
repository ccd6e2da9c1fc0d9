"""torch._C._cpu: what the CPU offers. ``_get_cpu_capability()`` gives the instruction-set features (from the
flags Linux reports in /proc/cpuinfo; False each elsewhere) and cache and core counts; ``_init_amx()`` whether
the AMX tile unit can be used. ember's kernels are NumPy's, which picks its own vector code; these answer the
libraries that ask (torchao chooses its CPU kernels by them).

>>> caps = _get_cpu_capability()
>>> isinstance(caps['avx2'], bool), caps['num_logical_cores'] >= 1
(True, True)
"""
import functools
import os
import platform

__all__ = ['_get_cpu_capability', '_init_amx']

# torch's key -> the Linux cpuinfo flag
_FLAGS = {'sse': 'sse', 'sse2': 'sse2', 'sse3': 'pni', 'ssse3': 'ssse3', 'sse4_1': 'sse4_1', 'sse4_2': 'sse4_2',
          'sse4a': 'sse4a', 'avx': 'avx', 'avx2': 'avx2', 'fma3': 'fma', 'fma4': 'fma4', 'f16c': 'f16c',
          'avx512_f': 'avx512f', 'avx512_cd': 'avx512cd', 'avx512_dq': 'avx512dq', 'avx512_bw': 'avx512bw',
          'avx512_vl': 'avx512vl', 'avx512_ifma': 'avx512ifma', 'avx512_vbmi': 'avx512vbmi',
          'avx512_vbmi2': 'avx512_vbmi2', 'avx512_vnni': 'avx512_vnni', 'avx512_bitalg': 'avx512_bitalg',
          'avx512_vpopcntdq': 'avx512_vpopcntdq', 'avx512_bf16': 'avx512_bf16', 'avx512_fp16': 'avx512_fp16',
          'avx512_4vnniw': 'avx512_4vnniw', 'avx512_4fmaps': 'avx512_4fmaps',
          'avx512_vp2intersect': 'avx512_vp2intersect', 'avx_vnni': 'avx_vnni', 'avx_vnni_int8': 'avx_vnni_int8',
          'avx_vnni_int16': 'avx_vnni_int16', 'avx_ne_convert': 'avx_ne_convert', 'amx_bf16': 'amx_bf16',
          'amx_tile': 'amx_tile', 'amx_int8': 'amx_int8', 'amx_fp16': 'amx_fp16', 'avx10_1': 'avx10_1',
          'avx10_2': 'avx10_2', 'popcnt': 'popcnt', 'lzcnt': 'abm', 'bmi': 'bmi1', 'bmi2': 'bmi2', 'aes': 'aes',
          'sha': 'sha_ni', 'clflush': 'clflush', 'clflushopt': 'clflushopt', 'clwb': 'clwb'}


def _cpuinfo():
    try:
        with open('/proc/cpuinfo') as f:
            text = f.read()
    except OSError:
        return set(), '', 1
    fields = dict(line.split(':', 1) for line in text.splitlines() if ':' in line)
    fields = {k.strip(): v.strip() for k, v in fields.items()}
    sockets = len({line.split(':')[1] for line in text.splitlines() if line.startswith('physical id')}) or 1
    return set(fields.get('flags', '').split()), fields.get('model name', ''), sockets


def _cache_size(level):
    path = '/sys/devices/system/cpu/cpu0/cache'
    try:
        for index in sorted(os.listdir(path)):
            read = lambda name: open(os.path.join(path, index, name)).read().strip()  # noqa: E731
            if read('level') == str(level) and read('type') in ('Data', 'Unified'):
                size = read('size')
                return int(size[:-1]) * 1024 if size.endswith('K') else int(size)
    except (OSError, ValueError):
        pass
    return 0


@functools.cache
def _get_cpu_capability():
    """The CPU's features and sizes, torch's keys."""
    flags, name, sockets = _cpuinfo()
    caps = {key: flag in flags for key, flag in _FLAGS.items()}
    logical = os.cpu_count() or 1
    caps.update(architecture=platform.machine(), cpu_name=' '.join(name.split()[:2]) if name else '',
                num_sockets=sockets, num_logical_cores=logical,
                num_physical_cores=logical // (2 if 'ht' in flags and logical > 1 and sockets == 1 and
                                               _threads_per_core() == 2 else 1),
                l1d_cache_size=_cache_size(1), l2_cache_size=_cache_size(2))
    return caps


def _threads_per_core():
    try:
        with open('/sys/devices/system/cpu/cpu0/topology/thread_siblings_list') as f:
            return len(f.read().replace('-', ',').split(','))
    except OSError:
        return 1


def _init_amx():
    """Whether the AMX tile unit can be used (only where the CPU has it)."""
    return _get_cpu_capability()['amx_tile']

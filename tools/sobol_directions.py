"""Regenerate ember/data/sobol_directions.npz, the Joe-Kuo direction numbers behind torch.quasirandom.SobolEngine.

torch compiles the table into its C++ source (aten/src/ATen/native/SobolEngineOpsUtils.cpp: ``poly`` and
``initsobolstate``, the new-joe-kuo-6.21201 set, search criterion D(6), up to 21201 dimensions); SciPy ships the same
table as scipy/stats/_sobol_direction_numbers.npz. ember's runtime needs NumPy only, so this development-time script
copies SciPy's table into ember's package data, in the narrowest dtypes that hold it (a primitive polynomial of
degree <= 18 and its initial direction numbers fit 32 bits). tests/test_users_gaps.py checks the state it gives
against torch's for every dimension.

    python tools/sobol_directions.py      # needs scipy (a test extra)
"""
import os

import numpy as np
import scipy.stats

SRC = os.path.join(os.path.dirname(scipy.stats.__file__), '_sobol_direction_numbers.npz')
DST = os.path.join(os.path.dirname(__file__), '..', 'ember', 'data', 'sobol_directions.npz')


def main():
    table = np.load(SRC)
    poly, vinit = table['poly'], table['vinit']
    assert poly.shape == (21201,) and vinit.shape == (21201, 18)
    assert poly.max() < 2 ** 32 and vinit.max() < 2 ** 32 and vinit.min() >= 0
    np.savez_compressed(DST, poly=poly.astype(np.uint32), vinit=vinit.astype(np.uint32))
    print(f'wrote {os.path.normpath(DST)} ({os.path.getsize(DST)} bytes)')


if __name__ == '__main__':
    main()

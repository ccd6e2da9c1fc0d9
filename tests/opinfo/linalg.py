"""OpInfo records for matrix products and linear algebra."""
import numpy as np

from .core import op, S, Arg, FLOATS

INT_FLOATS = FLOATS + ('int64', 'int32')


def _matmul_samples(dt):
    for a, b in [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((2, 2, 3), (3,)),
                 ((3,), (2, 3, 4)), ((2, 2, 3), (3, 4)), ((2, 3), (2, 3, 4)), ((2, 1, 2, 3), (3, 3, 2)),
                 ((2, 2, 3), (2, 3, 2)), ((0, 3), (3, 2)), ((2, 0), (0, 3)), ((0,), (0,)), ((1, 2, 3), (3,))]:
        yield S(Arg(a), Arg(b))
    yield S(Arg((3, 4), noncontig=True), Arg((4, 2), noncontig=True))
    yield S(Arg((4, 5), noncontig=True), Arg((5,)))
    # errors: torch's message for each dimension case
    for a, b in [((2, 3), (4, 5)), ((3,), (4,)), ((2, 3), (4,)), ((3,), (4, 5)), ((2, 2, 3), (2, 4, 5)),
                 ((3, 2, 3), (2, 3, 5)), ((2, 3, 3), (4,)), ((4,), (2, 3, 3)), ((), (3,)), ((3,), ())]:
        yield S(Arg(a), Arg(b))


op('matmul', _matmul_samples, dtypes=INT_FLOATS, atol=1e-4, rtol=1e-5)
op('mm', lambda dt: [S(Arg((2, 3)), Arg((3, 4))), S(Arg((3, 4), noncontig=True), Arg((4, 2))), S(Arg((0, 3)), Arg((3, 2))),
                     S(Arg((2, 0)), Arg((0, 3))), S(Arg((2, 3)), Arg((4, 5))), S(Arg((2, 3, 3)), Arg((3, 3))),
                     S(Arg((2, 3)), Arg((3,)))], dtypes=INT_FLOATS, atol=1e-4, rtol=1e-5)
op('bmm', lambda dt: [S(Arg((2, 2, 3)), Arg((2, 3, 4))), S(Arg((0, 2, 3)), Arg((0, 3, 4))), S(Arg((2, 3, 3)), Arg((3, 3))),
                      S(Arg((2, 2, 3)), Arg((3, 3, 3))), S(Arg((2, 3, 4)), Arg((2, 3, 3)))],
   dtypes=INT_FLOATS, atol=1e-4, rtol=1e-5)
op('mv', lambda dt: [S(Arg((2, 3)), Arg((3,))), S(Arg((3, 4), noncontig=True), Arg((3,))), S(Arg((0, 3)), Arg((3,))),
                     S(Arg((2, 3)), Arg((4,))), S(Arg((2, 3)), Arg((4, 1))), S(Arg((2, 3, 1)), Arg((4,)))],
   dtypes=INT_FLOATS, atol=1e-4, rtol=1e-5)
op('dot', lambda dt: [S(Arg((3,)), Arg((3,))), S(Arg((0,)), Arg((0,))), S(Arg((3,)), Arg((4,))),
                      S(Arg((3, 1)), Arg((3,)))], dtypes=INT_FLOATS, atol=1e-4, rtol=1e-5)
op('vdot', lambda dt: [S(Arg((3,)), Arg((3,))), S(Arg((0,)), Arg((0,))), S(Arg((3,)), Arg((4,)))],
   dtypes=INT_FLOATS, atol=1e-4, rtol=1e-5)
op('linear', lambda dt: [S(Arg((4, 3)), Arg((5, 3))), S(Arg((4, 3)), Arg((5, 3)), Arg((5,))),
                         S(Arg((2, 4, 3)), Arg((5, 3)), Arg((5,))), S(Arg((3,)), Arg((5, 3)), Arg((5,))),
                         S(Arg((4, 3)), Arg((3,))), S(Arg((4, 3)), Arg((3,)), Arg(())), S(Arg((3,)), Arg((3,))),
                         S(Arg((3, 4), noncontig=True), Arg((5, 4)), Arg((1,))), S(Arg((0, 3)), Arg((5, 3)), Arg((5,))),
                         S(Arg((2, 3)), Arg((4, 5))), S(Arg((2, 3)), Arg((4, 3)), Arg((5,))), S(Arg(()), Arg((4, 3)))],
   torch_name='nn.functional.linear', atol=1e-4, rtol=1e-5)


def _add_samples(inp, m1, m2, bad):
    def gen(dt):
        for s in inp:
            yield S(Arg(s), Arg(m1), Arg(m2))
        yield S(Arg(inp[0]), Arg(m1), Arg(m2), beta=0.5, alpha=2)
        yield S(Arg(inp[0]), Arg(m1), Arg(m2), beta=0, alpha=-1)
        for b in bad:
            yield S(*[Arg(x) for x in b])
    return gen


op('addmm', _add_samples([(2, 4), (4,), (), (1, 4), (2, 1)], (2, 3), (3, 4),
                         [((3,), (2, 3), (3, 4)), ((2, 5), (2, 3), (3, 4)), ((4,), (2, 3), (4, 4)),
                          ((4,), (2, 3, 1), (4, 4)), ((2, 2, 4), (2, 3), (3, 4))]), dtypes=INT_FLOATS, atol=1e-4, rtol=1e-5)
op('addmv', _add_samples([(2,), (1,), ()], (2, 3), (3,), [((3,), (2, 3), (3,)), ((2,), (2, 3), (4,))]),
   dtypes=INT_FLOATS, atol=1e-4, rtol=1e-5)
op('baddbmm', _add_samples([(2, 2, 4), (4,), (2, 1, 4)], (2, 2, 3), (2, 3, 4),
                           [((3,), (2, 2, 3), (2, 3, 4)), ((4,), (2, 2, 3), (2, 4, 4))]), dtypes=INT_FLOATS,
   atol=1e-4, rtol=1e-5)
op('addbmm', _add_samples([(2, 4), (4,), ()], (3, 2, 3), (3, 3, 4),
                          [((3,), (2, 2, 3), (2, 3, 4)), ((4,), (2, 2, 3), (3, 3, 4)), ((4,), (2, 3), (3, 3, 4)),
                           ((4,), (2, 2, 3), (2, 4, 4))]), dtypes=INT_FLOATS, atol=1e-4, rtol=1e-5)


def _einsum_samples(dt):
    for eq, shapes in [('ij,jk->ik', [(2, 3), (3, 4)]), ('ij,jk', [(2, 3), (3, 4)]), ('i,i->', [(3,), (3,)]),
                       ('i,j->ij', [(2,), (3,)]), ('ii->i', [(3, 3)]), ('ii', [(3, 3)]), ('iij->ij', [(2, 2, 3)]),
                       ('ij->', [(2, 3)]), ('ij->j', [(2, 3)]), ('ij->ji', [(2, 3)]), ('bij,bjk->bik', [(2, 2, 3), (2, 3, 4)]),
                       ('...ij,...jk', [(2, 2, 3), (5, 1, 3, 4)]), ('...ij->...', [(2, 3, 4)]), ('i...->...', [(2, 3, 4)]),
                       ('ij,ij->ij', [(1, 3), (2, 3)]), ('ab,bc,cd->ad', [(2, 3), (3, 4), (4, 2)]),
                       ('i j , j k -> i k', [(2, 3), (3, 4)]), ('ij,kl->ijkl', [(2, 1), (3, 2)]), ('i->i', [(0,)]),
                       ('ij,jk->ik', [(0, 3), (3, 2)]), ('Ab,bC->AC', [(2, 3), (3, 2)]), ('ij,j->i', [(3, 4), (4,)]),
                       ('ji,jk->ik', [(3, 2), (3, 4)]), ('iji,j->j', [(2, 3, 2), (3,)]),
                       ('...i,...i->i', [(2, 3), (4, 2, 3)]), ('...i,i->...', [(2, 3), (3,)]), ('i...->i', [(2, 3, 4)]),
                       ('ij,jk->ki', [(2, 3), (3, 4)]), ('ab,bc,cd,de->ae', [(2, 3), (3, 4), (4, 2), (2, 3)]),
                       # errors
                       ('ij,jk', [(2, 3), (4, 5)]), ('ij,jk->ik', [(2, 3)]), ('ij,jk->ik', [(2, 3), (3, 4), (2,)]),
                       ('ijk,jk->ik', [(2, 3), (3, 4)]), ('ij,jk->iz', [(2, 3), (3, 4)]), ('ij,jk->ii', [(2, 3), (3, 4)]),
                       ('ii', [(2, 3)]), ('i1', [(2, 3)])]:
        yield S(eq, *[Arg(s) for s in shapes])
    yield S('ij,jk->ik', Arg((3, 2), noncontig=True), Arg((2, 4)))
    yield S('ij,jk->ik', [Arg((2, 3)), Arg((3, 4))])


op('einsum', _einsum_samples, dtypes=FLOATS,  # torch's integer einsum promotes only on some paths
   atol=1e-4, rtol=1e-5)
op('tensordot', lambda dt: [S(Arg((2, 3)), Arg((3, 4)), 1), S(Arg((2, 3, 4)), Arg((3, 4, 5))), S(Arg((2, 3)), Arg((4, 5)), 0),
                            S(Arg((2, 3)), Arg((3, 4)), ([1], [0])), S(Arg((2, 3, 4)), Arg((4, 2, 5)), ([0, 2], [1, 0])),
                            S(Arg((2, 3)), Arg((4, 4)), 1), S(Arg((2, 3)), Arg((3, 4)), ([1], [1])),
                            S(Arg((2, 3)), Arg((3, 4)), ([1, 0], [0]))], dtypes=INT_FLOATS, atol=1e-4, rtol=1e-5)
op('inner', lambda dt: [S(Arg((2, 3)), Arg((4, 3))), S(Arg((3,)), Arg((3,))), S(Arg(()), Arg((2, 3))),
                        S(Arg((2, 3, 4)), Arg((4,))), S(Arg((2, 3)), Arg((4,)))], dtypes=INT_FLOATS, atol=1e-4, rtol=1e-5)
op('outer', lambda dt: [S(Arg((2,)), Arg((3,))), S(Arg((0,)), Arg((3,))), S(Arg((2,)), Arg((3,), 'float64')),
                        S(Arg((2, 3)), Arg((3,))), S(Arg((2,)), Arg((3, 1)))], dtypes=INT_FLOATS)
op('ger', lambda dt: [S(Arg((2,)), Arg((3,))), S(Arg((2, 3)), Arg((3,)))], dtypes=FLOATS)
op('kron', lambda dt: [S(Arg((2, 3)), Arg((3, 2))), S(Arg((2, 3)), Arg((3,))), S(Arg(()), Arg((2,))),
                       S(Arg((2, 1, 2)), Arg((2, 2))), S(Arg((2,)), Arg((3,), 'float64'))], dtypes=INT_FLOATS)
op('bilinear', lambda dt: [S(Arg((4, 3)), Arg((4, 2)), Arg((5, 3, 2))), S(Arg((4, 3)), Arg((4, 2)), Arg((5, 3, 2)), Arg((5,))),
                           S(Arg((2, 4, 3)), Arg((2, 4, 2)), Arg((5, 3, 2)), Arg((5,))), S(Arg((3,)), Arg((2,)), Arg((5, 3, 2))),
                           S(Arg((4, 3)), Arg((4, 2)), Arg((5, 2, 2))), S(Arg((4, 3)), Arg((3, 2)), Arg((5, 3, 2)))],
   torch_name='nn.functional.bilinear', atol=1e-4, rtol=1e-5)
op('_trilinear', lambda dt: [S(Arg((4, 3)), Arg((5, 3, 2)), Arg((4, 2)), [1, 3], [0], [1, 2], [2, 3]),
                             S(Arg((4, 3)), Arg((5, 3, 2)), Arg((4, 2)), [1, 3], [0], [1, 2], [2, 3], 0),
                             S(Arg((2, 3)), Arg((2, 3)), Arg((3,)), [], [], [0], [1]),
                             S(Arg((2, 3)), Arg((2, 3)), Arg((3,)), [], [], [0], []),
                             S(Arg((0, 3)), Arg((5, 3, 2)), Arg((0, 2)), [1, 3], [0], [1, 2], [2, 3])],
   atol=1e-4, rtol=1e-5)
op('diag', lambda dt: [S(Arg((3,))), S(Arg((3,)), 1), S(Arg((3,)), -2), S(Arg((3, 4))), S(Arg((3, 4)), 1), S(Arg((3, 4)), -1),
                       S(Arg((0,))), S(Arg((3, 4), noncontig=True), 2), S(Arg((2, 3, 4)))], dtypes=INT_FLOATS)
op('diag_embed', lambda dt: [S(Arg((3,))), S(Arg((2, 3)), 1), S(Arg((2, 3)), -1, 0, 2), S(Arg((2, 3)), 0, 2, 0),
                             S(Arg((2, 3, 4)), 0, 1, 3), S(Arg((2, 3)), 0, 1, 1), S(Arg(())), S(Arg((2, 0)))], dtypes=INT_FLOATS)
op('cross', lambda dt: [S(Arg((4, 3)), Arg((4, 3))), S(Arg((3, 4)), Arg((3, 4))), S(Arg((3, 4)), Arg((3, 4)), 0),
                        S(Arg((4, 3)), Arg((1, 3))), S(Arg((4, 2)), Arg((4, 2))), S(Arg((2, 3)), Arg((2, 3)), -1)],
   dtypes=INT_FLOATS)
op('linalg.cross', lambda dt: [S(Arg((4, 3)), Arg((4, 3))), S(Arg((3, 4)), Arg((3, 4)), dim=0), S(Arg((2, 4, 3)), Arg((4, 3))),
                               S(Arg((4, 2)), Arg((4, 2)))], dtypes=INT_FLOATS)


# --- ember.linalg ---------------------------------------------------------------------------------

def _spd(shape, dt, seed=0):
    """A symmetric positive-definite (batch of) matrix: M M^T + n I."""
    rng = np.random.default_rng(seed)
    m = rng.uniform(-1, 1, shape)
    return (m @ np.swapaxes(m, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dt)


def _wellcond(shape, dt, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-1, 1, shape) + 3 * np.eye(shape[-1])).astype(dt)


_SQ_ERRORS = [S(Arg((2, 3))), S(Arg((3,))), S(Arg((3, 3), 'int64'))]

op('linalg.matrix_exp', lambda dt: [S(Arg((3, 3), low=-1, high=1)), S(Arg((2, 4, 4), low=-2, high=2)), S(Arg((3, 3), low=-3, high=3, noncontig=True)), S(Arg((0, 0)))], atol=1e-4, rtol=1e-4, meta=False)
op('linalg.inv', lambda dt: [S(_wellcond((3, 3), dt)), S(_wellcond((2, 4, 4), dt, 1)), S(Arg((0, 0))), *_SQ_ERRORS], atol=1e-4, rtol=1e-4)
op('inverse', lambda dt: [S(_wellcond((3, 3), dt))], atol=1e-4, rtol=1e-4)
op('det', lambda dt: [S(_wellcond((3, 3), dt))], atol=1e-4, rtol=1e-4)
op('linalg.slogdet', lambda dt: [S(_wellcond((3, 3), dt)), S(-_wellcond((2, 3, 3), dt, 2)), *_SQ_ERRORS],
   atol=1e-4, rtol=1e-4)
op('logdet', lambda dt: [S(_spd((3, 3), dt))], atol=1e-4, rtol=1e-4)
op('linalg.solve', lambda dt: [S(_wellcond((3, 3), dt), Arg((3,))), S(_wellcond((3, 3), dt), Arg((3, 2))),
                               S(_wellcond((2, 3, 3), dt), Arg((2, 3))), S(_wellcond((2, 3, 3), dt), Arg((3,))),
                               S(_wellcond((3, 3), dt), Arg((2, 3, 2))), S(_wellcond((2, 3, 3), dt), Arg((3, 2))),
                               S(_wellcond((3, 3), dt), Arg((3, 2)), left=False), S(_wellcond((3, 3), dt), Arg((2, 3)), left=False),
                               S(_wellcond((3, 3), dt), Arg((4,))), S(Arg((3, 4)), Arg((3, 2))),
                               S(_wellcond((3, 3), dt), Arg((3,), 'float64' if dt == 'float32' else 'float32'))],
   atol=1e-4, rtol=1e-4)
op('linalg.cholesky', lambda dt: [S(_spd((3, 3), dt)), S(_spd((2, 4, 4), dt)), S(_spd((3, 3), dt), upper=True),
                                  S(Arg((2, 3)))], atol=1e-4, rtol=1e-4)
op('linalg.qr', lambda dt: [S(Arg((4, 3))), S(Arg((3, 3))), S(Arg((2, 5, 3))), S(Arg((4, 3)), mode='complete'),
                            S(Arg((3, 3)), mode='complete'), S(Arg((4, 3)), mode='r'), S(Arg((3,))), S(Arg((3, 2)), mode='bad')],
   atol=1e-4, rtol=1e-4)
# singular vectors are defined up to sign and LAPACK builds differ in the signs they pick: values and
# gradients are compared sign-invariantly in tests/test_linalg.py; here shapes, dtypes and errors
op('linalg.svd', lambda dt: [S(Arg((4, 3)), full_matrices=False), S(Arg((3, 4)), full_matrices=False),
                             S(Arg((2, 4, 3)), full_matrices=False), S(Arg((4, 3))), S(Arg((3,)))], random=True, grad=False)
op('linalg.svdvals', lambda dt: [S(Arg((4, 3))), S(Arg((2, 3, 5))), S(Arg((3,)))], atol=1e-4, rtol=1e-4)
op('linalg.norm', lambda dt: [S(Arg((3, 4))), S(Arg((5,))), S(Arg((2, 3, 4))), S(Arg((3, 4)), 'fro'), S(Arg((3, 4)), 'nuc'),
                              S(Arg((3, 4)), 1), S(Arg((3, 4)), float('inf')), S(Arg((3, 4)), -1), S(Arg((3, 4)), 2),
                              S(Arg((3, 4)), -2), S(Arg((5,)), 3), S(Arg((2, 3, 4)), dim=(0, 2)), S(Arg((2, 3, 4)), 1, (2, 1)),
                              S(Arg((2, 3, 4)), dim=1, keepdim=True), S(Arg((2, 3, 4)), 'fro', (0, 1), True),
                              S(Arg((2, 3, 4)), 'nuc', (0, 2), True), S(Arg((3, 3, 3)), 'fro'), S(Arg((3, 3)), 3),
                              S(Arg((3, 3), 'int64'))], atol=1e-4, rtol=1e-4)
op('linalg.matrix_norm', lambda dt: [S(Arg((3, 4))), S(Arg((2, 3, 4)), 'nuc'), S(Arg((3, 4)), -float('inf')),
                                     S(Arg((3,))), S(Arg((3, 3)), 3), S(Arg((3, 3)), 'fro', 0)], atol=1e-4, rtol=1e-4)
op('linalg.matrix_power', lambda dt: [S(_wellcond((3, 3), dt), 3), S(_wellcond((3, 3), dt), 0), S(_wellcond((2, 3, 3), dt), -2),
                                      S(Arg((2, 3)), 2)], atol=1e-4, rtol=1e-4)
op('linalg.multi_dot', lambda dt: [S([Arg((2, 3)), Arg((3, 4)), Arg((4, 2))]), S([Arg((3,)), Arg((3, 4)), Arg((4,))]),
                                   S([Arg((2, 3))]), S([Arg((2, 3, 3)), Arg((3, 3))])], atol=1e-4, rtol=1e-4)
op('linalg.pinv', lambda dt: [S(Arg((4, 3))), S(Arg((2, 3, 5))), S(Arg((3, 3)), hermitian=True), S(Arg((4, 3)), atol=0.5),
                              S(Arg((4, 3)), rtol=0.3), S(Arg((0, 3))), S(Arg((3,))), S(Arg((4, 3)), hermitian=True)],
   atol=1e-4, rtol=1e-4)
op('linalg.vecdot', lambda dt: [S(Arg((3, 4)), Arg((3, 4))), S(Arg((3, 4)), Arg((4,))), S(Arg((4, 3)), Arg((4, 3)), dim=0)])
op('linalg.matmul', _matmul_samples, dtypes=FLOATS, atol=1e-4, rtol=1e-5)
op('matrix_power', lambda dt: [S(_wellcond((3, 3), dt), 2)], atol=1e-4, rtol=1e-4)
op('cholesky', lambda dt: [S(_spd((3, 3), dt))], atol=1e-4, rtol=1e-4)
op('svd', lambda dt: [S(Arg((4, 3))), S(Arg((3, 4)), some=False)], random=True, grad=False)
op('qr', lambda dt: [S(Arg((4, 3))), S(Arg((4, 3)), some=False)], atol=1e-4, rtol=1e-4, grad=False)
op('slogdet', lambda dt: [S(_wellcond((3, 3), dt))], atol=1e-4, rtol=1e-4)
op('chain_matmul', lambda dt: [S(Arg((2, 3)), Arg((3, 4)), Arg((4, 2)))], atol=1e-4, rtol=1e-5)
op('linalg.eigh', lambda dt: [S(_spd((3, 3), dt)), S(_spd((2, 3, 3), dt), UPLO='U'), S(Arg((2, 3))), S(Arg((3, 3), 'int64'))],
   random=True, grad=False)      # eigenvectors' signs: compared sign-invariantly in tests/test_linalg.py
op('linalg.eigvalsh', lambda dt: [S(_spd((3, 3), dt)), S(_spd((2, 3, 3), dt), 'U')], atol=1e-4, rtol=1e-4)
op('addr', lambda dt: [S(Arg((2, 3)), Arg((2,)), Arg((3,))), S(Arg((3,)), Arg((2,)), Arg((3,)), beta=0.5, alpha=2),
                       S(Arg(()), Arg((2,)), Arg((3,)), beta=0), S(Arg((2, 3)), Arg((2, 2)), Arg((3,)))], dtypes=FLOATS)
op('linalg.matrix_rank', lambda dt: [S(Arg((4, 3))), S(np.ones((3, 3), dt)), S(Arg((2, 3, 5))), S(Arg((3, 3)), atol=1.0)],
   grad=False)
op('linalg.det', lambda dt: [S(_wellcond((3, 3), dt)), S(_wellcond((2, 4, 4), dt, 1)), S(Arg((1, 1))),
                             S(np.zeros((3, 3), dt)), *_SQ_ERRORS], atol=1e-4, rtol=1e-4)


def _linear_backward_ref(x, g, w, output_mask):
    """torch declares linear_backward but has no CPU kernel: the same three products in torch ops."""
    if w.dim() != 2 or x.shape[-1] != w.shape[1] or g.shape[-1] != w.shape[0] or x.shape[:-1] != g.shape[:-1]:
        raise RuntimeError("linear_backward: shapes of input, grad_output and weight do not match")
    g2, x2 = g.reshape(-1, g.shape[-1]), x.reshape(-1, x.shape[-1])
    return (g @ w if output_mask[0] else None, g2.T @ x2 if output_mask[1] else None,
            g2.sum(0) if output_mask[2] else None)


def _linear_backward_samples(dt):
    yield S(Arg((5, 3)), Arg((5, 4)), Arg((4, 3)), [True, True, True])
    yield S(Arg((2, 6, 3)), Arg((2, 6, 4)), Arg((4, 3)), [True, False, True])
    yield S(Arg((3,)), Arg((4,)), Arg((4, 3)), [False, True, True])
    yield S(Arg((3, 5), noncontig=True), Arg((3, 2)), Arg((2, 5)), [True, True, False])
    yield S(Arg((0, 3)), Arg((0, 4)), Arg((4, 3)), [True, True, True])
    yield S(Arg((5, 3)), Arg((5, 4)), Arg((4, 2)), [True, True, True])          # error: weight's in-features


op('linear_backward', _linear_backward_samples, torch_fn=_linear_backward_ref, grad=False, gradgrad=False)


# --- eig, geqrf, LDL (values and gradients against torch's in tests/test_linalg_more.py) -------------------------

def _ldl_pieces(n, dt, batch=()):
    """A valid compact LDL^T with 1x1 pivots only: any lower-triangular LD with pivots 1..n."""
    rng = np.random.default_rng(3)
    LD = (np.tril(rng.uniform(-1, 1, batch + (n, n))) + 3 * np.eye(n)).astype(dt)
    return LD, np.broadcast_to(np.arange(1, n + 1, dtype=np.int32), batch + (n,)).copy()


op('linalg.eig', lambda dt: [S(_wellcond((3, 3), dt)), S(_wellcond((2, 4, 4), dt, 1)), S(Arg((0, 0))), *_SQ_ERRORS],
   random=True, grad=False)    # eigenvectors' phases (float32: LAPACK builds differ) and gradients: test_linalg_more.py
op('linalg.eigvals', lambda dt: [S(_wellcond((3, 3), dt)), S(_wellcond((2, 4, 4), dt, 1)), *_SQ_ERRORS],
   atol=1e-4, rtol=1e-4)
op('geqrf', lambda dt: [S(Arg((4, 3))), S(Arg((3, 5))), S(Arg((2, 3, 3))), S(Arg((3,))), S(Arg((3, 3), 'int64'))],
   atol=1e-4, rtol=1e-4, grad=False)
op('linalg.ldl_factor_ex', lambda dt: [S(_spd((3, 3), dt)), S(_spd((2, 4, 4), dt) - 3 * np.eye(4, dtype=dt)),
                                       S(_spd((3, 3), dt), hermitian=True), S(Arg((2, 3))), S(Arg((3, 3), 'int64'))],
   atol=1e-4, rtol=1e-4, grad=False)
op('linalg.ldl_factor', lambda dt: [S(_spd((3, 3), dt)), S(_spd((2, 4, 4), dt) - 3 * np.eye(4, dtype=dt))],
   atol=1e-4, rtol=1e-4, grad=False)
op('linalg.ldl_solve', lambda dt: [S(*_ldl_pieces(3, dt), Arg((3, 2))), S(*_ldl_pieces(3, dt, (2,)), Arg((3, 1))),
                                   S(*_ldl_pieces(3, dt), Arg((4, 2))), S(*_ldl_pieces(3, dt), Arg((3, 2), 'float64' if dt == 'float32' else 'float32'))],
   atol=1e-4, rtol=1e-4, grad=False)

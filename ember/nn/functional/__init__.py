"""ember.nn.functional: operators declared with ``nn=True`` (installed here by _ops/public.py) and the
hand-written functional API, one ``_<family>.py`` module per family, each listing ``__all__``. The
hand-written functions are wrapped here, once, to honour ``__torch_function__`` as torch's do (the generated
ones check in the dispatcher; NOTE [__torch_function__] in ember/_dispatch/torch_function.py)."""
import importlib
import pkgutil
import types

from ..._ops.public import NN_FUNCTIONAL as _GENERATED
from ...overrides import public_function as _public_function

# torch.nn.functional's Python functions hand __torch_function__ their tensor arguments by position and the
# rest by keyword; these are the ones that pass more than the first parameter by position
_POSITIONAL = {'threshold': 3, 'batch_norm': 3, 'instance_norm': 1, **{n: 2 for n in (
    'cross_entropy', 'nll_loss', 'mse_loss', 'l1_loss', 'smooth_l1_loss', 'huber_loss', 'kl_div',
    'binary_cross_entropy', 'binary_cross_entropy_with_logits', 'layer_norm', 'embedding', 'max_pool1d',
    'max_pool2d', 'max_pool3d', 'group_norm', 'poisson_nll_loss', 'soft_margin_loss', 'multilabel_soft_margin_loss',
    'margin_ranking_loss', 'hinge_embedding_loss', 'cosine_embedding_loss', 'triplet_margin_loss')}}


def _load():
    for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        mod = importlib.import_module(f'{__name__}.{m.name}')
        for n in getattr(mod, '__all__', ()):
            fn = getattr(mod, n)
            if isinstance(fn, types.FunctionType) and fn is not _GENERATED.get(n) and not hasattr(fn, '_op'):
                fn = _public_function(fn, _POSITIONAL.get(n, 1))
                fn.__module__ = __name__      # pickled by reference as ember.nn.functional.<name>
                if '<locals>' in fn.__qualname__:
                    fn.__qualname__ = n
            globals()[n] = fn


globals().update(_GENERATED)
_load()

"""Window functions (torch.signal.windows), written in ember's public operators as torch writes them: a
``linspace`` over the window's argument and one elementwise expression, so values round as torch's do and the
window records a graph when ``requires_grad=True``.

``sym=True`` (the default) gives a symmetric window for filter design (its ends match); ``sym=False`` a
periodic one for spectral analysis (the symmetric window of ``M + 1`` points without its last).

>>> import ember
>>> ember.signal.windows.hann(5)
tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
"""
import math

import ember

__all__ = ['bartlett', 'blackman', 'cosine', 'exponential', 'gaussian', 'general_cosine', 'general_hamming',
           'hamming', 'hann', 'kaiser', 'nuttall']


def _check(name, M, dtype, layout):
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not ember.strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (ember.float32, ember.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")


def _trivial(M, dtype, device, requires_grad):
    """The windows of no point and of one point: empty, and ``[1.]``."""
    make = ember.empty if M == 0 else ember.ones
    return make((M,), dtype=dtype, device=device, requires_grad=requires_grad)


def _line(start, step, M, dtype, device, requires_grad):
    return ember.linspace(start, start + (M - 1) * step, M, dtype=dtype, device=device, requires_grad=requires_grad)


def _window(name, M, dtype, layout, device, requires_grad, body, trivial=1):
    """Checks the arguments, answers the trivial lengths (up to ``trivial``), and otherwise returns
    ``body(dtype)``."""
    dtype = ember.get_default_dtype() if dtype is None else dtype
    _check(name, M, dtype, layout)
    if M <= trivial:
        return _trivial(M, dtype, device, requires_grad)
    return body(dtype)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=ember.strided, device=None,
                requires_grad=False):
    """``w[n] = exp(-|n - center| / tau)``; ``center`` defaults to the window's middle (only a periodic window
    may move it).

    >>> exponential(3, tau=1.0)
    tensor([0.3679, 1.0000, 0.3679])
    """
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")

    def body(dtype):
        c = (M if not sym and M > 1 else M - 1) / 2.0 if center is None else center
        k = _line(-c / tau, 1 / tau, M, dtype, device, requires_grad)
        return ember.exp(-ember.abs(k))
    # one point is computed too: a periodic window's centre may lie off it
    return _window('exponential', M, dtype, layout, device, requires_grad, body, trivial=0)


def cosine(M, *, sym=True, dtype=None, layout=ember.strided, device=None, requires_grad=False):
    """The sine arch ``w[n] = sin(pi (n + 1/2) / M)`` (SciPy's ``cosine`` window).

    >>> cosine(3)
    tensor([0.5000, 1.0000, 0.5000])
    """
    def body(dtype):
        step = math.pi / (M + 1 if not sym and M > 1 else M)
        return ember.sin(_line(0.5 * step, step, M, dtype, device, requires_grad))
    return _window('cosine', M, dtype, layout, device, requires_grad, body)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=ember.strided, device=None, requires_grad=False):
    """``w[n] = exp(-(n - (M - 1)/2)^2 / (2 std^2))``.

    >>> gaussian(3, std=1.0)
    tensor([0.6065, 1.0000, 0.6065])
    """
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")

    def body(dtype):
        start = -(M if not sym else M - 1) / 2.0
        step = 1 / (std * math.sqrt(2))
        k = _line(start * step, step, M, dtype, device, requires_grad)
        return ember.exp(-k ** 2)
    return _window('gaussian', M, dtype, layout, device, requires_grad, body)


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=ember.strided, device=None, requires_grad=False):
    """``w[n] = I0(beta sqrt(1 - (2n/N - 1)^2)) / I0(beta)`` with ``N = M - 1`` (``M`` when periodic).

    >>> kaiser(3, beta=0.0)
    tensor([1., 1., 1.])
    """
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")

    def body(dtype):
        step = 2.0 * beta / (M if not sym else M - 1)
        end = min(-beta + (M - 1) * step, beta)       # the last point may not overshoot beta (sqrt of < 0)
        k = ember.linspace(-beta, end, M, dtype=dtype, device=device, requires_grad=requires_grad)
        return ember.i0(ember.sqrt(beta * beta - ember.pow(k, 2))) / ember.i0(
            ember.tensor(beta, dtype=dtype, device=device))
    return _window('kaiser', M, dtype, layout, device, requires_grad, body)


def bartlett(M, *, sym=True, dtype=None, layout=ember.strided, device=None, requires_grad=False):
    """The triangle ``w[n] = 1 - |2n/N - 1|`` with ``N = M - 1`` (``M`` when periodic).

    >>> bartlett(5)
    tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
    """
    def body(dtype):
        k = _line(-1, 2.0 / (M if not sym else M - 1), M, dtype, device, requires_grad)
        return 1 - ember.abs(k)
    return _window('bartlett', M, dtype, layout, device, requires_grad, body)


def general_cosine(M, *, a, sym=True, dtype=None, layout=ember.strided, device=None, requires_grad=False):
    """``w[n] = sum_i (-1)^i a[i] cos(2 pi i n / N)`` with ``N = M - 1`` (``M`` when periodic): the family of
    hann, hamming, blackman and nuttall.

    >>> general_cosine(3, a=[0.5, 0.5])
    tensor([0., 1., 0.])
    """
    if not isinstance(a, (list, tuple)):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")

    def body(dtype):
        k = _line(0, 2 * math.pi / (M if not sym else M - 1), M, dtype, device, requires_grad)
        coef = ember.tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=dtype, device=device,
                            requires_grad=requires_grad)
        i = ember.arange(coef.shape[0], dtype=coef.dtype, device=device, requires_grad=requires_grad)
        return (coef.unsqueeze(-1) * ember.cos(i.unsqueeze(-1) * k)).sum(0)
    return _window('general_cosine', M, dtype, layout, device, requires_grad, body)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=ember.strided, device=None, requires_grad=False):
    """``w[n] = alpha - (1 - alpha) cos(2 pi n / N)``.

    >>> general_hamming(3, alpha=0.5)
    tensor([0., 1., 0.])
    """
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def _cosine_sum(coefficients, doc):
    def window(M, *, sym=True, dtype=None, layout=ember.strided, device=None, requires_grad=False):
        return general_cosine(M, a=coefficients, sym=sym, dtype=dtype, layout=layout, device=device,
                              requires_grad=requires_grad)
    window.__doc__ = doc
    return window


hann = _cosine_sum([0.5, 0.5], "The Hann window, ``general_hamming(alpha=0.5)``.\n\n    >>> hann(3)\n"
                                "    tensor([0., 1., 0.])\n    ")
hamming = _cosine_sum([0.54, 1.0 - 0.54], "The Hamming window, ``general_hamming(alpha=0.54)``.")
blackman = _cosine_sum([0.42, 0.5, 0.08], "The Blackman window, ``general_cosine(a=[0.42, 0.5, 0.08])``.")
nuttall = _cosine_sum([0.3635819, 0.4891775, 0.1365995, 0.0106411],
                      "Nuttall's minimum 4-term Blackman-Harris window.")
for _f, _n in ((hann, 'hann'), (hamming, 'hamming'), (blackman, 'blackman'), (nuttall, 'nuttall')):
    _f.__name__ = _f.__qualname__ = _n

"""``torch._VF``: the operator functions under the name torch's modules call them by (``_VF.lstm``, ``_VF.norm``,
``_VF.stft``): in ember, the public ``ember.<name>`` functions themselves."""


def __getattr__(name):
    import ember
    try:
        return getattr(ember, name)
    except AttributeError:
        raise AttributeError(f"module 'ember._VF' has no attribute '{name}'") from None

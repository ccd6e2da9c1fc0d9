"""torch._library: the machinery behind torch.library's custom operators. ember keeps it in ember/_custom_ops.py
(and ember.library); the submodules here are the paths libraries import its pieces from."""

"""torch.fx.experimental.symbolic_shapes, as far as ember goes: the error raised when traced code needs a
tensor's value (ember has no symbolic sizes, so only the example inputs' shapes are traced)."""

__all__ = ['GuardOnDataDependentSymNode']


class GuardOnDataDependentSymNode(RuntimeError):
    """Python control flow on a value that tracing on fake tensors cannot know (``if x.sum() > 0:``)."""

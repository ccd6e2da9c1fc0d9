"""torch.utils.tensorboard: ``SummaryWriter`` writes TensorBoard event files (scalars, histograms, images, text,
embeddings, hyperparameters, PR curves, the model's graph) for ``tensorboard --logdir runs`` to show.

torch's own module is a writer over the ``tensorboard`` package's protocol buffers; ember does not write those
by hand either. It uses tensorboardX (``pip install tensorboardX``, the ``ember[tensorboard]`` extra), the
standalone writer torch's was derived from, with the same methods and arguments. What ember adds is the step
torch's writer does itself: Tensors become arrays (``detach().cpu().numpy()``) before they reach the writer,
in any argument, inside lists, tuples and dicts too.

``add_graph(model, input_to_model)`` exports the model with ``ember.onnx.export`` (needs ``onnx``) and writes
that graph, where torch traces with TorchScript; TensorBoard's Graphs tab then shows the ONNX operators.

>>> from ember.utils.tensorboard import SummaryWriter        # doctest: +SKIP
>>> w = SummaryWriter('runs/exp1'); w.add_scalar('loss', loss, step); w.close()   # doctest: +SKIP
"""
import contextlib
import itertools
import functools
import io
import os
import tempfile
import warnings

try:
    import tensorboardX as _tbx
except ImportError as e:      # torch: "TensorBoard logging requires TensorBoard version 1.15 or above"
    raise ImportError("ember.utils.tensorboard (torch.utils.tensorboard) writes event files with tensorboardX, "
                      "which is not installed: pip install tensorboardX (or the ember[tensorboard] extra)") from e

from ... import Tensor

__all__ = ['SummaryWriter', 'FileWriter']

FileWriter = _tbx.FileWriter


def _arrays(v):
    """Tensors anywhere in ``v`` (a value, or lists, tuples and dicts of them) as NumPy arrays."""
    if isinstance(v, Tensor):
        return v.detach().cpu().numpy()
    if isinstance(v, (list, tuple)):
        return type(v)(_arrays(x) for x in v)
    if isinstance(v, dict):
        return {k: _arrays(x) for k, x in v.items()}
    return v


def _checked_scalar(value):
    """torch's make_np for add_scalar's value: an array, a number or a tensor; anything else (a list, a dict,
    None) raises its NotImplementedError, which programs suppress (skorch's TensorBoard callback)."""
    import numpy as np
    if not (isinstance(value, (np.ndarray, Tensor)) or np.isscalar(value)):
        raise NotImplementedError(f"Got {type(value)}, but numpy array or torch tensor are expected.")


def _converting(name):
    method = getattr(_tbx.SummaryWriter, name)

    @functools.wraps(method)
    def add(self, *args, **kwargs):
        if name == 'add_scalar':
            _checked_scalar(args[1] if len(args) > 1 else kwargs.get('scalar_value'))
        with _tags_as_given():
            return method(self, *_arrays(args), **_arrays(kwargs))
    return add


@contextlib.contextmanager
def _tags_as_given():
    """torch's writer stores a tag as given ('training loss'); tensorboardX's scalar, histogram and image summaries
    replace the characters TensorFlow's node names refuse ('training_loss'), so a reader asking for the tag a torch
    program wrote finds nothing. Its cleaning is turned off for the writer's own calls."""
    from tensorboardX import summary
    clean = summary._clean_tag
    summary._clean_tag = lambda name: name
    try:
        yield
    finally:
        summary._clean_tag = clean


_FILE_UID = itertools.count()       # tensorboard's _global_uid: one number per event file of the process


class SummaryWriter(_tbx.SummaryWriter):
    """Writes entries to event files in ``log_dir`` (default ``runs/CURRENT_DATETIME_HOSTNAME``), as
    torch.utils.tensorboard.SummaryWriter. Every ``add_*`` method takes ember Tensors where torch's takes
    torch Tensors."""

    def __init__(self, log_dir=None, comment='', purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=''):
        super().__init__(log_dir, comment=comment, purge_step=purge_step, max_queue=max_queue, flush_secs=flush_secs,
                         filename_suffix=filename_suffix)
        # torch's writer keeps its arguments as these attributes (tensorboardX keeps the directory as ``logdir``)
        self.purge_step, self.max_queue, self.flush_secs = purge_step, max_queue, flush_secs
        self.filename_suffix = filename_suffix

    # Event files named as torch's writer names them, events.out.tfevents.TIME.HOST.PID.UID (tensorboardX's stop
    # after HOST), with a new UID for every file: tensorboardX reads this suffix each time it opens one (a writer
    # reused after close() opens another; without the UID, two opened in the same second were one file, and the
    # first one's events were lost).
    @property
    def _filename_suffix(self):
        return f'.{os.getpid()}.{next(_FILE_UID)}{self._user_suffix}'

    @_filename_suffix.setter
    def _filename_suffix(self, value):
        self._user_suffix = value

    @property
    def log_dir(self):
        """The directory event files go to (torch's name; tensorboardX calls it ``logdir``)."""
        return self.logdir

    @log_dir.setter
    def log_dir(self, value):
        self.logdir = value

    def get_logdir(self):
        """The directory event files go to: ``log_dir``, or the ``runs/DATETIME_HOSTNAME`` made when none was given.

        >>> SummaryWriter('runs/exp1').get_logdir()          # doctest: +SKIP
        'runs/exp1'
        """
        return self.logdir

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """The model's graph, exported to ONNX by ember.onnx.export and written as TensorBoard's GraphDef."""
        from ... import onnx
        if input_to_model is None:      # torch's jit.trace gets no inputs: it prints and raises these words
            print("example_kwarg_inputs should be a dict")
            print("Error occurs, No graph saved")
            raise RuntimeError("example_kwarg_inputs should be a dict")
        args = tuple(input_to_model) if isinstance(input_to_model, (list, tuple)) else (input_to_model,)
        fd, path = tempfile.mkstemp(suffix='.onnx')
        os.close(fd)
        try:
            try:
                onnx.export(model, args, path)
            except Exception as e:      # noqa: BLE001 - the graph is a picture: training goes on without it
                # ember's exporter traces with fake tensors, so a branch on a tensor's value (a distribution's
                # argument validation, ``if x.sum() > 0``) stops it where torch's add_graph (jit.trace on the
                # real values) goes on; the run must not die for a picture
                warnings.warn(f"add_graph: the graph of {type(model).__name__} could not be exported ({type(e).__name__}: "
                              f"{str(e).splitlines()[0][:200]}); no graph is written", UserWarning, stacklevel=2)
                return
            with contextlib.nullcontext() if verbose else contextlib.redirect_stdout(io.StringIO()):
                self.add_onnx_graph(path)       # tensorboardX prints each node's name
        finally:
            os.unlink(path)


# torch's module path for it (NOTE [torch's module paths] in nn/modules/normalization.py): writer.py re-exports it
SummaryWriter.__module__ = 'ember.utils.tensorboard.writer'


for _name in dir(_tbx.SummaryWriter):
    if _name.startswith('add_') and _name not in ('add_graph', 'add_onnx_graph', 'add_openvino_graph'):
        setattr(SummaryWriter, _name, _converting(_name))
del _name

"""Generated code that a reader can inspect.

The dispatcher generates one Python entry point per operator and one adapter per (operator, backend)
kernel. Their source is compiled under a readable file name (``<ember op aten::add.Tensor>``), registered
with ``linecache`` so that tracebacks through them show the generated lines, and kept on the function as
``__ember_source__``, which ``ember.debug.source(op)`` prints.
"""
import linecache


def compile_function(src, filename, g, name):
    """Compile ``src`` (which defines ``name``) into ``g`` and return that function, its source kept."""
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    exec(compile(src, filename, 'exec'), g)
    fn = g[name]
    fn.__ember_source__ = src
    return fn

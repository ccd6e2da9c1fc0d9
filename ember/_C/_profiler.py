"""torch._C._profiler: the profiler's configuration types. ``_ExperimentalConfig`` holds Kineto's experimental
options (CUPTI metrics, ``verbose`` call stacks in the trace, ...); ember's profiler records on its own
(``ember.profiler``), takes the config and keeps it, and reads none of its fields.

>>> _ExperimentalConfig(verbose=True).verbose
True
"""

__all__ = ['_ExperimentalConfig']


class _ExperimentalConfig:
    """An experimental config for Kineto features (torch's fields and defaults)."""

    def __init__(self, profiler_metrics=(), profiler_measure_per_kernel=False, verbose=False,
                 performance_events=(), enable_cuda_sync_events=False, adjust_profiler_step=False,
                 disable_external_correlation=False, profile_all_threads=False, capture_overload_names=False,
                 record_python_gc_info=False, expose_kineto_event_metadata=False, custom_profiler_config='',
                 adjust_timestamps=False, trace_only=False):
        self.profiler_metrics, self.performance_events = list(profiler_metrics), list(performance_events)
        self.profiler_measure_per_kernel, self.verbose = profiler_measure_per_kernel, verbose
        self.enable_cuda_sync_events, self.adjust_profiler_step = enable_cuda_sync_events, adjust_profiler_step
        self.disable_external_correlation, self.profile_all_threads = disable_external_correlation, profile_all_threads
        self.capture_overload_names, self.record_python_gc_info = capture_overload_names, record_python_gc_info
        self.expose_kineto_event_metadata = expose_kineto_event_metadata
        self.custom_profiler_config, self.adjust_timestamps = custom_profiler_config, adjust_timestamps
        self.trace_only = trace_only

    def __getstate__(self):             # torch's pickles (the profiler sends it to its workers)
        return dict(self.__dict__)

    def __setstate__(self, state):
        self.__dict__.update(state)

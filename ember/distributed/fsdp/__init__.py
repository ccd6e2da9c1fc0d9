"""torch.distributed.fsdp: the names of Fully Sharded Data Parallel.

ember trains data-parallel with DistributedDataParallel; it has no FSDP (sharding parameters, gradients and
optimizer state needs DTensor-style sharded parameters, ``ember.distributed.tensor``'s note). The configuration
values (the enums and config dataclasses) and the auto-wrap policies (``wrap.py``) are real, so code that imports
them, builds a config, or asks a policy which modules it would wrap runs; wrapping a module in FSDP raises an
error saying so. Hugging Face diffusers imports these names in its training utilities.
"""
import dataclasses
import enum

from . import wrap  # noqa: F401

__all__ = ['FullyShardedDataParallel', 'fully_shard', 'FSDPModule', 'ShardingStrategy', 'BackwardPrefetch',
           'StateDictType', 'CPUOffload', 'MixedPrecision', 'StateDictConfig', 'FullStateDictConfig',
           'LocalStateDictConfig', 'ShardedStateDictConfig', 'OptimStateDictConfig', 'FullOptimStateDictConfig',
           'LocalOptimStateDictConfig', 'ShardedOptimStateDictConfig', 'StateDictSettings', 'OptimStateKeyType',
           'MixedPrecisionPolicy', 'OffloadPolicy', 'CPUOffloadPolicy']

_WHY = ("ember has no FSDP (it needs sharded parameters, which ember does not have); train data-parallel with "
        "ember.nn.parallel.DistributedDataParallel")


class ShardingStrategy(enum.Enum):
    FULL_SHARD = 1
    SHARD_GRAD_OP = 2
    NO_SHARD = 3
    HYBRID_SHARD = 4
    _HYBRID_SHARD_ZERO2 = 5


class BackwardPrefetch(enum.Enum):
    BACKWARD_PRE = 1
    BACKWARD_POST = 2


class StateDictType(enum.Enum):
    FULL_STATE_DICT = 1
    LOCAL_STATE_DICT = 2
    SHARDED_STATE_DICT = 3


class OptimStateKeyType(enum.Enum):
    PARAM_NAME = 1
    PARAM_ID = 2


@dataclasses.dataclass
class CPUOffload:
    offload_params: bool = False


@dataclasses.dataclass
class MixedPrecision:
    param_dtype: object = None
    reduce_dtype: object = None
    buffer_dtype: object = None
    keep_low_precision_grads: bool = False
    cast_forward_inputs: bool = False
    cast_root_forward_inputs: bool = True


@dataclasses.dataclass
class StateDictConfig:
    offload_to_cpu: bool = False


@dataclasses.dataclass
class FullStateDictConfig(StateDictConfig):
    rank0_only: bool = False


@dataclasses.dataclass
class LocalStateDictConfig(StateDictConfig):
    pass


@dataclasses.dataclass
class ShardedStateDictConfig(StateDictConfig):
    _use_dtensor: bool = False


@dataclasses.dataclass
class OptimStateDictConfig:
    offload_to_cpu: bool = True


@dataclasses.dataclass
class FullOptimStateDictConfig(OptimStateDictConfig):
    rank0_only: bool = False


@dataclasses.dataclass
class LocalOptimStateDictConfig(OptimStateDictConfig):
    offload_to_cpu: bool = False


@dataclasses.dataclass
class ShardedOptimStateDictConfig(OptimStateDictConfig):
    _use_dtensor: bool = False


@dataclasses.dataclass
class StateDictSettings:
    state_dict_type: StateDictType
    state_dict_config: StateDictConfig
    optim_state_dict_config: OptimStateDictConfig


@dataclasses.dataclass(frozen=True)
class MixedPrecisionPolicy:
    param_dtype: object = None
    reduce_dtype: object = None
    output_dtype: object = None
    cast_forward_inputs: bool = True


@dataclasses.dataclass
class OffloadPolicy:
    pass


@dataclasses.dataclass
class CPUOffloadPolicy(OffloadPolicy):
    pin_memory: bool = True


class FullyShardedDataParallel:
    """The FSDP wrapper type; no ember module is one (the module's note)."""

    def __new__(cls, *args, **kwargs):
        raise NotImplementedError(f"FullyShardedDataParallel: {_WHY}")


class FSDPModule:
    """The type fully_shard gives a module; no ember module is one."""


def fully_shard(module, **kwargs):
    raise NotImplementedError(f"fully_shard: {_WHY}")

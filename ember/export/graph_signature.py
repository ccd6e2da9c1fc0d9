"""torch.export.graph_signature: what each placeholder and each output of an exported graph stands for.

An exported graph takes every tensor it reads as an input, in this order: parameters (``p_<path>``), buffers
(``b_<path>``), lifted constants (``c_<name>``), then the user's inputs; it returns its outputs in the same
way: buffer mutations first (none in ember's training-level graphs: they keep the in-place operator), then
the user's outputs. ``InputSpec``/``OutputSpec`` record, per placeholder/output, its kind and the state-dict
key (``target``) it comes from.
"""
import dataclasses
import enum
from typing import Any, List, Optional

__all__ = ['InputKind', 'OutputKind', 'TensorArgument', 'ConstantArgument', 'InputSpec', 'OutputSpec',
           'ExportGraphSignature']


class InputKind(enum.Enum):
    USER_INPUT = enum.auto()
    PARAMETER = enum.auto()
    BUFFER = enum.auto()
    CONSTANT_TENSOR = enum.auto()
    CUSTOM_OBJ = enum.auto()
    TOKEN = enum.auto()


class OutputKind(enum.Enum):
    USER_OUTPUT = enum.auto()
    LOSS_OUTPUT = enum.auto()
    BUFFER_MUTATION = enum.auto()
    GRADIENT_TO_PARAMETER = enum.auto()
    GRADIENT_TO_USER_INPUT = enum.auto()
    USER_INPUT_MUTATION = enum.auto()
    TOKEN = enum.auto()


@dataclasses.dataclass
class TensorArgument:
    name: str


@dataclasses.dataclass
class ConstantArgument:
    name: str
    value: Any


@dataclasses.dataclass
class InputSpec:
    kind: InputKind
    arg: Any
    target: Optional[str]
    persistent: Optional[bool] = None

    def __str__(self):
        target = '' if self.target is None else f" target='{self.target}'"
        persistent = '' if self.persistent is None else f' persistent={self.persistent}'
        return f'{self.arg.name}: {self.kind.name}{target}{persistent}'


@dataclasses.dataclass
class OutputSpec:
    kind: OutputKind
    arg: Any
    target: Optional[str]

    def __str__(self):
        target = '' if self.target is None else f" target='{self.target}'"
        return f'{self.arg.name}: {self.kind.name}{target}'


@dataclasses.dataclass
class ExportGraphSignature:
    input_specs: List[InputSpec]
    output_specs: List[OutputSpec]

    def _inputs(self, kind):
        return [s for s in self.input_specs if s.kind == kind]

    @property
    def parameters(self):
        return [s.target for s in self._inputs(InputKind.PARAMETER)]

    @property
    def buffers(self):
        return [s.target for s in self._inputs(InputKind.BUFFER)]

    @property
    def non_persistent_buffers(self):
        return [s.target for s in self._inputs(InputKind.BUFFER) if s.persistent is False]

    @property
    def lifted_tensor_constants(self):
        return [s.target for s in self._inputs(InputKind.CONSTANT_TENSOR)]

    @property
    def user_inputs(self):
        return tuple(s.arg.name if isinstance(s.arg, TensorArgument) else s.arg.value
                     for s in self._inputs(InputKind.USER_INPUT))

    @property
    def user_outputs(self):
        return tuple(s.arg.name if isinstance(s.arg, TensorArgument) else s.arg.value
                     for s in self.output_specs if s.kind == OutputKind.USER_OUTPUT)

    @property
    def inputs_to_parameters(self):
        return {s.arg.name: s.target for s in self._inputs(InputKind.PARAMETER)}

    @property
    def inputs_to_buffers(self):
        return {s.arg.name: s.target for s in self._inputs(InputKind.BUFFER)}

    @property
    def inputs_to_lifted_tensor_constants(self):
        return {s.arg.name: s.target for s in self._inputs(InputKind.CONSTANT_TENSOR)}

    @property
    def buffers_to_mutate(self):
        return {s.arg.name: s.target for s in self.output_specs if s.kind == OutputKind.BUFFER_MUTATION}

    def __str__(self):
        lines = ['# inputs'] + [str(s) for s in self.input_specs] + ['', '# outputs'] + \
                [str(s) for s in self.output_specs]
        return '\n'.join(lines)

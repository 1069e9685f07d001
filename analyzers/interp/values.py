"""Abstract values of the tag interpreter.

A `Val` is a numpy array (one element per lane of a Triton tile, or a 0-d array for a scalar)
plus what the checker knows about each lane:

- `tags`: index symbol -> coordinate array. A loaded element of A (M, K) carries {M: m, K: k};
  a value gathered through a loaded index also carries the index's own coordinates, so a
  scatter can be compared with its gather. Symbols are the launch's dimension classes.
- `undef`: lanes a masked load left undefined (no `other=`): garbage on a GPU.
- `pad`: lanes that lie outside the data (masked off with an `other=` value); harmless only while
  they hold the neutral element of whatever consumes them.
- `held`: lanes that undefined or padding lanes spoiled in a reduction or dot, with the MB004 /
  DF003 event that stands once such a lane is kept (interp/garbage.py).
- `scale`: the online-softmax scale tag (see interp/softmax.py).
- `lineage`: ids of the loads/dots a float value derives from (which scores a max covers).
- `grows` / `wide`: integer provenance for the int32 overflow rule.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

FLOAT_TYPES = {"fp8e4nv", "fp8e5", "fp8e4b15", "fp8e4b8", "fp8e5b16", "fp16", "bf16", "fp32", "fp64"}
LOW_PRECISION = {"fp16", "bf16", "fp8e4nv", "fp8e5", "fp8e4b15", "fp8e4b8", "fp8e5b16"}
INT_TYPES = {"int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}

DTYPE_ALIASES = {
    "float16": "fp16",
    "half": "fp16",
    "bfloat16": "bf16",
    "float32": "fp32",
    "float": "fp32",
    "float64": "fp64",
    "double": "fp64",
    "float8e4nv": "fp8e4nv",
    "float8e5": "fp8e5",
    "float8_e4m3fn": "fp8e4nv",
    "float8_e5m2": "fp8e5",
    "float8e4b15": "fp8e4b15",
    "int1": "int1",
    "bool": "int1",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int": "int32",
    "int64": "int64",
    "long": "int64",
    "uint8": "uint8",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
    "tf32": "fp32",
}


def norm_dtype(name: str) -> str:
    return DTYPE_ALIASES.get(name, name)


def is_float(dtype: str) -> bool:
    return dtype in FLOAT_TYPES


class FullRun(Exception):
    """An address-only program met floating-point data deciding an address, a mask or a branch:
    its shortcuts would change what it touches, so it reruns in full."""


class KernelReturn(Exception):
    """Unwinds a `return` out of nested statements."""

    def __init__(self, value: Any = None) -> None:
        super().__init__()
        self.value = value


@dataclass(frozen=True)
class TensorInfo:
    """One tensor argument of a probe launch: its storage layout and dimension symbols."""

    index: int  # position among the launch's tensors
    name: str  # the kernel parameter it binds (e.g. a_ptr)
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    symbols: tuple[str, ...]  # one dimension class per dim (e.g. ("M", "K"))
    dtype: str
    created: bool = False  # allocated uninitialized by the launcher (torch.empty*): must be fully written
    sized: bool = True  # False when nothing tells its extent: bounds are not judged
    grid_tiled: bool = False  # every dimension is tiled by the grid or the kernel's masks
    # why its bounds, coverage and races are not judged (a launch value the binder could not
    # compute, a size relation only the callers test), for hover; "" if judged
    bounds_unjudged: str = ""

    @functools.cached_property
    def extent(self) -> int:
        """Elements from offset 0 to one past the last element (gaps included). A 0-d tensor
        (`torch.empty([])`, a scalar result) holds one element, as in torch."""
        if not self.shape:
            return 1
        if min(self.shape) == 0:
            return 0
        return 1 + sum((s - 1) * st for s, st in zip(self.shape, self.strides, strict=True))

    @functools.cached_property
    def _unravel_order(self) -> tuple[int, ...]:
        # outer dimensions first; a dimension of size 1 says nothing about the offset: last
        return tuple(sorted(range(len(self.shape)), key=lambda i: (self.shape[i] == 1, -self.strides[i], -i)))

    def unravel(self, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Offsets -> (coords[..., rank], valid) in this tensor; gaps and outside are invalid."""
        offs = np.asarray(offsets, dtype=np.int64)
        rank = len(self.shape)
        coords = np.zeros(offs.shape + (rank,), dtype=np.int64)
        valid = (offs >= 0) & (offs < max(self.extent, 0))
        rest: np.ndarray | None = np.where(valid, offs, 0)
        for d in self._unravel_order:
            if rest is None:
                # past a dimension of stride 1 nothing is left: every lane's coordinate is 0
                # (coords holds it already), below the extent of a non-empty dimension
                if self.shape[d] <= 0:
                    valid &= False
                continue
            step = max(self.strides[d], 1)
            if step == 1:  # divmod by 1: the quotient is the rest, nothing is left over
                c, rest = rest, None
            else:  # (rest >= 0 here: floor_divide and a product are half of divmod's time)
                c = np.floor_divide(rest, step)
                rest = rest - c * step
            coords[..., d] = c
            valid &= c < self.shape[d]
        if rest is not None:
            valid &= rest == 0
        return coords, valid


@dataclass(eq=False)
class Val:
    """A tile (or scalar) with per-lane tags and flags; see the module docstring."""

    data: np.ndarray
    dtype: str
    tags: dict[str, np.ndarray] = field(default_factory=dict)
    index_tags: frozenset[str] = frozenset()  # which tags came through a loaded index
    undef: np.ndarray | None = None
    pad: np.ndarray | None = None
    scale: Any = None
    terms: frozenset[int] | None = None  # score blocks an online-softmax sum or accumulator holds
    lineage: frozenset[int] = frozenset()
    maxinfo: Any = None  # a softmax.MaxToken when this value is a (running) max
    shift: Any = None  # the MaxToken subtracted to make this value (x - m)
    grows: bool = False  # integer derived from a program id, loop counter or loaded index
    runtime: bool = False  # integer derived from a runtime (non-constexpr) argument
    constexpr: bool = False
    loaded_from: frozenset[int] = frozenset()  # load sites of integer data feeding this value
    checked: frozenset[int] = frozenset()  # load sites a comparison producing this mask examined
    overflow_site: Any = None  # an int32 multiply that may overflow, feeding this value
    nan_site: Any = None  # where a -inf - -inf or 0/0 NaN was made
    unstable_exp: Any = None  # site of an exp taken without subtracting a max
    kcover: Any = None  # reduction coverage of a dot accumulator (interp/coverage.py)
    unknown: str | None = None  # set when derived from something not modelled
    src: str | None = None  # pointer parameter a loaded value came from (retyping to integer)
    param: str | None = None  # the runtime parameter this scalar is
    pid_axis: int | None = None  # a raw tl.program_id(axis)
    init_site: Any = None  # the tl.zeros/tl.full that created an accumulator
    load_node: Any = None  # the tl.load that produced this tile directly
    loopvar: bool = False
    undef_site: Any = None  # the masked load without `other=` whose lanes are undefined
    held: tuple[Any, ...] = ()  # garbage.Held: lanes a reduction or dot spoiled, events pending on them
    pad_sign_from: str | None = None  # loaded tensor whose sign the padding was scaled by (`x / t`)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    @property
    def is_scalar(self) -> bool:
        return self.data.ndim == 0

    def with_(self, **changes: Any) -> Val:
        # a shallow copy (dataclasses.replace would rerun __init__ for every field: hot path)
        out = object.__new__(Val)
        out.__dict__.update(self.__dict__)
        out.__dict__.update(changes)
        return out

    def item(self) -> Any:
        return self.data.item()


@dataclass(eq=False)
class Ptr:
    """A pointer tile: element offsets into one tensor; tags of any index used to compute them."""

    tensor: TensorInfo
    offsets: np.ndarray  # int64, in elements
    tags: dict[str, np.ndarray] = field(default_factory=dict)
    index_tags: frozenset[str] = frozenset()
    loaded_from: frozenset[int] = frozenset()
    index_site: Any = None  # where a loaded index first entered this pointer (MB005)
    overflow_site: Any = None
    unknown: str | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        return self.offsets.shape

    @property
    def dtype(self) -> str:
        return "ptr<" + self.tensor.dtype + ">"


@dataclass(eq=False)
class BlockPtr:
    """`tl.make_block_ptr`: a tile window over a tensor, moved by `tl.advance`."""

    tensor: TensorInfo
    base_offset: int
    shape: tuple[int, ...]  # the logical shape given to make_block_ptr
    strides: tuple[int, ...]
    offsets: tuple[int, ...]
    block_shape: tuple[int, ...]
    order: tuple[int, ...]
    site: Any = None


@dataclass(eq=False)
class Descriptor:
    """`tl.make_tensor_descriptor`: bounds-checked tile loads/stores (zeros outside, stores clipped)."""

    tensor: TensorInfo
    base_offset: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    block_shape: tuple[int, ...]


@dataclass(frozen=True)
class DType:
    """A Triton dtype used as a value (`tl.float32`, `x.dtype`, `ptr.dtype.element_ty`)."""

    name: str


@dataclass(frozen=True)
class PtrDType:
    """`ptr.dtype`: has `.element_ty`."""

    element: str


def scalar(value: Any, dtype: str | None = None, **kw: Any) -> Val:
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
        # a 64-bit unsigned constant (`0xC0FFEE1234567890`, sglang's canary anchor): Triton
        # types it uint64; its bits are kept as int64 data, as every uint64 value is here
        if not 0 <= value < 2**64:
            raise OverflowError(f"an integer constant of {value.bit_length()} bits")
        dtype = dtype or "uint64"
        value -= 2**64
    if dtype is None:
        if isinstance(value, bool | np.bool_):
            dtype = "int1"
        elif isinstance(value, int | np.integer):
            dtype = "int32" if -(2**31) <= int(value) < 2**31 else "int64"
        else:
            dtype = "fp32"
    np_dtype = np.float64 if is_float(dtype) else (np.bool_ if dtype == "int1" else np.int64)
    return Val(np.asarray(value, dtype=np_dtype), dtype, **kw)

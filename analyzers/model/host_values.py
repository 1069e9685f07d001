"""The values of the host evaluator: opaque values, sized ints, host tensors and the
dimension classes their sizes belong to (what the launcher's statements compute with)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from argus.analyzers.interp.values import DTYPE_ALIASES


class Opaque:
    """A host value the evaluator does not know (an unknown call, a device property...)."""

    def __init__(self, what: str) -> None:
        self.what = what

    def __repr__(self) -> str:
        return f"<opaque {self.what}>"


class KnownTruth(Opaque):
    """`u or 4`, `u and 0` of an unknown `u`: the value is unknown (`u` or the other operand),
    but whether it is true is known, which is all an `if` or `not` needs."""

    def __init__(self, truth: bool) -> None:
        super().__init__("boolop")
        self.truth = truth


class SymInt(int):
    """An int that remembers the dimension class it measures (for unification and tags)."""

    sym: str

    def __new__(cls, value: int, sym: str) -> SymInt:
        obj = super().__new__(cls, int(value))
        obj.sym = sym
        return obj


# the class prefix of a slice bound `-L` (host.py's `_slice_bound`): L's class, negated
NEGATED = "-"


@dataclass
class HostTensor:
    shape: list[int]
    strides: list[int]
    dtype: str
    symbols: list[str]
    storage: int  # id of the storage it views
    name: str = ""
    dtype_known: bool = False
    created: bool = False
    sized: bool = True

    def view_of(self, shape: list[int], strides: list[int], symbols: list[str]) -> HostTensor:
        return HostTensor(
            shape,
            strides,
            self.dtype,
            symbols,
            self.storage,
            self.name,
            self.dtype_known,
            self.created,
            self.sized,
        )


@dataclass
class DimClasses:
    """Union-find over dimension symbols, with the constraints asserts put on them."""

    parent: dict[str, str] = field(default_factory=dict)
    allowed: dict[str, list[int]] = field(default_factory=dict)
    multiple_of: dict[str, int] = field(default_factory=dict)
    # `assert H % H_KV == 0`: H's symbol -> H_KV's symbol (resolve both with find)
    divisible_by: dict[str, str] = field(default_factory=dict)
    derived: dict[str, str] = field(default_factory=dict)  # symbol -> expression it was made from

    def find(self, s: str) -> str:
        self.parent.setdefault(s, s)
        while self.parent[s] != s:
            self.parent[s] = self.parent[self.parent[s]]
            s = self.parent[s]
        return s

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            keep, drop = sorted((ra, rb), key=lambda r: (r.startswith("_"), len(r), r))
            self.parent[drop] = keep
            if drop in self.allowed:
                self.allowed.setdefault(keep, self.allowed.pop(drop))
            if drop in self.multiple_of:
                self.multiple_of[keep] = max(self.multiple_of.pop(drop), self.multiple_of.get(keep, 1))


TORCH_DTYPES = DTYPE_ALIASES  # torch's dtype names are a subset of the interpreter's aliases
TENSOR_ATTRS = {
    "shape",
    "stride",
    "size",
    "numel",
    "dim",
    "ndim",
    "dtype",
    "device",
    "t",
    "T",
    "transpose",
    "permute",
    "contiguous",
    "view",
    "reshape",
    "is_contiguous",
    "element_size",
    "data_ptr",
    "to",
    "float",
    "half",
    "bfloat16",
    "zero_",
    "fill_",
    "unsqueeze",
    "squeeze",
    "expand",
    "flatten",
    "new_empty",
    "new_zeros",
    "mT",
    "storage_offset",
    "is_cuda",
}


def contiguous_strides(shape: list[int] | tuple[int, ...]) -> list[int]:
    strides, acc = [], 1
    for s in reversed(list(shape)):
        strides.append(acc)
        acc *= max(int(s), 1)
    return list(reversed(strides))


def transpose(t: HostTensor, i: int, j: int) -> HostTensor:
    shape, strides, syms = list(t.shape), list(t.strides), list(t.symbols)
    shape[i], shape[j] = shape[j], shape[i]
    strides[i], strides[j] = strides[j], strides[i]
    syms[i], syms[j] = syms[j], syms[i]
    return t.view_of(shape, strides, syms)


def dotted_name(e: ast.expr) -> str:
    """`a.b.c` -> "a.b.c"; anything but names and attributes -> ""."""
    parts = []
    while isinstance(e, ast.Attribute):
        parts.append(e.attr)
        e = e.value
    if isinstance(e, ast.Name):
        parts.append(e.id)
        return ".".join(reversed(parts))
    return ""

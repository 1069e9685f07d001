"""Random numbers inside a kernel: `tl.philox`, `tl.randint` / `randint4x`, `tl.rand` /
`rand4x`, `tl.randn` / `randn4x`, `tl.uint_to_uniform_float`, `tl.pair_uniform_to_normal`.

Triton's generators are counter-based (Philox 4x32): the value of each lane is a function of
the seed and that lane's offset, so a block of random numbers has the offsets' shape and
varies with their lanes. Here the bits are a fixed pseudo-random draw (seeded, so a check is
reproducible), of the documented types: uint32 blocks for 32-bit counters and uint64 for 64-bit
ones, fp32 for the uniform and normal draws. The offsets' tags go with the result (it is a
function of them, as an arithmetic result is); the integer provenance that the overflow rule
reads (`grows`) does not, since a random draw does not grow with the problem size.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

import numpy as np
from argus.analyzers.errors import Unevaluable
from argus.analyzers.interp.opdecl import declare
from argus.analyzers.interp.ops_core import bshape, derive, light_float, to_val
from argus.analyzers.interp.values import Val

if TYPE_CHECKING:
    from argus.analyzers.interp.context import OpContext

_SEED = 7
MLU_PHILOX = "mlu_philox"  # the op Cambricon's libdevice `philox` is imported as (ops.py)


def _draw(shape: tuple[int, ...], salt: int) -> np.random.Generator:
    return np.random.default_rng((_SEED, salt, *shape))


def _random_like(vals: list[Val], data: np.ndarray, dtype: str) -> Val:
    out = derive(vals, data, dtype)
    out.grows = out.runtime = out.constexpr = False
    out.loaded_from = frozenset()
    out.lineage = frozenset()
    return out


def _counter_dtype(vals: list[Val]) -> str:
    wide = any(v.dtype in ("int64", "uint64") for v in vals)
    return "uint64" if wide else "uint32"


def _uints(vals: list[Val], shape: tuple[int, ...], count: int) -> list[Val]:
    dtype = _counter_dtype(vals)
    rng = _draw(shape, count)
    top = 2**32 if dtype == "uint32" else 2**62  # int64 storage: 62 random bits stand for 64
    return [_random_like(vals, rng.integers(0, top, size=shape, dtype=np.int64), dtype) for _ in range(count)]


def _philox(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> tuple[Val, ...]:
    """`tl.philox(seed, c0, c1, c2, c3, n_rounds)`: four uint blocks of the counters' shape."""
    names = ("seed", "c0", "c1", "c2", "c3")
    vals = [to_val(args[i] if i < len(args) else kwargs[n], node) for i, n in enumerate(names)]
    shape = bshape(*(v.shape for v in vals[1:]))
    return tuple(_uints(vals, shape, 4))


def _mlu_philox(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    """Cambricon's `libdevice.philox(n, seed_lo, seed_hi, c0, c1, c2, c3, n_rounds)` (flag-gems
    imports it as `_philox`): `n` rows of four uint32 draws, one row per counter `c0 + i`, so a
    `(n, 4)` block (its callers read `r[:, 0]` and reshape it to `4 * n` lanes)."""
    n = args[0] if args else kwargs.get("n")
    if isinstance(n, Val) and n.data.size == 1:
        n = int(n.data.reshape(-1)[0])
    if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
        raise Unevaluable("the row count of `libdevice.philox` (not a positive constant)", node)
    vals = [to_val(a, node) for a in args[1:7]]
    return _uints(vals, (n, 4), 1)[0]


def _offsets(args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> list[Val]:
    seed = to_val(args[0] if args else kwargs["seed"], node)
    offset = to_val(args[1] if len(args) > 1 else kwargs["offset"], node)
    return [seed, offset]


def _randint(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    vals = _offsets(args, kwargs, node)
    return _uints(vals, vals[1].shape, 1)[0]


def _randint4x(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> tuple[Val, ...]:
    vals = _offsets(args, kwargs, node)
    return tuple(_uints(vals, vals[1].shape, 4))


def _floats(
    interp: OpContext, vals: list[Val], shape: tuple[int, ...], count: int, normal: bool
) -> list[Val]:
    if interp.address_only:
        return [light_float(shape, "fp32") for _ in range(count)]
    rng = _draw(shape, 10 * count + normal)
    return [
        _random_like(vals, rng.standard_normal(shape) if normal else rng.random(shape), "fp32")
        for _ in range(count)
    ]


def _rand(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    vals = _offsets(args, kwargs, node)
    return _floats(interp, vals, vals[1].shape, 1, False)[0]


def _randn(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    vals = _offsets(args, kwargs, node)
    return _floats(interp, vals, vals[1].shape, 1, True)[0]


def _rand4x(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> tuple[Val, ...]:
    vals = _offsets(args, kwargs, node)
    return tuple(_floats(interp, vals, vals[1].shape, 4, False))


def _randn4x(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> tuple[Val, ...]:
    vals = _offsets(args, kwargs, node)
    return tuple(_floats(interp, vals, vals[1].shape, 4, True))


def _uint_to_uniform_float(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    """A random uint block to fp32 in [0, 1): the bits read as signed, folded onto the
    non-negative half, scaled (Triton's own formula, so the values agree lane by lane)."""
    x = to_val(args[0] if args else kwargs["x"], node)
    bits = 64 if x.dtype in ("int64", "uint64") else 32
    if interp.address_only:
        return light_float(x.shape, "fp32")
    raw = np.asarray(x.data, dtype=np.int64)
    if bits == 32:
        raw = raw & 0xFFFFFFFF
        raw = np.where(raw >= 2**31, raw - 2**32, raw)
    folded = np.where(raw < 0, -raw - 1, raw).astype(np.float64)
    scale = 4.6566127342e-10 if bits == 32 else 1.0842020432385337e-19
    return _random_like([x], folded * scale, "fp32")


def _pair_uniform_to_normal(
    interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST
) -> tuple[Val, Val]:
    """Box-Muller on two uniform blocks: two normal fp32 blocks of their shape."""
    u1, u2 = to_val(args[0], node), to_val(args[1], node)
    shape = bshape(u1.shape, u2.shape)
    if interp.address_only:
        return light_float(shape, "fp32"), light_float(shape, "fp32")
    with np.errstate(all="ignore"):
        a = np.maximum(np.broadcast_to(u1.data, shape), 1.0e-7)
        th = 6.283185307179586 * np.broadcast_to(u2.data, shape)
        r = np.sqrt(-2.0 * np.log(a))
    return _random_like([u1, u2], r * np.cos(th), "fp32"), _random_like([u1, u2], r * np.sin(th), "fp32")


OPS = declare(
    "random",
    {
        "philox": _philox,
        "randint": _randint,
        "randint4x": _randint4x,
        "rand": _rand,
        "randn": _randn,
        "rand4x": _rand4x,
        "randn4x": _randn4x,
        "uint_to_uniform_float": _uint_to_uniform_float,
        "pair_uniform_to_normal": _pair_uniform_to_normal,
        MLU_PHILOX: _mlu_philox,
    },
)

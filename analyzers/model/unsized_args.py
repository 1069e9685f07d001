"""A tensor argument whose host value the launcher evaluation could not follow.

`chunk_indices = prepare_chunk_indices(cu_seqlens, BT)`, `x = inp.view(dtype)`, a tensor out of
an undecided branch: the kernel still receives a tensor there, but the code does not establish
its shape. Making the whole launch a fallback for that (checking the kernel as if it had no
launch site) throws away everything the launcher does establish: the grid, the sizes, the
other tensors. Instead that one argument is a stand-in tensor whose extents are unstated
(`sized=False`): its bounds, coverage and races are not judged and its loads give no tags,
while the rest of the launch is judged as usual (issue 12, rule 1: nothing rests on a shape
the code does not give). The reason is kept for hover and `--show-assumptions`.
"""

from __future__ import annotations

from argus.analyzers.interp.values import TensorInfo

# elements of the stand-in's probe buffer: room for the addresses of any probe's programs
# (contents past it repeat the last element; bounds on it are never judged)
STAND_IN_ELEMENTS = 1 << 16

# launcher values that are no tensor at all: the launch itself is not understood
NOT_A_TENSOR = frozenset({"missing argument"})


def may_stand_in(what: str) -> bool:
    """Whether an argument the evaluator could not follow (`Opaque(what)`) may be replaced by
    an unsized tensor: any value the launcher computes, not an argument the call omits."""
    return what not in NOT_A_TENSOR


def unsized_tensor(index: int, param: str, what: str) -> TensorInfo:
    """The probe's view of a tensor argument of unknown shape, for the kernel parameter
    `param` (its launcher value is described by `what`, e.g. "prepare_chunk_indices")."""
    return TensorInfo(
        index,
        param,
        (STAND_IN_ELEMENTS,),
        (1,),
        (f"{param}.0",),
        "fp16?",
        sized=False,
        bounds_unjudged=f"the launcher's value for it ({what}) is not modelled, so its shape is unknown",
    )

"""A probe shrunk along the dimensions the code never states, so that it is small enough to run.

A dimension nothing in the launcher names or relates (binder_sizes.py: `anonymous`) is given
the largest size of the probe, so that the kernel's own bounds decide how much of it is read,
not a guess of its extent. A tensor with several such dimensions (fla's `log_linear_attn` and
`atk` buffers of rank 4, each axis 65) then passes the element cap of a probe, and the whole
kernel went unanalyzed (an AR001 "the ragged probe (17,850,625 elements in one tensor)").
Nothing about those dimensions is judged anyway (the tensor's bounds rest on its stated
extents only, binder_values.py), so the probe takes them smaller, as large as the cap allows
(never below the largest stated size's share): what the kernel is judged on, the stated
sizes, is unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from argus.analyzers.model.host_values import HostTensor

SHRINK_TO = 1 << 22  # elements of the largest tensor after shrinking (under the probe's cap of 2^23)
MIN_ANONYMOUS = 2


def shrunk_size(
    values: Iterable[Any], anonymous: set[str], root_of: Callable[[str], str], size: int
) -> int | None:
    """The size for every anonymous dimension that brings each tensor among `values` to at
    most SHRINK_TO elements; None when no tensor passes the cap, or shrinking cannot help
    (the stated dimensions alone pass it)."""
    best: int | None = None
    for t in values:
        if not isinstance(t, HostTensor) or math.prod(t.shape) <= SHRINK_TO:
            continue
        free = [i for i, s in enumerate(t.symbols) if root_of(s) in anonymous]
        if not free:
            continue
        stated = math.prod(x for i, x in enumerate(t.shape) if i not in free)
        room = SHRINK_TO // max(stated, 1)
        fit = int(room ** (1 / len(free)))
        while fit > 1 and fit ** len(free) > room:  # (a float root may round up)
            fit -= 1
        if fit < MIN_ANONYMOUS:
            return None
        best = fit if best is None else min(best, fit)
    return None if best is None or best >= size else best

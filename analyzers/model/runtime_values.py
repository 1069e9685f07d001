"""Values only the running program knows: a scalar read back from the device, a generator's state.

flag-gems' unique launchers size their last kernel by a count the previous kernels computed:
`out_size = tile_sum[-1].item() + 1`, `idx = idx[:out_size]`, then `num_tasks=out_size`. Its
random kernels take a seed and an offset that `philox_backend_seed_offset` reads from
`generator.get_state()`. No reading of the code gives these values, and no run of the launcher
without the device would either: they are not an unmodelled construct (AR001) but an unknown
the code states as such.

So the host evaluator keeps them as `RunTimeValue`, an `Opaque` that remembers what was read
(`tile_sum[-1].item()`) through the arithmetic, unpacking, indexing and number functions the
launcher applies (`+ 1`, `int(c0)`, `triton.next_power_of_2(n)`). Everything else stays as an
unknown is: a tensor sliced by it (`idx[:out_size]`) has no known shape (an unsized stand-in,
whose bounds are not judged), and a kernel parameter bounded by it leaves the tensors it bounds
unsized (binder_values.py's guessed bounds). The parameter itself gets a pick
(`runtime_pick_value`): where only data derives from it, the data pick of data_params.py as
before; otherwise a pick named in the probe's choices (`runtime_choice`), which the second
probe varies, so a finding that rests on its value is at most a hint (judge.py), and the kernel
carries no AR001 for it.
"""

from __future__ import annotations

import ast
from typing import Any

from argus.analyzers.model.host_values import Opaque

# tensor methods that copy a tensor's contents to the host: the number is what the device holds
DEVICE_READS = frozenset({"item", "tolist"})
# a random generator's state or seed (torch.Generator's methods)
GENERATOR_READS = frozenset({"get_state", "initial_seed", "seed"})
RUNTIME_READS = DEVICE_READS | GENERATOR_READS
# number functions whose result is unknown when an argument is: the read carries on through them
NUMBER_FUNCTIONS = frozenset({"int", "float", "abs", "round", "cdiv", "next_power_of_2", "ceil", "floor"})

RUNTIME_PICKS = (3, 5)  # a runtime parameter's pick: first probe, second probe
RUNTIME_CONSTEXPR_PICKS = (4, 8)  # a constexpr's (a tile size from the count: a power of two)


class RunTimeValue(Opaque):
    """An unknown the running program decides (see the module's docstring); `what` names the
    read (`tile_sum[-1].item()`)."""


def runtime_read(call: ast.Call, receiver: Any) -> RunTimeValue | None:
    """`t.item()`, `gen.get_state()`: the value read; None for any other call. `.item()` is a
    tensor's (or an array's) whatever the evaluator took the receiver for: a launcher parameter
    it bound as a size (`total` passed to no kernel) is a tensor when the code calls it so."""
    if not isinstance(call.func, ast.Attribute) or call.args or call.keywords:
        return None
    attr = call.func.attr
    if attr in DEVICE_READS and not isinstance(receiver, list | tuple | dict | str):
        return RunTimeValue(f"`{_text(call)}`, a value the device computes")
    if attr in GENERATOR_READS and isinstance(receiver, Opaque):
        return RunTimeValue(f"`{_text(call)}`, a random generator's state")
    return None


def carried(fname: str, values: list[Any]) -> RunTimeValue | None:
    """The run-time value a number function of `values` (`int(c0)`, `next_power_of_2(n)`)
    carries on; None where no argument is one or `fname` is not such a function."""
    if fname.rpartition(".")[2] not in NUMBER_FUNCTIONS:
        return None
    return first_runtime(values)


def first_runtime(values: list[Any]) -> RunTimeValue | None:
    return next((v for v in values if isinstance(v, RunTimeValue)), None)


def runtime_pick_value(constexpr: bool, second: bool) -> int:
    """The probe's value for a kernel parameter given a run-time value."""
    picks = RUNTIME_CONSTEXPR_PICKS if constexpr else RUNTIME_PICKS
    return picks[1 if second else 0]


def runtime_choice(param: str, value: RunTimeValue, picked: int) -> str:
    """The pick's name in a finding's sizes (ProbeLaunch.choices)."""
    return f"`{param}` ({value.what}, not known before the run) = {picked}"


def _text(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 60 else text[:57] + "..."

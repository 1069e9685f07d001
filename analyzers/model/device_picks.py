"""A count the launcher asks the device for: an unknown-but-positive number, picked and named.

fla-core splits rows over the multiprocessors: `NS = get_multiprocessor_count(x.device.index)`,
`BS = triton.cdiv(T, NS)`, `grid = (NS,)`, and the kernel walks rows `i_s * BS` to
`min((i_s + 1) * BS, T)`. The helper reads `triton.runtime.driver...get_device_properties`, which
the evaluator cannot run, so every value derived from it (the block `BS`, the grid) was unknown
and the kernel an AR001. The kernel is written to be right for every machine's count, so the
count is a pick like an autotune config the checker cannot read (binder_picks.py): the probe
takes DEVICE_COUNT programs' worth of count and names it ("`get_multiprocessor_count()` (the
device's count, not known here) = 4"), the second probe takes SECOND_DEVICE_COUNT, and a finding
only one of the two sees is at most a hint naming the pick (judge.py).

`min(count, T)` keeps the known side (host_calls.py, as for an unknown count before): the device
may have as many cores as rows, so the largest launch is one some machine makes, and a bug it
shows (rows walked twice) is not hidden behind a small pick, and a finding does not rest on a
count the launch dropped (it is not named). Only the count itself is marked
(DeviceCount); a value computed from it is a plain int.

The same holds for `x.itemsize` of a tensor whose dtype the caller chooses (flag-gems' radix
sorts: `num_bits = x.itemsize * 8`, `n_passes = cdiv(num_bits, k_bits)`): the launcher is
written for every dtype it accepts, so the probe takes CALLER_ITEMSIZES[0] bytes (fp32), the
second probe CALLER_ITEMSIZES[1] (fp16), each named (`caller_itemsize`).

Only a call of a function named as a device count (DEVICE_COUNT_QUERIES, by its last dotted
part) is picked; its arguments (a device index) are not read. Anything else the device says (a
shared-memory size, an architecture test) keeps its unknown and its note.
"""

from __future__ import annotations

DEVICE_COUNT = 4  # the first probe's count: small, and > 1 so that a split has several parts
SECOND_DEVICE_COUNT = 3  # the second probe's: not a divisor of the first, so tails move
CALLER_ITEMSIZES = (4, 2)  # bytes per element of a dtype the caller chooses: fp32, then fp16
DEVICE_COUNT_QUERIES = frozenset({"get_multiprocessor_count", "get_num_sms", "get_sm_count"})


class DeviceCount(int):
    """The picked count, told apart from other ints only by `min` (see above); `query` names
    the function asked, so that a count `min` drops is not named as a pick."""

    query: str

    def __new__(cls, value: int, query: str) -> DeviceCount:
        out = super().__new__(cls, value)
        out.query = query
        return out


def device_query(fname: str) -> bool:
    """Whether a call of `fname` asks the device how many cores (SMs, AI cores) it has."""
    return fname.rsplit(".", 1)[-1] in DEVICE_COUNT_QUERIES


def device_choice(fname: str, value: int) -> str:
    """The pick's name in a finding's sizes (ProbeLaunch.choices)."""
    return f"`{fname.rsplit('.', 1)[-1]}()` (the device's count, not known here) = {value}"


def caller_itemsize(second: bool) -> int:
    """The bytes per element a probe picks for a tensor whose dtype the caller chooses."""
    return CALLER_ITEMSIZES[1 if second else 0]


def itemsize_choice(text: str, value: int) -> str:
    """The pick's name in a finding's sizes (`arr.itemsize`)."""
    return f"`{text}` (the caller's dtype, not stated) = {value}"

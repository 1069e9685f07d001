"""Synthesized memory: what the kernel's tensors hold during one probe run.

Nothing is ever read from a real tensor. Floats are seeded normal noise per tensor. Integers
follow the checks the kernel makes on them (model/scan.py's IndexPolicy): ids below an upper
bound with the padding sentinel (a permutation of the valid ids when the table is long enough:
the routing contract), sentinels the kernel compares with, lengths (empty, one, several tiles),
a partition of the rows for a prefix-sum table (`cu_seqlens`), a work bound rounded to a tile,
ids around a window's start. Tables built to a contract are named in `contract_tables` (and
`partition_tensors`), so that writes through them are judged like any other.
"""

from __future__ import annotations

import threading

import numpy as np
from argus.analyzers.interp.values import TensorInfo
from argus.analyzers.model.launch import ProbeLaunch
from argus.analyzers.model.scan import KernelScan


class SynthesizedMemory:
    """The contents of every tensor argument of one probe, made on first read and kept."""

    def __init__(
        self,
        scan: KernelScan,
        launch: ProbeLaunch,
        int_tensors: set[str],
        contract_tables: set[int],
        partition_tensors: set[int],
    ) -> None:
        self.scan = scan
        self.launch = launch
        self.int_tensors = int_tensors  # tensors known to hold integers (shared with the run)
        self.contract_tables = contract_tables
        self.partition_tensors = partition_tensors
        self.float_cache: dict[int, np.ndarray] = {}
        self.int_cache: dict[int, np.ndarray] = {}

    def at(self, t: TensorInfo, offsets: np.ndarray) -> np.ndarray:
        """Synthesized contents at `offsets` (valid ones): random floats, or integers that honour
        the checks the kernel makes on them (see model/scan.py's IndexPolicy)."""
        if t.dtype.startswith("int") or t.name in self.int_tensors:
            return self.ints(t, offsets)
        arr = self.float_cache.get(t.index)
        if arr is None:
            arr = self.float_cache[t.index] = _random_floats(t)
        return np.take(arr, offsets, mode="clip")  # arr[clip(offsets, 0, len - 1)], one C call

    def ints(self, t: TensorInfo, offsets: np.ndarray) -> np.ndarray:
        pol = self.scan.policies.get(t.name)
        n = max(t.extent, 1) if t.sized else 1 << 12
        arr = self.int_cache.get(t.index)
        start = self.launch.args.get(pol.window_start) if pol is not None and pol.window_start else None
        if arr is None and isinstance(start, int) and not isinstance(start, bool):
            # ids around a window's start (`ids - vocab_start >= 0` checked): just below it,
            # at it and inside it, so that lanes pass the one-sided check
            arr = start + np.array([-1, 0, 1, 2], dtype=np.int64)[np.arange(n) % 4]
        if arr is None and pol is not None and pol.prefix and t.sized:
            arr = self.partition_offsets(n)
            self.contract_tables.add(t.index)  # a valid partition: writes through it are judged
            self.partition_tensors.add(t.index)
        if arr is None:
            if (
                pol is not None
                and pol.length
                and not pol.sentinels
                and pol.upper is None
                and not pol.work_bound
            ):
                # lengths: empty, one element, and a few tiles' worth, in an order that gives the
                # first and the last program different ones
                arr = np.array([0, 33, 1, 70, 17], dtype=np.int64)[np.arange(n) % 5]
            elif pol is not None and pol.work_bound and pol.upper is None:
                arr = np.full(n, self.work_bound(), dtype=np.int64)
            elif (
                pol is not None and pol.upper is not None and isinstance(self.launch.args.get(pol.upper), int)
            ):
                upper = int(self.launch.args[pol.upper])
                rng = np.random.default_rng(99 + t.index)
                ids = rng.permutation(max(upper, 0)).astype(np.int64)
                arr = np.full(n, upper, dtype=np.int64)
                arr[: min(n, len(ids))] = ids[: min(n, len(ids))]
                if pol.asserted and len(ids):
                    arr = ids[np.arange(n) % len(ids)]  # the kernel asserts the range: no padding
                if n == len(ids) or (n > len(ids) and not pol.asserted):
                    # every valid id once, as the routing contract promises: writes through
                    # these ids can be judged for coverage and races
                    self.contract_tables.add(t.index)
            else:
                base = np.arange(n, dtype=np.int64)
                sentinels = sorted(pol.sentinels) if pol is not None else []
                if pol is not None:
                    sentinels += [
                        int(self.launch.args[p])
                        for p in sorted(pol.sentinel_params)
                        if isinstance(self.launch.args.get(p), int)
                    ]
                if sentinels:
                    # cycle by the sum of coordinates, so that every row of a table (pages of a
                    # sequence) and every other block meets a sentinel early
                    cycle = np.array([0, *sentinels, 1], dtype=np.int64)
                    key = base
                    if len(t.shape) > 1:
                        # rows of the layout the launch passes (a stand-in one when the
                        # launcher does not state the extents: the strides follow it)
                        coords, inside = t.unravel(base)
                        key = np.where(inside, coords.sum(axis=-1), base)
                    arr = cycle[key % len(cycle)]
                else:
                    # no check on these values: small indices, valid for any dimension of 2+
                    arr = base % 3
            self.int_cache[t.index] = arr
        return np.take(arr, offsets, mode="clip")

    def partition_offsets(self, n: int) -> np.ndarray:
        """Contents of a prefix-sum table of n entries (`cu_seqlens`, expert starts): n - 1
        groups that partition the rows of the tensors they index, as the contract says. The
        first group spans half the rows and one more, the second is empty, the third has one
        row, and the last takes the rest. The rows are the first extent most tensor arguments
        share."""
        tensors = [
            v
            for v in self.launch.args.values()
            if isinstance(v, TensorInfo) and v.sized and v.shape and v.name not in self.int_tensors
        ]
        # dimensions the launcher names (`T, H, D = q.shape`) over ones sized by guess; a tie
        # goes to the smaller extent, inside which every candidate's rows lie
        named = [v.shape[0] for v in tensors if "." not in v.symbols[0]]
        firsts = named or [v.shape[0] for v in tensors]
        counts = {x: firsts.count(x) for x in firsts}
        total = max(counts, key=lambda x: (counts[x], -x)) if counts else 0
        groups = max(n - 1, 1)
        sizes = [0] * groups
        sizes[0] = min(total, total // 2 + 1)
        if groups >= 3:
            sizes[2] = min(1, total - sizes[0])
        sizes[-1] += total - sum(sizes)
        return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)[:n]

    def work_bound(self) -> int:
        """Contents of a loaded bound on the program's work (`num_tokens_post_padded`): the
        largest extent of the integer tensors the kernel indexes, rounded down to a tile, as the
        routing contract guarantees; without such a tensor, unbounded."""
        extents = [
            v.extent
            for v in self.launch.args.values()
            if isinstance(v, TensorInfo) and v.sized and len(v.shape) == 1 and v.name in self.int_tensors
        ]
        if not extents:
            return 1 << 20
        ext = max(extents)
        blocks = [
            int(v)
            for k, v in self.launch.args.items()
            if isinstance(v, int)
            and not isinstance(v, bool)
            and k not in self.launch.runtime
            and v > 1
            and v & (v - 1) == 0
            and v <= ext
        ]
        b = max(blocks) if blocks else 1
        return max(b, (ext // b) * b)


#: the random contents drawn so far, per tensor position: the longest draw of each seed (a draw
#: of n numbers is the first n of any longer draw of the same seed, so shorter ones are slices)
_DRAWN: dict[int, np.ndarray] = {}
MAX_DRAWN = 1 << 23  # elements kept over all positions (64 MB); past it the cache starts over
_DRAWN_LOCK = threading.Lock()


def _random_floats(t: TensorInfo) -> np.ndarray:
    """The float contents of tensor `t`: standard normal numbers seeded by its position, the same
    for every probe and restart of a kernel. Drawing them was a measurable part of each probe
    (about 3 ms per 65,536 numbers), so draws are kept (read-only) and sliced."""
    n = max(t.extent, 1)
    drawn = _DRAWN.get(t.index)
    if drawn is None or len(drawn) < n:
        drawn = np.random.default_rng(1234 + 17 * t.index).standard_normal(n)
        drawn.flags.writeable = False
        with _DRAWN_LOCK:  # the language server checks on more than one thread
            if sum(len(a) for a in _DRAWN.values()) + n > MAX_DRAWN:
                _DRAWN.clear()
            if n <= MAX_DRAWN:
                _DRAWN[t.index] = drawn
    return drawn[:n]

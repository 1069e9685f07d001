"""The per-kernel budget: how long one kernel's interpretation may take, and how large a tile.

Odd but legal code (a grid of 2**31 programs, a loop that runs for ever, a 16384 x 16384 tile)
must give AR001 for that kernel, never a hung CLI or a frozen server. The budget is enforced
cooperatively, not by a signal or a thread: the interpreter asks `over_time` between programs
and statements, and asks `check_elements` before it allocates a tile, so a check stops at a
point where nothing is half-built and the rest of the file is still checked.

The time limit is a setting (`[tool.argus] kernel-timeout`, `--kernel-timeout`, the editor's
`argus.kernelTimeout`); the caller sets it around a check with `kernel_timeout(seconds)`. It is
held in a context variable so that concurrent checks on other threads keep their own. The
element cap is Triton's own (`TRITON_MAX_TENSOR_NUMEL`): a larger tile does not compile, so
refusing it costs nothing a real kernel could need.
"""

from __future__ import annotations

import ast
import contextlib
import math
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

from argus.analyzers.errors import Unevaluable

DEFAULT_KERNEL_TIMEOUT = 10.0  # CPU seconds of interpretation per kernel
TRITON_MAX_NUMEL = 1 << 20  # Triton refuses a tensor of more elements (TRITON_MAX_TENSOR_NUMEL)

MAX_INT_BITS = 4096  # a host integer wider than this is no size, stride or grid: refused
MAX_SEQUENCE = 1 << 16  # `"a" * n`, `[0] * n`: longer results are refused before they are built


def oversized_result(op: ast.operator, a: Any, b: Any) -> bool:
    """Whether `a <op> b` would build a huge integer or sequence (`9**9**9**9`, `"a" * 2**33`):
    judged from the operands' sizes before anything is computed, so refusing costs nothing."""
    ints = isinstance(a, int) and isinstance(b, int)
    if isinstance(op, ast.Pow) and ints:
        return b > 0 and abs(a) > 1 and b * abs(a).bit_length() > MAX_INT_BITS
    if isinstance(op, ast.LShift) and ints:
        return b > MAX_INT_BITS
    if isinstance(op, ast.Mult):
        if ints:
            return abs(a).bit_length() + abs(b).bit_length() > MAX_INT_BITS
        for seq, n in ((a, b), (b, a)):
            if isinstance(seq, str | bytes | list | tuple) and isinstance(n, int):
                return len(seq) * max(n, 0) > MAX_SEQUENCE
    return False


_TIMEOUT: ContextVar[float] = ContextVar("argus_kernel_timeout", default=DEFAULT_KERNEL_TIMEOUT)


class BudgetExceeded(Unevaluable):
    """A kernel went past its time budget or asked for a tile larger than Triton allows."""


@contextlib.contextmanager
def kernel_timeout(seconds: float | None) -> Iterator[None]:
    """Checks inside this block give each kernel `seconds` of interpretation (None: the default)."""
    if seconds is not None and not (seconds > 0 and math.isfinite(seconds)):
        raise ValueError(f"the kernel timeout must be a positive number of seconds, got {seconds!r}")
    token = _TIMEOUT.set(DEFAULT_KERNEL_TIMEOUT if seconds is None else float(seconds))
    try:
        yield
    finally:
        _TIMEOUT.reset(token)


def current_timeout() -> float:
    return _TIMEOUT.get()


def kernel_deadline(memo: Any) -> tuple[float, float]:
    """(deadline, limit) for one kernel: its clock starts at its first probe and is shared by
    every later probe (`memo` is the kernel model's per-kernel `cached`)."""
    limit = current_timeout()
    return memo("budget_deadline", lambda: work_clock() + limit), limit


YIELD_EVERY_S = 0.002  # how long one thread interprets before it lets other threads run


class _Yields(threading.local):
    """Per thread: when it next yields (monotonic) and the CPU time it had used at its last yield
    point (class defaults: read as plain attributes on every statement, which `getattr(...,
    default)` made slower)."""

    next = 0.0
    spent = 0.0


_yields = _Yields()
_PAUSE: ContextVar[Callable[[], None] | None] = ContextVar("argus_pause", default=None)


@contextlib.contextmanager
def pausing(pause: Callable[[], None] | None) -> Iterator[None]:
    """Checks inside this block call `pause` at every yield point (every `YIELD_EVERY_S` of
    interpretation): the language server's way to stop its checks within 2 ms while a hover
    computes, rather than at the end of the program being interpreted (up to 60 ms on real
    kernels). `pause` returns at once when nothing interactive is waiting."""
    token = _PAUSE.set(pause)
    try:
        yield
    finally:
        _PAUSE.reset(token)


def over_time(deadline: float) -> bool:
    """Whether the kernel is past its deadline (on `work_clock`); also the interpreter's yield
    point.

    A thread that interprets holds the GIL nearly all the time. CPython hands the GIL to a waiting
    thread only after the switch interval, and restarts that wait whenever the GIL passes between
    two other threads; so with two checks running, the language server's message loop and hover
    thread waited seconds for each turn (a hover behind an over-budget kernel came back after its
    whole budget). `time.sleep(0)` releases the GIL and lets a waiter in at once: one system call
    per 2 ms of interpretation. It is made only where another thread exists: on a loaded machine
    the call also hands the core to another process for its time slice, which doubled the
    wall-clock time of a single-threaded CLI check for nothing. The CPU clock is read only at these
    yield points (it is a system call, the monotonic clock is not), so a kernel stops at most 2 ms
    past its budget."""
    state = _yields
    if time.monotonic() >= state.next:
        pause_now()
        if threading.active_count() > 1:  # (alone, there is no one to hand the GIL to)
            time.sleep(0)
        state.next = time.monotonic() + YIELD_EVERY_S
        state.spent = work_clock()
    return state.spent > deadline


def pause_now() -> None:
    """Call the pause `pausing` set, if any. The thread waits there without running, so the time
    it waits is not charged to the kernel (`work_clock` counts CPU time): a check that paused for
    hovers does not end in "budget exceeded" where one that did not would not."""
    pause = _PAUSE.get()
    if pause is not None:
        pause()


def work_clock() -> float:
    """This thread's CPU time, the clock kernel budgets are measured on. Wall-clock time made the
    verdict depend on the machine's load: with a dozen processes on two cores, kernels that need
    2 s of CPU ran past a 10 s budget and turned into AR001, so the same file gave different
    results on a busy CI runner than on a laptop."""
    return time.thread_time()


def time_exceeded(limit: float, node: Any = None) -> BudgetExceeded:
    """AR001 reads "<what> is not modelled: ...", so `what` names what was left unchecked."""
    return BudgetExceeded(
        f"budget exceeded: this kernel past {limit:g} s of analysis (`kernel-timeout` in "
        "[tool.argus] or --kernel-timeout allows more)",
        node,
    )


def check_elements(shape: tuple[int, ...], node: Any = None) -> None:
    """Refuse a tile of more elements than Triton allows, before anything is allocated."""
    count = math.prod(shape)
    if count > TRITON_MAX_NUMEL:
        dims = " x ".join(str(d) for d in shape)
        raise BudgetExceeded(
            f"budget exceeded: a tile of {dims} = {count:,} elements (over Triton's cap of "
            f"{TRITON_MAX_NUMEL:,} elements per tensor)",
            node,
        )


def check_combined(a: tuple[int, ...], b: tuple[int, ...], node: Any = None) -> None:
    """`check_elements` for the broadcast of two operands, before an elementwise op builds it.
    The common case (the product of the two sizes is within the cap) costs two products."""
    if math.prod(a) * math.prod(b) <= TRITON_MAX_NUMEL:
        return
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    check_elements(tuple(max(x, y) for x, y in zip(pa, pb, strict=True)), node)

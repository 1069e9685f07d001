"""Helpers shared by the reference kernels (imports torch and triton: never import from the core)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

import torch
import triton


def interpreting() -> bool:
    """True under TRITON_INTERPRET=1, where the kernels run on the CPU and small configs keep tests fast."""
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


_SMS: dict[int, int] = {}


def num_sms(device: torch.device) -> int:
    """Programs of a persistent grid: one per streaming multiprocessor (a few on the CPU interpreter)."""
    if device.type != "cuda":
        return 4
    idx = device.index if device.index is not None else torch.cuda.current_device()
    if idx not in _SMS:
        _SMS[idx] = torch.cuda.get_device_properties(idx).multi_processor_count
    return _SMS[idx]


def is_hopper(device: torch.device) -> bool:
    """sm90+: tensor descriptors go through the TMA engine; elsewhere they still work but gain nothing."""
    return device.type == "cuda" and torch.cuda.get_device_capability(device)[0] >= 9


def stream_key(device: torch.device) -> int:
    """The current stream's handle (0 on the CPU): workspaces cached per stream are never shared by two
    streams that could run at the same time."""
    if device.type != "cuda":
        return 0
    idx = device.index if device.index is not None else torch.cuda.current_device()
    return torch._C._cuda_getCurrentRawStream(idx)


# Global scratch for device-side tensor descriptors, one buffer per (size, stream): kernels on one
# stream run one after another, so they can share it, and a launch costs a dict lookup, not an allocation.
_SCRATCH: dict[tuple[int, int], torch.Tensor] = {}
_ALLOCATOR_SET = [False]


def _scratch(size: int, alignment: int, stream: object) -> torch.Tensor:
    key = (size, int(stream or 0))
    buf = _SCRATCH.get(key)
    if buf is None:
        buf = torch.empty(size, dtype=torch.int8, device="cuda")
        _SCRATCH[key] = buf
    return buf


def install_allocator(device: torch.device) -> None:
    """Device-side tensor descriptors (tl.make_tensor_descriptor) need a little global scratch."""
    if device.type == "cuda" and not _ALLOCATOR_SET[0]:
        triton.set_allocator(_scratch)
        _ALLOCATOR_SET[0] = True


class FastLaunch:
    """Launches an autotuned kernel with the config its autotuner already picked for one shape.

    The autotuner's per-call work (key building, config merge) and, once the kernel is compiled, the
    JIT's argument binding, specialization and cache lookup are skipped: the compiled kernel is launched
    directly. Only valid for calls whose integer arguments, strides and pointer alignment equal the ones
    it was built for: callers key their cache of FastLaunch objects on all of them (card launch-overhead).
    """

    __slots__ = ("jit", "grid", "kwargs", "tail", "runner", "compiled")
    direct = True  # cleared if this Triton's compiled-kernel launcher takes its arguments differently

    def __init__(self, autotuned: object, grid: Sequence[int], n_runtime: int, consts: dict,
                 config: triton.Config | None = None) -> None:
        # config: a pinned config (a tuned table's entry) instead of the one the autotuner picked.
        # autotuned: an Autotuner (its .fn is the JIT function) or a plain JIT function with a config.
        cfg = config if config is not None else autotuned.best_config
        self.jit = autotuned.fn if hasattr(autotuned, "configs") else autotuned
        self.grid = tuple(grid) + (1,) * (3 - len(grid))
        self.kwargs = {**consts, **cfg.all_kwargs()}
        names = self.jit.arg_names
        self.tail = tuple(self.kwargs[name] for name in names[n_runtime:])
        self.runner: Callable[..., None] | None = None
        self.compiled: object | None = None  # the compiled kernel once launched directly (DescLaunch reads it)

    def __call__(self, *args: object) -> None:
        if self.runner is not None:
            try:
                self.runner(*args, *self.tail)
                return
            except TypeError:  # the launcher rejected the arguments before launching: use the JIT path
                self.runner = None
                FastLaunch.direct = False
        compiled = self.jit[self.grid](*args, **self.kwargs)
        if FastLaunch.direct and compiled is not None and not interpreting() and hasattr(compiled, "launch_metadata"):
            self.runner = compiled[self.grid]
            self.compiled = compiled


def host_descriptors(block_shapes: tuple[list[int], ...]) -> object:
    """Host tensor descriptors for a plan's tensors: built once, then only their base tensor is swapped.

    A descriptor holds the base tensor, shape, strides and block shape; the plan fixes all but the base
    (its key holds the shapes, strides and 16-byte alignment), and the launcher reads the descriptor's
    fields when it launches, so re-pointing `base` is enough for a new tensor of that layout. Building
    fresh descriptors cost a `matmul` that allocates its output 17 us of Python a call on the H200
    (1024^3: 37.6 us against 20.0 with a reused output; the earlier cache by base pointers missed on
    every new output, benchmarks/results/kernels-h200-launch-probe.txt).
    """
    from triton.tools.tensor_descriptor import TensorDescriptor

    slots: list[tuple] = []

    def get(*tensors: torch.Tensor) -> tuple:
        if not slots:
            slots.append(tuple(TensorDescriptor(t, list(t.shape), [t.stride(0), 1], shape)
                               for t, shape in zip(tensors, block_shapes, strict=True)))
        else:
            for desc, t in zip(slots[0], tensors, strict=True):
                desc.base = t
        return slots[0]

    return get

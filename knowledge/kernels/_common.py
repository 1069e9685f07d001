"""Helpers shared by the reference kernels (imports torch and triton: never import from the core)."""

from __future__ import annotations

import os

import torch
import triton


def interpreting() -> bool:
    """True under TRITON_INTERPRET=1, where the kernels run on the CPU and small configs keep tests fast."""
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def num_sms(device: torch.device) -> int:
    """Programs of a persistent grid: one per streaming multiprocessor (a few on the CPU interpreter)."""
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return 4


def is_hopper(device: torch.device) -> bool:
    """sm90+: tensor descriptors go through the TMA engine; elsewhere they still work but gain nothing."""
    return device.type == "cuda" and torch.cuda.get_device_capability(device)[0] >= 9


def _scratch(size: int, alignment: int, stream: object) -> torch.Tensor:
    return torch.empty(size, dtype=torch.int8, device="cuda")


def install_allocator(device: torch.device) -> None:
    """Device-side tensor descriptors (tl.make_tensor_descriptor) need a little global scratch."""
    if device.type == "cuda":
        triton.set_allocator(_scratch)

"""DescLaunch (knowledge/kernels/_desc_launch.py) against a stand-in of Triton 3.6's launcher layout.

The direct path only runs on a GPU; here a fake compiled kernel carries the attributes and the closure
layout of Triton 3.6's CudaLauncher, so the test checks what the path hands the C launcher: the leading
arguments in order, each descriptor encoded once per base address, new addresses encoded on first use,
and the FastLaunch path wherever the layout differs.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
nv = pytest.importorskip("triton.backends.nvidia.driver")

from argus.knowledge.kernels import _common, _desc_launch  # noqa: E402
from argus.knowledge.kernels._desc_launch import DescLaunch  # noqa: E402


def _inner(launcher, tensordesc_indices, tensordesc_meta):
    def inner(*args):  # the shape of Triton 3.6's wrap_handle_tensordesc closure
        return launcher, tensordesc_indices, tensordesc_meta, args

    return inner


class _Run:
    def __init__(self, launched: list, indices: set) -> None:
        self.global_scratch_size = 0
        self.profile_scratch_size = 0
        self.launch_cooperative_grid = False
        self.launch_pdl = False
        self.launch = _inner(lambda *args: launched.append(args), indices, [{"id": 0}, {"id": 1}])


class _Compiled:
    function = "fn-handle"
    packed_metadata = "packed"
    launch_metadata = None

    def __init__(self, launched: list, runner_calls: list, indices: set) -> None:
        self.run = _Run(launched, indices)
        self.runner_calls = runner_calls

    def __getitem__(self, grid):
        return lambda *args: self.runner_calls.append(args)


class _Jit:
    arg_names = ["a_desc", "b_desc", "M", "BLOCK"]

    def __init__(self, compiled: _Compiled) -> None:
        self.compiled = compiled
        self.jit_calls: list = []

    def __getitem__(self, grid):
        def call(*args, **kwargs):
            self.jit_calls.append(args)
            return self.compiled

        return call


@pytest.fixture
def fake(monkeypatch):
    encoded: list = []

    def encode(arg, meta):
        encoded.append((arg.base.data_ptr(), meta["id"]))
        return [("map", arg.base.data_ptr(), meta["id"]), *arg.shape, *arg.strides]

    monkeypatch.setattr(nv, "_BASE_ARGS_FORMAT_LEN", 13, raising=False)
    monkeypatch.setattr(nv, "make_tensordesc_arg", encode)
    monkeypatch.setattr(_desc_launch, "_current_stream", lambda: 77)
    monkeypatch.setattr(_desc_launch, "hooks_idle", lambda: True)
    monkeypatch.setattr(_desc_launch, "interpreting", lambda: False)
    monkeypatch.setattr(_common, "interpreting", lambda: False)
    return encoded


def _make(indices: set = frozenset({0, 1})) -> tuple:
    launched: list = []
    runner_calls: list = []
    compiled = _Compiled(launched, runner_calls, set(indices))
    jit = _Jit(compiled)
    dl = DescLaunch(jit, (5,), ([16, 32], [32, 16]), 3, {}, triton.Config({"BLOCK": 64}))
    return dl, jit, launched, runner_calls


def test_direct_path_encodes_once_per_address(fake) -> None:
    dl, jit, launched, runner_calls = _make()
    a, b = torch.randn(48, 64, dtype=torch.float16), torch.randn(64, 40, dtype=torch.float16)
    dl((a, b), 48)
    assert len(jit.jit_calls) == 1 and dl.direct and not launched  # first call: compile through the JIT
    dl((a, b), 48)
    dl((a, b), 48)
    assert len(launched) == 2 and not runner_calls
    args = launched[0]
    assert args[:13] == (5, 1, 1, 77, "fn-handle", False, False, None, None, "packed", None, None, None)
    assert args[13] == ("map", a.data_ptr(), 0) and args[14:18] == (48, 64, 64, 1)
    assert args[18] == ("map", b.data_ptr(), 1) and args[-2:] == (48, 64)  # runtime M, then BLOCK
    assert fake == [(a.data_ptr(), 0), (b.data_ptr(), 1)]  # encoded once each over two launches
    a2 = torch.randn(48, 64, dtype=torch.float16)
    dl((a2, b), 48)
    assert fake[-1] == (a2.data_ptr(), 0) and len(fake) == 3
    assert launched[-1][13] == ("map", a2.data_ptr(), 0) and launched[-1][18] == ("map", b.data_ptr(), 1)


def test_other_launcher_layout_keeps_fastlaunch(fake) -> None:
    dl, jit, launched, runner_calls = _make(indices={0, 2})  # descriptors not leading: no direct path
    a, b = torch.randn(48, 64, dtype=torch.float16), torch.randn(64, 40, dtype=torch.float16)
    for _ in range(3):
        dl((a, b), 48)
    assert dl.direct is False and not launched and len(runner_calls) == 2 and not fake
    assert runner_calls[0][0].base is a and runner_calls[0][1].base is b

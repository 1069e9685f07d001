"""Work the checker does once instead of again (issue 12, checker speed): none of it may change a
finding. A probe launch that repeats an earlier one in all the interpreter reads is not run
again; random tensor contents are drawn once per seed and sliced; a launcher is parsed once."""

from __future__ import annotations

import numpy as np
from argus.analyzers import check_source, interpretation
from argus.analyzers.frontend.parse import parse
from argus.analyzers.interp.contents import _random_floats
from argus.analyzers.interp.values import TensorInfo
from argus.analyzers.kernel_setup import parse_kernel, set_up_kernel
from argus.analyzers.module_view import build_module_view
from argus.analyzers.tag_asserts import parse_assertions

# the first three configs differ only in launch options: the interpreter reads none of them
TUNED = b"""import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 64}, num_warps=2),
        triton.Config({"BLOCK": 64}, num_warps=4),
        triton.Config({"BLOCK": 64}, num_warps=8),
        triton.Config({"BLOCK": 32}, num_warps=4),
    ],
    key=["n"],
)
@triton.jit
def shift_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs + 1, mask=offs < n)
    tl.store(y_ptr + offs, x * 2.0, mask=offs < n)


def shift(x):
    n = x.numel()
    y = torch.empty_like(x)
    shift_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n)
    return y
"""


def _probe_run() -> interpretation.ProbeRun:
    view = build_module_view(TUNED, parse(TUNED))
    site = view.sites[0]
    func, smap = parse_kernel(view, site)
    setup = set_up_kernel(view, site, func, smap)
    asserts = parse_assertions(view.source, site.node.start_point[0], site.node.end_point[0])
    return interpretation.ProbeRun(setup, view.consts, asserts)


def test_a_config_that_differs_only_in_launch_options_is_not_interpreted_again() -> None:
    run = _probe_run()
    run.run()
    launches = [s.launch for s in run.plan() if s.launch is not None]
    sampled = [launch for launch in launches if launch.sampled]
    assert len(sampled) == 3, [(launch.kind, launch.config) for launch in launches]
    # the first config's probes, BLOCK=64 once more (num_warps=4 and 8 give one key), BLOCK=32
    assert len(run._interpreted) == len(launches) - 1


def test_skipping_the_repeated_launch_changes_no_finding(monkeypatch) -> None:
    reused = check_source(TUNED, "shift.py")
    assert any(f.code == "MB001" for f in reused), reused  # the +1 reads one past the end
    keys = iter(range(1 << 30))
    monkeypatch.setattr(interpretation, "_run_key", lambda launch: str(next(keys)))  # every run anew
    again = check_source(TUNED, "shift.py")
    assert [(f.code, f.span, f.message) for f in again] == [(f.code, f.span, f.message) for f in reused]


def test_random_contents_are_the_seeds_own_draw_whatever_was_drawn_before() -> None:
    def tensor(index: int, n: int) -> TensorInfo:
        return TensorInfo(index, f"t{index}", (n,), (1,), (f"N{index}",), "fp32")

    for n in (1000, 10, 5000, 1):  # longer, shorter (a slice), longer again, one element
        got = _random_floats(tensor(7, n))
        want = np.random.default_rng(1234 + 17 * 7).standard_normal(n)
        assert np.array_equal(got, want)
        assert not got.flags.writeable  # shared between probes: nobody may write into it


def test_a_launcher_is_parsed_once_for_every_reader() -> None:
    view = build_module_view(TUNED, parse(TUNED))
    first = view.launch_sites("shift_kernel")
    second = view.launch_sites("shift_kernel")
    assert first and [s.call for s in first] == [s.call for s in second]
    assert all(a.call is b.call for a, b in zip(first, second, strict=True))

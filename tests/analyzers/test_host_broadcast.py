"""`torch.broadcast_tensors` / `torch.broadcast_shapes` in a launcher (branch `bcast`, issue 12
coverage): torch's rule (align right, 1 stretches, other sizes equal) and nothing more. The
launcher-level cases (a bound launch, a seeded off-by-one found) are in test_host_tensor_ops.py."""

from __future__ import annotations

import ast

from argus.analyzers.model.host import HostEval
from argus.analyzers.model.host_broadcast import common_shape
from argus.analyzers.model.host_values import DimClasses, HostTensor, Opaque, SymInt


def _eval(src: str, recording: bool = True, **env: object) -> HostEval:
    ev = HostEval(DimClasses(), None if recording else {}, recording=recording)
    ev.env.update(env)
    ev.run_block(ast.parse(src).body)
    return ev


def _tensor(*shape: int, name: str) -> HostTensor:
    ev = HostEval(DimClasses(), None, recording=True)
    return ev.new_tensor([SymInt(s, f"{name}.{i}") if s != 1 else 1 for i, s in enumerate(shape)], "fp16", name, False)


def test_broadcast_tensors_align_right_and_stretch_ones_with_stride_zero() -> None:
    a, b = _tensor(4, 1, 6, name="a"), _tensor(5, 6, name="b")
    ev = _eval("x, y = torch.broadcast_tensors(a, b)\nn = x.numel()\n", a=a, b=b)
    x, y = ev.env["x"], ev.env["y"]
    assert x.shape == y.shape == [4, 5, 6]
    assert x.strides == [6, 0, 1]  # a's size-1 dimension stretched
    assert y.strides == [0, 6, 1]  # b has no leading dimension
    assert ev.env["n"] == 120
    assert ev.dims.find("a.2") == ev.dims.find("b.1")  # the sizes not 1 must be equal


def test_sizes_torch_rejects_are_not_modelled() -> None:
    # 4 against 5 at one position: torch raises; the evaluator does not invent a shape
    a, b = _tensor(4, name="a"), _tensor(5, name="b")
    ev = _eval("x, y = torch.broadcast_tensors(a, b)\n", recording=False, a=a, b=b)
    assert isinstance(ev.env["x"], Opaque)
    assert ev.dims.find("a.0") != ev.dims.find("b.0")


def test_broadcast_shapes_keeps_an_unknown_size_unknown_unless_a_known_one_decides() -> None:
    ev = _eval("s = torch.broadcast_shapes((u, 1), (3, 1), (1, 8))\nt = torch.broadcast_shapes((u,), (1,))\n",
               u=Opaque("u"))
    s, t = ev.env["s"], ev.env["t"]
    assert s[0] == 3 and s[1] == 8  # u is 1 or 3 (else torch raises): the result is 3 either way
    assert len(t) == 1 and isinstance(t[0], Opaque)  # u against 1: u, unknown


def test_common_shape_tells_which_sizes_must_be_equal() -> None:
    pairs: list[tuple[str, str]] = []
    out = common_shape([[SymInt(7, "p"), 1], [SymInt(7, "q"), SymInt(7, "r")]], lambda a, b: pairs.append((a.sym, b.sym)))
    assert out == [7, 7] and pairs == [("p", "q")]
    assert common_shape([[2], [3]], lambda a, b: None) is None
    assert common_shape([], lambda a, b: None) == []

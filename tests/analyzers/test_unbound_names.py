"""A name nothing binds, read where Triton always compiles it (or where a launcher always reads it
before its launch), is one AR002 at the name and the kernel is not interpreted
(analyzers/unbound_names.py); a name bound somewhere, or read only where a constexpr may leave it
out of the compile, keeps the full analysis."""

from __future__ import annotations

from argus.analyzers import check_source, interpretation

HEAD = """import torch
import triton
import triton.language as tl
{extra}

@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, FLIP: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
{body}
    tl.store(y_ptr + offs, x, mask=offs < n)


def copy(x):
    n = x.numel()
    y = torch.empty_like(x)
{launcher}
    copy_kernel[(triton.cdiv(n, 128),)](x, y, n, BLOCK=128, FLIP=False)
    return y
"""


def _check(body: str = "", launcher: str = "", extra: str = "") -> list:
    text = HEAD.format(body=body or "    x = x * 2.0", launcher=launcher or "    pass", extra=extra)
    return check_source(text)


def _ar002(findings: list) -> list:
    return [f for f in findings if f.code == "AR002"]


def test_a_name_typed_in_straight_line_kernel_code_is_one_ar002_at_the_name() -> None:
    found = _check(body="    x = x * scaleq")
    assert [f.code for f in found] == ["AR002"]
    (f,) = found
    assert "`scaleq` is bound nowhere" in f.message and "NameError" in f.message
    line = HEAD.format(body="    x = x * scaleq", launcher="    pass", extra="").split("\n")[
        f.span.start_point[0]
    ]
    assert line[f.span.start_point[1] : f.span.end_point[1]] == "scaleq"


def test_the_kernel_is_not_interpreted(monkeypatch) -> None:
    runs: list[int] = []
    real = interpretation.ProbeRun.run

    def counted(self):  # type: ignore[no-untyped-def]
        runs.append(1)
        return real(self)

    monkeypatch.setattr(interpretation.ProbeRun, "run", counted)
    _check(body="    x = x * scaleq")
    assert runs == []
    _check()
    assert runs, "the correct kernel is interpreted"


def test_a_correct_kernel_has_no_ar002() -> None:
    assert _ar002(_check()) == []


def test_names_bound_at_module_level_in_any_statement_are_bound() -> None:
    extra = """
try:
    from fast import scale_a
except ImportError:
    scale_a = 2.0
if torch.cuda.is_available():
    scale_b = 3.0
for scale_c in (1.0,):
    pass


def setup():
    global scale_d
    scale_d = 4.0
"""
    body = "    x = x * scale_a * scale_b * scale_c * scale_d"
    assert _ar002(_check(body=body, extra=extra)) == []


def test_a_star_import_or_a_dynamic_global_leaves_the_name_to_the_full_analysis() -> None:
    assert _ar002(_check(body="    x = x * scaleq", extra="from helpers import *")) == []
    assert _ar002(_check(body="    x = x * scaleq", extra="globals()['scaleq'] = 2.0")) == []


def test_a_name_bound_in_a_branch_is_bound() -> None:
    body = "    if FLIP:\n        s = 2.0\n    x = x * s"
    assert _ar002(_check(body=body)) == []


def test_a_name_only_a_constexpr_branch_the_launch_leaves_out_reads_keeps_the_full_analysis() -> None:
    for body in (  # the launch passes FLIP=False
        "    if FLIP:\n        x = x * scaleq",
        "    x = x * scaleq if FLIP else x",
        "    x = x * (FLIP and scaleq)",
        "    for i in tl.static_range(FLIP):\n        x = x * scaleq",
    ):
        assert _ar002(_check(body=body)) == [], body


def test_a_name_in_the_branch_the_launchs_constexprs_take_is_reported() -> None:
    for body in (
        "    if not FLIP:\n        x = x * scaleq",
        "    if FLIP:\n        pass\n    else:\n        x = x * scaleq",
        "    x = x if FLIP else x * scaleq",
        "    if BLOCK >= 64 and y_ptr is not None:\n        x = x * scaleq",
        "    for i in tl.static_range(2):\n        x = x * scaleq",
    ):
        found = _check(body=body)
        assert [f.code for f in found] == ["AR002"], body
        assert "for the launch at line" in found[0].message
    text = HEAD.format(body="    if FLIP:\n        x = x * scaleq", launcher="    pass", extra="")
    assert [f.code for f in check_source(text.replace("FLIP=False", "FLIP=True"))] == ["AR002"]


def test_both_arms_of_an_if_on_a_tensor_are_compiled() -> None:
    for body in (
        "    if tl.sum(x) > 0:\n        x = x * scaleq",
        "    pid, s = tl.program_id(0), 2\n    if pid == 0:\n        pass\n    else:\n        x = x * scaleq",
        "    for i in range(n):\n        if i > 3:\n            x = x * scaleq",
    ):
        found = _check(body=body)
        assert [f.code for f in found] == ["AR002"], body
        assert "for the launch" not in found[0].message, body
    # a name that holds a constexpr on one path is not a tensor: its `if` may compile one arm
    body = "    s = 1\n    if FLIP:\n        s = tl.load(x_ptr)\n    if s != 0:\n        x = x * scaleq"
    assert all("for the launch" in f.message for f in _ar002(_check(body=body)))


def test_a_name_in_a_loop_body_triton_always_emits_is_reported() -> None:
    for body in (
        "    for i in range(n):\n        x = x * scaleq",
        "    while n > 0:\n        x = x * scaleq",
    ):
        assert [f.code for f in _check(body=body)] == ["AR002"], body


def test_code_after_the_kernels_return_is_not_compiled() -> None:
    body = "    tl.store(y_ptr + offs, x, mask=offs < n)\n    return\n    x = x * scaleq"
    assert _ar002(_check(body=body)) == []


def test_a_launcher_name_read_before_the_launch_is_one_ar002_in_the_launcher() -> None:
    found = _check(launcher="    m = nq + 1")
    assert [f.code for f in found] == ["AR002"]
    assert "`nq` is bound nowhere" in found[0].message and "`copy` raises a NameError" in found[0].message


def test_a_launcher_name_read_after_the_launch_or_in_a_branch_keeps_the_analysis() -> None:
    text = HEAD.format(body="    x = x * 2.0", launcher="    pass", extra="")
    after = text.replace("    return y\n", "    z = yq\n    return y\n")
    assert _ar002(check_source(after)) == []
    for launcher in (
        "    if n > 4:\n        m = nq",
        "    try:\n        m = nq\n    except NameError:\n        m = 0",
    ):
        assert _ar002(_check(launcher=launcher)) == [], launcher


def test_a_launch_inside_a_block_is_reached_through_it() -> None:
    text = HEAD.format(body="    x = x * 2.0", launcher="    pass", extra="")
    nested = text.replace(
        "    copy_kernel[(triton.cdiv(n, 128),)]",
        "    with torch.cuda.device(x.device):\n        m = nq\n        copy_kernel[(triton.cdiv(n, 128),)]",
    )
    assert [f.code for f in check_source(nested)] == ["AR002"]


def test_a_kernel_made_inside_a_function_may_read_that_functions_names() -> None:
    text = """import triton
import triton.language as tl


def make(scale):
    @triton.jit
    def scaled(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * scale, mask=offs < n)

    return scaled
"""
    assert _ar002(check_source(text)) == []

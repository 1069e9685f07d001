"""Kernels whose helpers and launches live in other modules of their package (issue 12, item 2).

Each test builds a small package in memory (module name -> path -> text) and checks one of its
files with and without the `SourceSet`: alone, the imported helper is an AR001 and the kernel
has no launch; with the set, the helper is inlined, the other module's launch binds it, and the
findings say where both came from.
"""

from __future__ import annotations

import cross_module_package as shared
from argus.analyzers import KernelCache, check_source
from argus.analyzers.imports import absolute as _absolute
from argus.analyzers.project import SourceSet

EXT = shared.EXT.encode()
SEEDED_EXT = shared.EXT_SEEDED.encode()
KERNELS = shared.KERNELS.encode()
OPS = shared.OPS.encode()


def package(files: dict[str, bytes]) -> tuple[SourceSet, dict[str, bytes]]:
    """`files` by path under /pkg-root (e.g. "pkg/sub/ops.py"): the set and the texts by path."""
    texts = {f"/pkg-root/{rel}": text for rel, text in files.items()}
    modules = {}
    for path in texts:
        parts = path[len("/pkg-root/") : -3].split("/")
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return SourceSet(modules, texts.get, lambda p: p[len("/pkg-root/") :]), texts


def base_files(**over: bytes) -> dict[str, bytes]:
    files = {rel: text.encode() for rel, text in shared.package_files(nested=True).items()}
    files.update({k.replace("__", "/") + ".py": v for k, v in over.items()})
    return files


def check(files: dict[str, bytes], rel: str, with_project: bool = True, cache=None):
    project, texts = package(files)
    path = f"/pkg-root/{rel}"
    return check_source(texts[path], path, project=project if with_project else None, cache=cache)


def codes(findings) -> list[tuple[str, int]]:
    return sorted((f.code, f.span.line) for f in findings)


def test_imported_helpers_are_inlined_and_the_other_modules_launch_binds() -> None:
    alone = check(base_files(), "pkg/sub/kernels.py", with_project=False)
    assert [f.code for f in alone] == ["AR001"] and "`tle`" in alone[0].message
    assert check(base_files(), "pkg/sub/kernels.py") == []


def test_a_bug_inside_another_modules_helper_is_reported_at_the_call() -> None:
    ext = SEEDED_EXT
    found = check(base_files(pkg__ext=ext), "pkg/sub/kernels.py")
    oob = [f for f in found if f.code == "MB001"]
    assert [f.span.line for f in oob] == [12]  # the `load_row(...)` call in kernels.py
    assert "inside `load_row` at pkg/ext.py:11" in oob[0].message
    assert oob[0].fix is None  # an edit of the call would not fix the helper
    assert (
        oob[0].witness is not None
        and oob[0].witness["launch"] == "bound from the launch at pkg/sub/ops.py:10"
    )


def test_a_launch_in_another_module_is_named_in_the_findings() -> None:
    ops = OPS.replace(b"(triton.cdiv(n, 128),)", b"(n // 128,)")  # the ragged tail is never copied
    found = check(base_files(pkg__sub__ops=ops), "pkg/sub/kernels.py")
    gr = [f for f in found if f.code == "GR001"]
    assert gr and gr[0].witness["launch"] == "bound from the launch at pkg/sub/ops.py:10"
    # alone, the kernel has no launch: coverage is not judged
    assert not [
        f for f in check(base_files(pkg__sub__ops=ops), "pkg/sub/kernels.py", False) if f.code == "GR001"
    ]


def test_a_same_named_kernel_launched_elsewhere_is_not_this_one() -> None:
    # other.py launches its own `copy_kernel` (it imports nothing from kernels.py): not a launch of ours
    other = OPS.replace(b"from .kernels import copy_kernel", b"from .elsewhere import copy_kernel").replace(
        b"(triton.cdiv(n, 128),)", b"(n // 128,)"
    )
    files = base_files(pkg__sub__ops=b"import torch\n", pkg__sub__other=other)
    found = check(files, "pkg/sub/kernels.py")
    assert not [f for f in found if f.code == "GR001"]
    assert all(f.witness is None or "launch" not in f.witness for f in found)


def test_the_first_launch_that_binds_is_used() -> None:
    unbindable = OPS.replace(b"def copy(x):", b"def copy(*xs):\n    x = xs[0]").replace(
        b"copy_kernel[(triton.cdiv(n, 128),)](x, y, n, BLOCK=128)", b"copy_kernel[grid_of(x)](*xs)"
    )
    ragged = OPS.replace(b"(triton.cdiv(n, 128),)", b"(n // 128,)")
    files = base_files(pkg__sub__a_ops=unbindable, pkg__sub__b_ops=ragged, pkg__sub__ops=b"")
    found = check(files, "pkg/sub/kernels.py")
    gr = [f for f in found if f.code == "GR001"]
    assert gr and gr[0].witness["launch"].startswith("bound from the launch at pkg/sub/b_ops.py:")


def test_reexport_through_init_and_import_as() -> None:
    init = b"from .ext import load_row\nfrom .ext import program_id as pid_of\n"
    kernels = KERNELS.replace(b"from pkg import ext as tle\n", b"import pkg.ext as tle\n").replace(
        b"from ..ext import load_row", b"from .. import load_row"
    )
    files = base_files(pkg____init__=init, pkg__sub__kernels=kernels)
    files["pkg/__init__.py"] = init
    assert check(files, "pkg/sub/kernels.py") == []


def test_an_edit_of_the_helper_module_rechecks_the_kernel() -> None:
    cache = KernelCache()
    assert check(base_files(), "pkg/sub/kernels.py", cache=cache) == []
    misses = cache.misses
    assert check(base_files(), "pkg/sub/kernels.py", cache=cache) == []
    assert cache.misses == misses  # nothing changed: the cached findings
    ext = SEEDED_EXT
    assert "MB001" in {f.code for f in check(base_files(pkg__ext=ext), "pkg/sub/kernels.py", cache=cache)}
    ops = OPS.replace(b"(triton.cdiv(n, 128),)", b"(n // 128,)")
    assert "GR001" in {
        f.code for f in check(base_files(pkg__sub__ops=ops), "pkg/sub/kernels.py", cache=cache)
    }


def test_a_module_outside_the_set_stays_unresolved() -> None:
    files = base_files()
    del files["pkg/ext.py"]
    found = check(files, "pkg/sub/kernels.py")
    assert [f.code for f in found] == ["AR001"]


def test_relative_imports_are_made_absolute() -> None:
    assert _absolute("ext", 1, "pkg.sub") == "pkg.sub.ext"
    assert _absolute("ext", 2, "pkg.sub") == "pkg.ext"
    assert _absolute(None, 2, "pkg.sub") == "pkg"
    assert _absolute("x", 3, "pkg.sub") is None  # above the top package
    assert _absolute("a.b", 0, "pkg") == "a.b"


TRITON_ALIASES = b"""import triton
import triton.language as tl
import triton.language.extra.libdevice as tldevice
from triton.language.math import rsqrt


@triton.jit
def norm_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.store(y_ptr + offs, tldevice.tanh(rsqrt(x)), mask=offs < n)


def norm(x, y):
    n = x.numel()
    norm_kernel[(triton.cdiv(n, 128),)](x, y, n, BLOCK=128)
"""


def test_names_bound_to_tritons_own_modules_and_functions() -> None:
    # `tldevice.tanh` and `rsqrt` are Triton's: read as `libdevice.tanh` and `tl.rsqrt`
    assert check_source(TRITON_ALIASES, "k.py") == []
    shadowed = TRITON_ALIASES.replace(b"    x = tl.load", b"    rsqrt = 2\n    x = tl.load")
    assert [f.code for f in check_source(shadowed, "k.py")] == ["AR001"]  # a local named so is the local

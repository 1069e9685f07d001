"""Trees kept between checks of one document (analyzers/snippet_memo.py; issue 13): a kernel,
a jit helper, a launcher or a host function whose text did not change is the same tree in the
next check, so what the binder, the scan and the unbound-name rule keep on it carries over; any
change to its bytes, its row or (for jit code) the file's imports gives a new tree; and a check
that reuses trees finds exactly what a cold check finds."""

from __future__ import annotations

from pathlib import Path

import pytest
from argus.analyzers import KernelCache, check_source
from argus.analyzers.frontend.parse import parse
from argus.analyzers.module_view import build_module_view
from argus.analyzers.snippet_memo import SnippetMemo

REPO = Path(__file__).resolve().parents[2]

MODULE = b"""import torch
import triton
import triton.language as tl


@triton.jit
def scale(x, f):
    return x * f


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, scale(x, 2.0), mask=offs < n)


def launch(x):
    y = torch.empty_like(x)
    n = x.numel()
    scale_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)
    return y
"""


def _view(source: bytes, memo: SnippetMemo):
    view = build_module_view(source, parse(source))
    view.snippets = memo
    return view


def _kernel_tree(source: bytes, memo: SnippetMemo):
    view = _view(source, memo)
    site = next(s for s in view.sites if s.name == "scale_kernel")
    return view.jit_function(site.node)


def test_an_unchanged_kernel_is_the_same_tree_with_a_map_over_the_new_text() -> None:
    memo = SnippetMemo()
    tree, _ = _kernel_tree(MODULE, memo)
    launcher_edit = MODULE.replace(b"n = x.numel()", b"n = x.numel()  # elements")
    again, smap = _kernel_tree(launcher_edit, memo)
    assert again is tree and smap.source == launcher_edit


def test_a_changed_kernel_a_moved_kernel_or_new_imports_give_a_new_tree() -> None:
    memo = SnippetMemo()
    tree, _ = _kernel_tree(MODULE, memo)
    edited = MODULE.replace(b"mask=offs < n)\n    tl.store", b"mask=offs < n, other=0.0)\n    tl.store")
    moved = MODULE.replace(b"import torch\n", b"import torch\n\n")
    imports = MODULE.replace(b"import torch\n", b"import torch\nfrom triton.language.math import rsqrt\n")
    for text in (edited, moved, imports):
        other, smap = _kernel_tree(text, memo)
        assert other is not tree
        assert smap.span(other).start_byte == text.index(b"def scale_kernel")


def test_a_launcher_and_a_helper_keep_their_trees_over_a_kernel_edit() -> None:
    memo = SnippetMemo()
    view = _view(MODULE, memo)
    site = next(s for s in view.sites if s.name == "scale_kernel")
    launcher = next(iter(view.parsed_launchers("scale_kernel")))[1]
    helper = view.helpers(site)["scale"].func
    edited = MODULE.replace(b"scale(x, 2.0)", b"scale(x, 3.0)")
    view2 = _view(edited, memo)
    site2 = next(s for s in view2.sites if s.name == "scale_kernel")
    assert next(iter(view2.parsed_launchers("scale_kernel")))[1] is launcher
    assert view2.helpers(site2)["scale"].func is helper


@pytest.mark.parametrize(
    "path", sorted((REPO / "tests" / "corpus_own").glob("*.py"))[:10], ids=lambda p: p.name
)
def test_checks_that_reuse_trees_find_what_cold_checks_find(path: Path) -> None:
    """Each line of launcher or kernel code typed at (a letter), then undone, checked with the
    document's cache (trees kept) and with a fresh one."""
    text = path.read_text()
    lines = text.split("\n")
    cache = KernelCache()
    check_source(text, str(path), cache=cache)
    rows = [i for i, line in enumerate(lines) if "=" in line and not line.lstrip().startswith("#")][:12]
    for row in rows:
        edited = "\n".join([*lines[:row], lines[row] + "q", *lines[row + 1 :]])
        for version in (edited, text):
            kept = check_source(version, str(path), cache=cache)
            cold = check_source(version, str(path), cache=KernelCache())
            assert [(f.code, f.span, f.message) for f in kept] == [(f.code, f.span, f.message) for f in cold]

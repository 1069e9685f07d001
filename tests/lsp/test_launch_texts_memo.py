"""The launchers' key texts kept between checks of one document (issue 13: an edit that reused
every kernel's findings spent three quarters of its time gathering the launchers' host functions
again). What is observed: the memo's counters on a real `KernelCache`, and that every cached
check equals a cold one of the same text, also after edits to each thing a launcher's functions
were gathered from (a helper of the file, a module constant, the imports, a helper of another
module of the package) — there the kernel's result changes, so a stale memo would show."""

from __future__ import annotations

from argus.analyzers import KernelCache, check_source
from argus.analyzers.project import SourceSet

KERNEL = """import torch
import triton
import triton.language as tl
{imports}

ROW_CAP = {cap}


@triton.jit
def rows_kernel(x_ptr, y_ptr, stride_x, stride_y, D, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < D
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * stride_y + cols, x * 2.0, mask=mask)
{helpers}

def double_rows(x):
    T, D = x.shape
    y = torch.empty_like(x)
    BLOCK, num_warps = calculate_settings(D)
    rows_kernel[(T,)](x, y, x.stride(0), y.stride(0), D, BLOCK=min(BLOCK, ROW_CAP), num_warps=num_warps)
    return y
"""

SETTINGS = """

def calculate_settings(n):
    BLOCK = triton.next_power_of_2(n)
    return BLOCK, 4
"""

SMALL = SETTINGS.replace("BLOCK = triton.next_power_of_2(n)", "BLOCK = 2")

PATH = "/pkg-root/pkg/ops.py"


def source(cap: str = "triton.next_power_of_2(65536)", helpers: str = SETTINGS, imports: str = "") -> str:
    return KERNEL.format(cap=cap, helpers=helpers, imports=imports)


def codes(findings: list) -> set[str]:
    return {f.code for f in findings}


def checked(text: str, cache: KernelCache, project: SourceSet | None = None) -> tuple[list, int, int]:
    """The findings through `cache` (which must equal a cold check's), and the memo's hits and
    misses the check added."""
    hits, misses = cache.launch_texts.hits, cache.launch_texts.misses
    found = check_source(text, PATH, cache=cache, project=project)
    assert found == check_source(text, PATH, project=project)
    return found, cache.launch_texts.hits - hits, cache.launch_texts.misses - misses


def test_an_edit_in_the_kernel_reuses_the_launchers_texts() -> None:
    cache = KernelCache()
    checked(source(), cache)
    edited = source().replace("x * 2.0", "x * 3.0")
    _, hits, misses = checked(edited, cache)
    assert (hits, misses) == (1, 0)


def test_blanks_typed_in_the_launcher_reuse_its_texts() -> None:
    cache = KernelCache()
    checked(source(), cache)
    spaced = source().replace("    y = torch.empty_like(x)\n", "    y = torch.empty_like(x)  \n\n")
    assert spaced != source()
    _, hits, misses = checked(spaced, cache)  # (a trailing blank and a blank line)
    assert (hits, misses) == (1, 0)


def test_typing_in_the_docstring_of_a_helper_the_launcher_calls_re_analyzes_nothing() -> None:
    documented = SETTINGS.replace("def calculate_settings(n):\n", 'def calculate_settings(n):\n    """Tile.\n\n    n: width"""\n')
    cache = KernelCache()
    found, _, _ = checked(source(helpers=documented), cache)
    misses = cache.misses
    edited = source(helpers=documented.replace("n: width", "n: the row width (elements)\n    "))
    again, _, _ = checked(edited, cache)
    assert cache.misses == misses  # the kernel's key holds the helper without its docstring
    assert [f.code for f in again] == [f.code for f in found]
    small, _, _ = checked(source(helpers=documented.replace("BLOCK = triton.next_power_of_2(n)", "BLOCK = 2")), cache)
    assert cache.misses == misses + 1 and "GR001" in codes(small)  # its code still counts


def test_an_edit_of_a_helper_the_launcher_calls_gathers_again() -> None:
    cache = KernelCache()
    found, _, _ = checked(source(), cache)
    assert "GR001" not in codes(found)
    small = source(helpers=SMALL)
    found, hits, misses = checked(small, cache)
    assert (hits, misses) == (0, 1)
    assert "GR001" in codes(found)  # a 2-wide tile over rows of D: the result did change


def test_undoing_an_edit_of_a_helper_finds_the_launchers_first_texts_again() -> None:
    cache = KernelCache()
    checked(source(), cache)
    checked(source(helpers=SMALL), cache)  # the launcher's text is the same, what it calls not
    found, hits, misses = checked(source(), cache)  # undone: the first answer still holds
    assert (hits, misses) == (1, 0)
    assert "GR001" not in codes(found)
    found, hits, misses = checked(source(helpers=SMALL), cache)  # and the edit's answer too
    assert (hits, misses) == (1, 0)
    assert "GR001" in codes(found)


def test_the_memo_keeps_a_few_answers_per_launcher_text() -> None:
    cache = KernelCache()
    cache.launch_texts.variants = 2
    texts = [source(helpers=SETTINGS.replace("return BLOCK, 4", f"return BLOCK, {w}")) for w in (1, 2, 4)]
    for text in texts:
        checked(text, cache)
    _, hits, misses = checked(texts[0], cache)  # the oldest of three answers is gone
    assert (hits, misses) == (0, 1)
    _, hits, misses = checked(texts[2], cache)
    assert (hits, misses) == (1, 0)


def test_an_edit_of_a_constant_the_launcher_reads_gathers_again() -> None:
    cache = KernelCache()
    checked(source(), cache)
    # ROW_CAP is no literal (not in the constants' key text): only the memo's record sees it
    found, hits, misses = checked(source(cap="triton.next_power_of_2(2)"), cache)
    assert (hits, misses) == (0, 1)
    assert "GR001" in codes(found)


def test_a_definition_appearing_for_a_name_looked_up_gathers_again() -> None:
    cache = KernelCache()
    found, _, _ = checked(source(helpers=""), cache)  # calculate_settings is not defined
    assert "GR001" not in codes(found)
    found, hits, misses = checked(source(helpers=SMALL), cache)
    assert (hits, misses) == (0, 1)
    assert "GR001" in codes(found)


def _package(utils: bytes, ops: str) -> SourceSet:
    texts = {
        "/pkg-root/pkg/__init__.py": b"",
        "/pkg-root/pkg/utils.py": utils,
        "/pkg-root/pkg/ops.py": ops.encode(),
    }
    modules = {
        "pkg": "/pkg-root/pkg/__init__.py",
        "pkg.utils": "/pkg-root/pkg/utils.py",
        "pkg.ops": "/pkg-root/pkg/ops.py",
    }
    return SourceSet(modules, texts.get, lambda p: p[len("/pkg-root/") :])


def test_an_edit_of_another_modules_helper_gathers_again() -> None:
    utils = ("import triton\n" + SETTINGS).encode()
    ops = source(helpers="", imports="from .utils import calculate_settings")
    cache = KernelCache()
    found, _, _ = checked(ops, cache, _package(utils, ops))
    assert "GR001" not in codes(found) and not any(f.code == "AR001" for f in found)
    kernel_edit = ops.replace("x * 2.0", "x * 3.0")
    _, hits, misses = checked(kernel_edit, cache, _package(utils, kernel_edit))
    assert (hits, misses) == (1, 0)
    small = utils.replace(b"BLOCK = triton.next_power_of_2(n)", b"BLOCK = 2")
    found, hits, misses = checked(kernel_edit, cache, _package(small, kernel_edit))
    assert (hits, misses) == (0, 1)
    assert "GR001" in codes(found)


def test_an_edit_of_the_imports_gathers_again() -> None:
    utils = ("import triton\n" + SETTINGS + SMALL.replace("calculate_settings", "small_settings")).encode()
    ops = source(helpers="", imports="from .utils import calculate_settings")
    cache = KernelCache()
    found, _, _ = checked(ops, cache, _package(utils, ops))
    assert "GR001" not in codes(found)
    other = ops.replace("import calculate_settings", "import small_settings as calculate_settings")
    found, hits, misses = checked(other, cache, _package(utils, other))
    assert (hits, misses) == (0, 1)
    assert "GR001" in codes(found)


def test_an_edit_of_a_module_a_constant_comes_from_gathers_again() -> None:
    consts = b"import triton\nCAP = triton.next_power_of_2(65536)\n"
    ops = source(cap="CAP", imports="from .utils import CAP") + SETTINGS
    cache = KernelCache()
    found, _, _ = checked(ops, cache, _package(consts, ops))
    assert "GR001" not in codes(found)
    found, hits, misses = checked(ops, cache, _package(consts.replace(b"65536", b"2"), ops))
    assert (hits, misses) == (0, 1)
    assert "GR001" in codes(found)


def test_each_jobs_view_of_the_cache_shares_the_documents_memo() -> None:
    # with checks on the server's threads (checkProcesses 0) every job wraps the document's cache
    import threading

    from argus_lsp.features.check_jobs import CheckpointCache

    inner = KernelCache()
    check_source(source(), PATH, cache=CheckpointCache(inner, threading.Event()))
    edited = source().replace("x * 2.0", "x * 3.0")
    found = check_source(edited, PATH, cache=CheckpointCache(inner, threading.Event()))
    assert (inner.launch_texts.hits, inner.launch_texts.misses) == (1, 1)
    assert found == check_source(edited, PATH)

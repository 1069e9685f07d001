"""Reproductions of the real bugs the real-world triage found, run under Triton's CPU interpreter.

    TRITON_INTERPRET=1 python benchmarks/realworld_repro.py [--dir benchmarks/.realworld]

Needs torch and triton (the dev extras) and the packages unpacked by `realworld.py`. The kernels
are not copied here: each one is read from the downloaded package's own file (its source text,
found by name with `ast`) and compiled by `triton.jit` as the package would, then launched with
inputs that make the bug visible. Each case prints what a correct kernel gives, what this one
gives, and exits 1 if any case shows the bug (so a fixed upstream version would exit 0).
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def load_jit_function(path: Path, name: str, extra: dict | None = None):
    """The `@triton.jit` function `name` of `path`, compiled from the file's own text.

    `extra` adds names the kernel's module imports (flag-gems' `tle`, its language extension,
    whose `program_id` is Triton's)."""
    import triton
    import triton.language as tl

    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    # from the `@triton.jit` decorator on: the package's own wrappers above it (autotune with
    # its device configs, `libentry`) are not needed to run the kernel once
    jit = [d for d in node.decorator_list if ast.unparse(d).startswith(("triton.jit", "jit"))]
    start = (jit[0].lineno if jit else node.lineno) - 1
    text = "\n".join(source.splitlines()[start : node.end_lineno])
    # triton.jit reads the function's source again through `inspect`, which needs a file: write
    # the extracted text to a scratch module in a temporary folder.
    scratch = Path(tempfile.mkdtemp(prefix="argus-repro-")) / f"_argus_repro_{name}.py"
    scratch.write_text("import triton\nimport triton.language as tl\n\n\n" + text + "\n", encoding="utf-8")
    namespace: dict = {"triton": triton, "tl": tl, "__name__": f"_argus_repro_{name}", **(extra or {})}
    exec(compile(scratch.read_text(), str(scratch), "exec"), namespace)  # noqa: S102 - the package's own kernel
    return namespace[name]


def poly_norm_npu_backward_dw(root: Path) -> bool:
    """liger-kernel 0.8.5, ops/backends/_ascend/ops/poly_norm.py, `_poly_norm_backward_kernel_npu`.

    The launcher runs min(num_cores, n_rows) programs over a grid-stride loop of rows and
    expects dW and dB summed over all rows ("column blocking with atomic operations"), but each
    program ends with a plain `tl.store` of its own partial sums: the last program to finish
    wins, and dW/dB hold the sum over one program's rows only (GR002 at the four stores)."""
    import torch

    kernel = load_jit_function(
        root / "liger_kernel/ops/backends/_ascend/ops/poly_norm.py", "_poly_norm_backward_kernel_npu"
    )
    torch.manual_seed(0)
    n_rows, n_cols, block = 8, 2304, 1024  # n_cols > 2048: the launcher picks this kernel
    x = torch.randn(n_rows, n_cols)
    dy = torch.randn(n_rows, n_cols)
    w = torch.tensor([0.5, 0.25, 1.0])
    rstd = torch.rand(n_rows, 3) + 0.5  # columns: rstd of x^3, x^2, x (as the forward saves them)

    def run(grid: int) -> tuple[torch.Tensor, torch.Tensor]:
        dx = torch.zeros_like(dy)
        dw = torch.zeros(3)
        db = torch.zeros(1)
        kernel[(grid,)](
            dy, dy.stride(0), dx, dx.stride(0), x, x.stride(0), w, rstd, rstd.stride(0), dw, db,
            n_rows, n_cols, BLOCK_SIZE=block,
        )  # fmt: skip
        return dw, db

    expect_dw = torch.stack([(rstd[:, p, None] * dy * x ** (3 - p)).sum() for p in range(3)])
    expect_db = dy.sum()
    one_dw, one_db = run(1)
    four_dw, four_db = run(4)
    print("poly_norm NPU backward, n_rows=8 n_cols=2304 BLOCK_SIZE=1024")
    print(f"  expected dW {expect_dw.tolist()}  dB {expect_db.item():.4f}")
    print(f"  grid (1,)  dW {one_dw.tolist()}  dB {one_db.item():.4f}")
    print(f"  grid (4,)  dW {four_dw.tolist()}  dB {four_db.item():.4f}  (the launcher's grid when 4 cores)")
    one_ok = torch.allclose(one_dw, expect_dw, rtol=1e-4, atol=1e-4)
    four_ok = torch.allclose(four_dw, expect_dw, rtol=1e-4, atol=1e-4)
    print(f"  grid 1 matches: {one_ok}; grid 4 matches: {four_ok}")
    return one_ok and not four_ok


def nll_ignore_index_read(root: Path) -> bool:
    """flag-gems 5.0.2, runtime/backend/_cambricon/fused/cross_entropy_loss.py,
    `nllloss_without_weight_kernel`.

    The kernel computes `ignore_mask` for targets equal to `ignore_index` but loads
    `inp[n, tgt]` under `tgt_mask` alone, so an ignored target (-100) reads 100 elements before
    its row: before the tensor itself for row 0 (MB005). The store is masked, so the value is
    dropped, but the read is out of bounds (a fault on a device that checks). Run with the
    interpreter patch of tests/corpus_own/_check.py, which raises on any lane outside the
    launch's tensors."""
    import torch

    sys.path.insert(0, str(HERE.parent / "tests" / "corpus_own"))
    import _check  # noqa: F401 - patches the interpreter to raise IllegalAccess

    kernel = load_jit_function(
        root / "flag_gems/runtime/backend/_cambricon/fused/cross_entropy_loss.py",
        "nllloss_without_weight_kernel",
    )
    n, c, d, ignore = 4, 5, 1, -100
    inp = torch.randn(n, c, d)
    final_max = inp.amax(1)
    final_sum = torch.exp(inp - final_max[:, None]).sum(1)  # the values do not matter here
    out = torch.zeros(n, d)

    def run(tgt: torch.Tensor) -> str:
        try:
            kernel[(1,)](inp, tgt, final_max, final_sum, out, ignore, n, c, d, BLOCK_N=4)
        except Exception as exc:  # noqa: BLE001 - the interpreter's error is what we report
            return f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1][:160]}"
        return "no illegal access"

    clean = run(torch.tensor([[1], [2], [0], [4]]))
    ignored = run(torch.tensor([[ignore], [2], [0], [4]]))
    print("flag-gems cambricon nll loss, N=4 C=5 D=1, ignore_index=-100")
    print(f"  targets [1, 2, 0, 4]:    {clean}")
    print(f"  targets [-100, 2, 0, 4]: {ignored}")
    return clean == "no illegal access" and "IllegalAccess" in ignored


def smooth_ce_zero_max(root: Path) -> bool:
    """flag-gems 5.0.2, runtime/backend/_enflame/fused/gcu400/cross_entropy_loss.py,
    `celoss_indices_smooth_kernel`.

    The running max of the log-sum-exp starts at 0 (`tl.zeros`) instead of -inf, so the shift is
    max(0, row max) (DF003: the 0 lanes reach `tl.max`). Any shift gives the same log-sum-exp
    in exact arithmetic, but when a whole row is far below 0 every `exp(x - 0)` underflows in
    fp32, the sum is 0 and the loss is -inf instead of about log(C)."""
    import torch

    kernel = load_jit_function(
        root / "flag_gems/runtime/backend/_enflame/fused/gcu400/cross_entropy_loss.py",
        "celoss_indices_smooth_kernel",
    )
    # C a multiple of BLOCK_C: the kernel's masks use Python `and`, which the compiler turns into
    # an elementwise and but the interpreter evaluates as Python; with full tiles both agree.
    n, c, d, smoothing = 2, 8, 1, 0.1

    def run(offset: float) -> tuple[torch.Tensor, torch.Tensor]:
        torch.manual_seed(0)
        inp = (torch.randn(n, c, d) + offset).contiguous()
        tgt = torch.tensor([[1], [3]])
        out = torch.zeros(n, d)
        w_tgt = torch.zeros(n, d)
        kernel[(1, 1)](
            inp, tgt, None, out, w_tgt, -100, smoothing, c, d, n, 1, BLOCK_C=4, BLOCK_D=1
        )  # fmt: skip
        want = torch.nn.functional.cross_entropy(
            inp.squeeze(-1), tgt.squeeze(-1), reduction="none", label_smoothing=smoothing
        )
        return out.squeeze(-1), want

    got0, want0 = run(0.0)
    got1, want1 = run(-120.0)
    print("flag-gems enflame gcu400 label-smoothed cross entropy, N=2 C=8")
    print(f"  logits ~ N(0, 1):      kernel {got0.tolist()}  torch {want0.tolist()}")
    print(f"  logits ~ N(-120, 1):   kernel {got1.tolist()}  torch {want1.tolist()}")
    ok0 = torch.allclose(got0, want0, rtol=1e-4, atol=1e-4)
    ok1 = torch.allclose(got1, want1, rtol=1e-4, atol=1e-4)
    return ok0 and not ok1


def default_ce_indices(root: Path) -> bool:
    """flag-gems 5.0.2, fused/cross_entropy_loss.py, `celoss_indices_kernel` (the default path).

    The same running max started at 0 as above: a row of logits far below 0 gives an infinite
    loss. (Its ignored targets also read `inp[n, -100]` under `tgt_mask` alone, like the
    cambricon NLL kernel.)"""
    import torch
    import triton.language as tl

    kernel = load_jit_function(
        root / "flag_gems/fused/cross_entropy_loss.py", "celoss_indices_kernel", {"tle": tl}
    )
    n, c, d = 2, 8, 1  # C a multiple of BLOCK_C (see smooth_ce_zero_max)

    def run(offset: float) -> tuple[torch.Tensor, torch.Tensor]:
        torch.manual_seed(0)
        inp = (torch.randn(n, c, d) + offset).contiguous()
        tgt = torch.tensor([[1], [3]])
        out, w_tgt = torch.zeros(n, d), torch.zeros(n, d)
        kernel[(1, n)](inp, tgt, None, out, w_tgt, -100, c, d, BLOCK_C=4, BLOCK_D=1)
        want = torch.nn.functional.cross_entropy(inp.squeeze(-1), tgt.squeeze(-1), reduction="none")
        return out.squeeze(-1), want

    got0, want0 = run(0.0)
    got1, want1 = run(-120.0)
    print("flag-gems default cross entropy (class indices), N=2 C=8")
    print(f"  logits ~ N(0, 1):      kernel {got0.tolist()}  torch {want0.tolist()}")
    print(f"  logits ~ N(-120, 1):   kernel {got1.tolist()}  torch {want1.tolist()}")
    return torch.allclose(got0, want0, rtol=1e-4, atol=1e-4) and not torch.allclose(
        got1, want1, rtol=1e-4, atol=1e-4
    )


def outer_row_tail_store(root: Path) -> bool:
    """flag-gems 5.0.2, runtime/backend/_metax/ops/outer.py, `mul_outer_kernel`.

    Each program writes BLOCK_SIZE_M = 8 rows of out (M, N), but the store's mask is the column
    mask alone (`mask_1`, the row mask, is only on the load of `inp`), so when M is not a
    multiple of 8 the last program writes rows M..8k-1, past the end of `out` (MB002). Run with
    the interpreter patch of tests/corpus_own/_check.py."""
    import torch

    sys.path.insert(0, str(HERE.parent / "tests" / "corpus_own"))
    import _check  # noqa: F401 - patches the interpreter to raise IllegalAccess

    kernel = load_jit_function(root / "flag_gems/runtime/backend/_metax/ops/outer.py", "mul_outer_kernel")

    def run(m: int, n: int) -> str:
        inp, weight = torch.randn(m, 1), torch.randn(1, n)
        out = torch.empty(m, n)
        grid = (triton_cdiv(m, 8), triton_cdiv(n, 512))
        try:
            kernel[grid](
                inp, weight, out, m, n, out.stride(0), out.stride(1), BLOCK_SIZE_M=8, BLOCK_SIZE_N=512
            )
        except Exception as exc:  # noqa: BLE001 - the interpreter's error is what we report
            return f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1][:160]}"
        return "ok" if torch.allclose(out, inp * weight) else "wrong values"

    full, tail = run(16, 5), run(9, 5)
    print("flag-gems metax outer product, BLOCK_SIZE_M=8")
    print(f"  M=16 N=5: {full}")
    print(f"  M=9  N=5: {tail}")
    return full == "ok" and "IllegalAccess" in tail


def rwkv_ka_head_not_power_of_two(root: Path) -> bool:
    """flag-gems 5.0.2, fused/rwkv_ka_fusion.py, `rwkv_ka_fusion_kernel` (GR002, fgtriage).

    Each head is read as `N_size = next_power_of_2(N)` lanes from `i * N` with only the row's
    end as a mask, so for a head size that is not a power of 2 the extra lanes are the next
    head's: they enter this head's norm, and the last head's spill into the next program's row
    (the race GR002 names). With N=4 the normalized `kk` matches torch; with N=3 it does not."""
    import torch
    import triton

    kernel = load_jit_function(root / "flag_gems/fused/rwkv_ka_fusion.py", "rwkv_ka_fusion_kernel")

    def run(heads: int, n: int, t: int = 2) -> tuple[torch.Tensor, torch.Tensor]:
        torch.manual_seed(0)
        c = heads * n
        k, a = torch.randn(t, c), torch.rand(t, c)
        kk, ka = torch.randn(c), torch.rand(c)
        o_k, o_kk, o_kka = torch.empty_like(k), torch.empty_like(k), torch.empty_like(k)
        # the launcher's grid and block: one program per row of C elements
        kernel[(t,)](k, kk, a, ka, o_k, o_kk, o_kka, t, c, heads, n, triton.next_power_of_2(n), c)
        kt = (k * kk).view(t, heads, n)
        want = (kt / torch.sqrt((kt * kt).sum(-1, keepdim=True) + 1e-12)).view(t, c)
        return o_kk, want

    got4, want4 = run(2, 4)
    got3, want3 = run(2, 3)
    err4, err3 = (got4 - want4).abs().max().item(), (got3 - want3).abs().max().item()
    print("flag-gems rwkv_ka_fusion_kernel, T=2, H=2: max |kk_normalized - torch|")
    print(f"  head size N=4: {err4:.3g}")
    print(f"  head size N=3: {err3:.3g}")
    return err4 < 1e-5 and err3 > 1e-3


def _fla_math() -> dict:
    """`exp` and `log` as fla's `fla.ops.utils.op` gives them by default (fp32 `tl.exp`/`tl.log`
    in a `@triton.jit` wrapper), written out here so the kernel's module need not be imported."""
    import triton
    import triton.language as tl

    scratch = Path(tempfile.mkdtemp(prefix="argus-repro-")) / "_argus_repro_fla_math.py"
    scratch.write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef exp(x):\n    return tl.exp(x.to(tl.float32))\n"
        "\n\n@triton.jit\ndef log(x):\n    return tl.log(x.to(tl.float32))\n",
        encoding="utf-8",
    )
    namespace: dict = {"triton": triton, "tl": tl, "__name__": "_argus_repro_fla_math"}
    exec(compile(scratch.read_text(), str(scratch), "exec"), namespace)  # noqa: S102 - two one-line helpers
    return {"exp": namespace["exp"], "log": namespace["log"]}


def logcumsumexp_zero_padded_max(root: Path) -> bool:
    """fla-core 0.6.0, ops/utils/logcumsumexp.py, `logcumsumexp_fwd_kernel` (DF003, fgtriage).

    The chunk's shift `b_mc = max(b_s, 0)` is taken over rows loaded with `other=0.0`, so in a
    chunk with rows past T the shift is max(0, column max). For a column of values far below 0
    every `exp(s - 0)` underflows in fp32, the cumulative sum is 0, and the kernel's eps (1e-20)
    turns it into log(1e-20) = -46.05 instead of the true log-cumsum-exp (about -120). With T a
    multiple of the chunk (no padded row) the same values come out right."""
    import torch

    kernel = load_jit_function(root / "fla/ops/utils/logcumsumexp.py", "logcumsumexp_fwd_kernel", _fla_math())

    def run(t: int, offset: float) -> tuple[torch.Tensor, torch.Tensor]:
        torch.manual_seed(0)
        s = (torch.randn(1, t, 4) + offset).contiguous()
        z = torch.empty_like(s)
        kernel[(1,)](s, z, t, S=4, BT=16)
        return z, torch.logcumsumexp(s, dim=1)

    full, want_full = run(16, -120.0)
    tail, want_tail = run(5, -120.0)
    print("fla-core logcumsumexp_fwd_kernel, S=4, BT=16, values ~ N(-120, 1)")
    print(f"  T=16 (no padded row): kernel {full[0, -1].tolist()}  torch {want_full[0, -1].tolist()}")
    print(f"  T=5 (11 padded rows): kernel {tail[0, -1].tolist()}  torch {want_tail[0, -1].tolist()}")
    ok_full = torch.allclose(full, want_full, rtol=1e-4, atol=1e-3)
    ok_tail = torch.allclose(tail, want_tail, rtol=1e-4, atol=1e-3)
    return ok_full and not ok_tail


def kunlunxin_argmin_padding(root: Path) -> bool:
    """flag-gems 5.0.2, runtime/backend/_kunlunxin/ops/argmin.py, `argmin_kernel`.

    The row is loaded with `other=-inf` and reduced by `tl.min(..., return_indices=True)`:
    -inf is the neutral element of a max, not of a min, so whenever the tile is wider than the
    row (BLOCK_N = next_power_of_2(N), the backend's heuristic) a padding lane wins and the
    index returned lies past the row (DF003: "lanes outside the data reach `tl.min` holding
    -inf instead of the neutral inf"). With N = 8 (a full tile) the index is torch's; with
    N = 5 it is not."""
    import torch
    import triton.language as tl

    kernel = load_jit_function(
        root / "flag_gems/runtime/backend/_kunlunxin/ops/argmin.py", "argmin_kernel", {"tle": tl}
    )

    def run(n: int) -> tuple[list[int], list[int]]:
        torch.manual_seed(0)
        inp = torch.randn(2, n)
        out = torch.empty(2, dtype=torch.int64)
        block_n = 1 << (n - 1).bit_length()
        kernel[(2, 1)](inp, out, 2, n, 1, tl.float32, 3.4e38, BLOCK_M=1, BLOCK_N=block_n)
        return out.tolist(), inp.argmin(dim=1).tolist()

    (got8, want8), (got5, want5) = run(8), run(5)
    print("flag-gems kunlunxin argmin, M=2, BLOCK_N = next_power_of_2(N)")
    print(f"  N=8: kernel {got8}  torch {want8}")
    print(f"  N=5: kernel {got5}  torch {want5}")
    return got8 == want8 and got5 != want5


def vdot_partial_sums_half_sized(root: Path) -> bool:
    """flag-gems 5.0.2, ops/vdot.py, `vdot_kernel_complex` (MB002, hosttensor).

    Each program stores its partial sum as two floats, real then imaginary, at `2 * pid` and
    `2 * pid + 1`, but the launcher allocates `partial_real_sums` with `grid_size` elements (one
    per program, not two), so every program past the first half writes past its end; with one
    program (any input of up to BLOCK_SIZE complex numbers) the imaginary part lands one element
    past a one-element buffer. Run with the interpreter patch of tests/corpus_own/_check.py."""
    import torch

    sys.path.insert(0, str(HERE.parent / "tests" / "corpus_own"))
    import _check  # noqa: F401 - patches the interpreter to raise IllegalAccess

    path = root / "flag_gems/ops/vdot.py"
    helper = load_jit_function(path, "compute_vdot")
    kernel = load_jit_function(path, "vdot_kernel_complex", {"compute_vdot": helper})
    n, block = 4, 4
    a, b = torch.randn(n, dtype=torch.complex64), torch.randn(n, dtype=torch.complex64)
    grid_size = min(triton_cdiv(n, block), 1024)

    def run(partial_len: int) -> str:
        partial = torch.empty(partial_len)
        try:
            kernel[(grid_size,)](
                torch.view_as_real(a), torch.view_as_real(b), partial, n_elements=2 * n,
                inp_is_conj=False, other_is_conj=False, inp_stride=1, other_stride=1, BLOCK_SIZE=block,
            )  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - the interpreter's error is what we report
            return f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1][:160]}"
        got = complex(partial[0].item(), partial[1].item())
        return "ok" if abs(got - torch.vdot(a, b).item()) < 1e-4 else f"wrong value {got}"

    as_launched, doubled = run(grid_size), run(2 * grid_size)
    print(f"flag-gems vdot of complex64, N={n}, BLOCK_SIZE={block}: {grid_size} program(s)")
    print(f"  partial_real_sums of grid_size elements (as the launcher allocates): {as_launched}")
    print(f"  partial_real_sums of 2 * grid_size elements:                        {doubled}")
    return doubled == "ok" and "IllegalAccess" in as_launched


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)


CASES = {
    "poly_norm_npu_backward_dw": (poly_norm_npu_backward_dw, "liger_kernel-0.8.5"),
    "smooth_ce_zero_max": (smooth_ce_zero_max, "flag_gems-5.0.2"),
    "default_ce_indices": (default_ce_indices, "flag_gems-5.0.2"),
    # the last two patch the interpreter to raise on any lane outside the launch's tensors
    "nll_ignore_index_read": (nll_ignore_index_read, "flag_gems-5.0.2"),
    "outer_row_tail_store": (outer_row_tail_store, "flag_gems-5.0.2"),
    "logcumsumexp_zero_padded_max": (logcumsumexp_zero_padded_max, "fla_core-0.6.0"),
    "rwkv_ka_head_not_power_of_two": (rwkv_ka_head_not_power_of_two, "flag_gems-5.0.2"),
    "kunlunxin_argmin_padding": (kunlunxin_argmin_padding, "flag_gems-5.0.2"),
    "vdot_partial_sums_half_sized": (vdot_partial_sums_half_sized, "flag_gems-5.0.2"),
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, default=HERE / ".realworld")
    args = ap.parse_args()
    if os.environ.get("TRITON_INTERPRET") != "1":
        print("run with TRITON_INTERPRET=1 (the kernels run on the CPU interpreter)", file=sys.stderr)
        return 2
    shown = 0
    for name, (case, package) in CASES.items():
        root = args.dir / "src" / package
        if not root.is_dir():
            print(f"{name}: {root} not found; run benchmarks/realworld.py first", file=sys.stderr)
            return 2
        bug = case(root)
        print(f"{name}: {'BUG REPRODUCED' if bug else 'not reproduced'}\n")
        shown += bug
    return 1 if shown else 0


if __name__ == "__main__":
    sys.exit(main())

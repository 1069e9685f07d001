"""Small self-test helper for tests/corpus_own (not a kernel file).

* ``padded(t, col_pad)`` / ``poisoned(shape, dtype)``: tensors that are views into a larger
  buffer whose surroundings (and ``col_pad`` extra columns per row) hold NaN / INT_POISON;
  ``poisoned`` also fills the tensor itself, so unwritten outputs show.  ``guards_intact()``
  reports overwritten padding.
* Under TRITON_INTERPRET=1 the interpreter is patched: every active lane of a load/store/atomic
  must hit an element of a tensor argument of the launch (else ``IllegalAccess``); masked loads
  without ``other=`` yield NaN / INT_POISON in the off lanes; 32-bit overflow checks are on;
  autotune runs each config once on the same buffers.
* ``main(case, sizes)`` runs the cases and exits 0 if all pass, 1 otherwise.
"""
import dataclasses
import os
import sys
import time
import traceback

import numpy as np
import torch

INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"
DEV = "cuda" if torch.cuda.is_available() and not INTERPRET else "cpu"
INT_POISON = 0x2F2F2F2F
_MARGIN = 256
_bufs = []


class IllegalAccess(RuntimeError):
    pass


def _poison(dtype):
    return float("nan") if dtype.is_floating_point else INT_POISON


def padded(t, col_pad=0):
    """Copy of t placed inside a poisoned buffer (rows padded with col_pad poisoned columns)."""
    t = t.to(DEV)
    shape = tuple(t.shape) if t.dim() else (1,)
    full = shape[:-1] + (shape[-1] + col_pad,)
    n = int(np.prod(full))
    big = torch.full((n + 2 * _MARGIN,), _poison(t.dtype), dtype=t.dtype, device=DEV)
    view = big[_MARGIN:_MARGIN + n].view(full)[..., : shape[-1]]
    owned = torch.zeros(big.shape, dtype=torch.bool, device=DEV)
    owned[_MARGIN:_MARGIN + n].view(full)[..., : shape[-1]] = True
    view.copy_(t.reshape(shape))
    _bufs.append((big, owned))
    return view if t.dim() else view.view(())


def poisoned(shape, dtype=torch.float32, col_pad=0):
    return padded(torch.full(shape, _poison(dtype), dtype=dtype), col_pad)


def sparse_view(shape, strides, dtype=torch.float16):
    """Random view with huge strides into one large, mostly untouched (so unallocated) buffer."""
    extent = 1 + sum((n - 1) * st for n, st in zip(shape, strides))
    v = torch.empty(extent, dtype=dtype, device=DEV).as_strided(shape, strides)
    v.copy_(torch.randn(shape).to(dtype))
    return v


def guards_intact():
    bad = 0
    for big, owned in _bufs:
        out = big[~owned]
        bad += int((~torch.isnan(out)).sum()) if big.dtype.is_floating_point else int((out != INT_POISON).sum())
    return [] if bad == 0 else [f"{bad} padding element(s) overwritten"]


def close(name, got, want, atol=1e-4, rtol=1e-4, rel_norm=None):
    got, want = got.detach().cpu().double(), want.detach().cpu().double()
    if got.shape != want.shape:
        return [f"{name}: shape {tuple(got.shape)} vs {tuple(want.shape)}"]
    if torch.isnan(got).any() and not torch.isnan(want).any():
        return [f"{name}: NaN at {tuple(torch.isnan(got).nonzero()[0].tolist())}"]
    bad = ((got - want).abs() > atol + rtol * want.abs()) & ~(got == want)
    if bad.any():
        i = tuple(bad.nonzero()[0].tolist())
        return [f"{name}: {int(bad.sum())} mismatches, first {i}: {got[i].item():.5g} vs {want[i].item():.5g}"]
    if rel_norm is not None and want.numel():
        rel = float((got - want).norm() / max(float(want.norm()), 1e-30))
        if not rel <= rel_norm:
            return [f"{name}: relative error norm {rel:.3g} > {rel_norm:.3g}"]
    return []


def main(case, sizes):
    failed = 0
    for size in sizes:
        _bufs.clear()
        torch.manual_seed(1234)
        try:
            problems = list(case(*size) or []) + guards_intact()
        except Exception as e:  # illegal access, overflow, compile error ...
            problems = [f"{type(e).__name__}: {(str(e).strip().splitlines() or [''])[-1][:300]}"]
            if os.environ.get("CHECK_TRACEBACK"):
                traceback.print_exc()
        failed += bool(problems)
        print(("FAIL " if problems else "ok   ") + str(size) + ("  " + "; ".join(problems) if problems else ""))
    print(f"{len(sizes) - failed}/{len(sizes)} sizes passed")
    sys.exit(1 if failed else 0)


def _patch_interpreter():
    from triton.runtime import interpreter as I

    b = I.interpreter_builder
    stack = []

    def collect(a, acc):
        if isinstance(a, torch.Tensor):
            acc.append(a)
        elif isinstance(a, (list, tuple)):
            for x in a:
                collect(x, acc)
        elif isinstance(getattr(a, "base", None), torch.Tensor):
            acc.append(a.base)
        return acc

    orig_call = I.GridExecutor.__call__

    def call(self, *args, **kw):
        ts = collect(list(args) + list(kw.values()), [])
        stack.append([(t.data_ptr(), t.element_size(), t.shape, t.stride()) for t in ts if t.numel()])
        try:
            return orig_call(self, *args, **kw)
        finally:
            stack.pop()

    I.GridExecutor.__call__ = call

    def check(kind, ptrs, mask):
        if not stack:
            return
        addr = np.asarray(ptrs.data).astype(np.int64)
        on = np.ones(addr.shape, bool) if mask is None else np.broadcast_to(np.asarray(mask.data, bool), addr.shape)
        addr = addr[on]
        ok = np.zeros(addr.shape, bool)
        for base, size, shape, strides in stack[-1]:
            off = addr - base
            hit = (off >= 0) & (off % size == 0)
            rem = np.where(hit, off // size, 0)
            for st, n in sorted(((s, n) for s, n in zip(strides, shape) if n > 1 and s), reverse=True):
                hit &= rem // st < n
                rem = rem - (rem // st) * st
            ok |= hit & (rem == 0)
        if not ok.all():
            raise IllegalAccess(f"{kind}: {int((~ok).sum())} lane(s) outside every argument, program {tuple(b.grid_idx)}")

    o_load, o_store, o_rmw = b.create_masked_load, b.create_masked_store, b.create_atomic_rmw

    def as_bool(mask):  # interpreter bug: (vector bool) & (loaded scalar bool) comes out int32
        if mask is not None and np.asarray(mask.data).dtype != np.bool_:
            mask = I.TensorHandle(np.asarray(mask.data).astype(bool), mask.dtype)
        return mask

    def load(ptrs, mask, other, cache_policy=None, is_volatile=False):
        mask = as_bool(mask)
        check("load", ptrs, mask)
        if other is None and not np.asarray(mask.data, bool).all():
            ty = ptrs.get_element_ty()
            npt = I._get_np_dtype(ty)
            fill = np.nan if np.issubdtype(npt, np.floating) else (INT_POISON if np.iinfo(npt).bits >= 32 else 0)
            other = I.TensorHandle(np.full(ptrs.data.shape, fill, dtype=npt), ty)
        return o_load(ptrs, mask, other, cache_policy, is_volatile)

    def store(ptrs, value, mask, cache_policy=None):
        mask = as_bool(mask)
        check("store", ptrs, mask)
        return o_store(ptrs, value, mask, cache_policy)

    def rmw(op, ptr, val, mask, sem, scope):
        mask = as_bool(mask)
        check("atomic", ptr, mask)
        return o_rmw(op, ptr, val, mask, sem, scope)

    b.create_masked_load, b.create_masked_store, b.create_atomic_rmw = load, store, rmw
    b.options = dataclasses.replace(b.options, debug=True, sanitize_overflow=True)

    from triton.runtime import driver

    class _Bench:
        def get_benchmarker(self):
            def bench(fn, quantiles=None, **_):
                t = time.perf_counter()
                fn()
                ms = (time.perf_counter() - t) * 1e3
                return [ms] * 3 if quantiles else ms
            return bench

    driver.set_active(_Bench())


if INTERPRET:
    _patch_interpreter()
    np.seterr(all="ignore")

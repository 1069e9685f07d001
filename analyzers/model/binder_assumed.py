"""Probe launches for a kernel with no launch site in its file: what the kernel itself says
(a single bounding size of an elementwise kernel) and nothing more."""

from __future__ import annotations

from typing import Any

from argus.analyzers.interp.values import TensorInfo
from argus.analyzers.model.binder_sizes import PRIMES
from argus.analyzers.model.binder_values import KernelValues
from argus.analyzers.model.elementwise import elementwise
from argus.analyzers.model.launch_site import ProbeLaunch


class AssumedProbes(KernelValues):
    """Probes made from assumptions, each named in the probe's notes."""

    def _assumed_probe(self, kind: str, config: dict[str, Any] | None) -> ProbeLaunch:
        """No launch in the file. Tensors are contiguous; when the kernel bounds its offsets by a
        single size (an elementwise kernel: `offsets < n_elements`), every tensor holds that many
        elements and the grid covers it with the widest tile; otherwise extents are unknown and
        bounds are not judged. Races and coverage are never judged without a launch."""
        args: dict[str, Any] = {}
        runtime: set[str] = set()
        consts = self._constexpr_env({}, config)
        bmax = max(
            [v for v in consts.values() if isinstance(v, int) and not isinstance(v, bool) and 2 <= v <= 1024]
            or [16]
        )
        tiled = [p.name for p in self.kernel.params if p.name in self.scan.tiled and not p.constexpr]
        sizes: dict[str, int] = {}
        i = 0
        for p in self.kernel.params:
            if p.name in self.scan.pointers or p.constexpr or p.name in consts:
                continue
            if p.name in self.scan.tiled:
                v = {"ragged": 2 * bmax + 1, "exact": 2 * bmax, "half": bmax + bmax // 2, "one": 1}[kind]
            elif p.name.startswith("stride"):
                v = 1 if p.name.endswith(("n", "k", "d", "1", "col", "cols")) else 64 * (i + 1)
            else:
                v = PRIMES[i % len(PRIMES)]
            i += 1
            args[p.name] = v
            runtime.add(p.name)
            sizes[p.name] = v
        strided = any("stride" in p.name for p in self.kernel.params)
        # a constexpr that bounds offsets too (`mask=offs < numel_sorted`, not a tile size) is
        # another size: one bounding size is not established
        other_bounds = [
            p.name for p in self.kernel.params
            if p.constexpr and p.name in self.scan.tiled and p.name not in self.scan.arange_params
        ]
        single = (
            len(tiled) == 1
            and not strided
            and not other_bounds
            and elementwise(self.kernel, self.scan, tiled[0], consts)
        )
        n_t = 0
        for p in self.kernel.params:
            if p.name in self.scan.pointers:
                if single:
                    n = int(args[tiled[0]])
                    args[p.name] = TensorInfo(n_t, p.name, (n,), (1,), (tiled[0],), "fp16?", sized=True)
                else:
                    args[p.name] = TensorInfo(
                        n_t, p.name, (1 << 16,), (1,), (f"{p.name}.0",), "fp16?", sized=False
                    )
                n_t += 1
            elif p.constexpr or p.name in consts:
                if p.name in consts:
                    args[p.name] = consts[p.name]
                elif p.constexpr and p.name not in self.kernel.heuristics:
                    args[p.name] = 16  # an unbound tile size: a small power of two
        self._apply_heuristics(args)
        if single:
            n = int(args[tiled[0]])
            grid, note = (
                (max(1, -(-n // bmax)), 1, 1),
                f"no launch site in this file: tensors of {tiled[0]} elements and a grid of cdiv({tiled[0]}, {bmax}) programs assumed",
            )
        else:
            grid, note = (
                (2, 2, 2),
                "no launch site in this file: tensors assumed contiguous and the grid assumed to cover the sizes",
            )
        return ProbeLaunch(
            kind, args, runtime, grid, 3 if not single else 1, sizes, config, None, True, notes=[note]
        )

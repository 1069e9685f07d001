"""Tile sizes a package helper returns that the host evaluator cannot compute: picked, named.

liger-kernel's Ascend launchers take `BLOCK_SIZE = get_optimal_block_size(n_cols, ...)`, a
helper that sizes the tile from the device's on-chip buffer (`compute_default_tiling_strategy`
reads the NPU's unified-buffer capacity); other packages read a table keyed by the device or
`torch.cuda.get_device_properties`. The helper is followed (host_functions.py), but its value
rests on the machine, so the evaluator ends with an unknown. The kernel is written to be
correct for every block size such a helper returns, so this is the case binder_picks.py
models for autotune configs the checker cannot read: the probe picks a tile size and names it
("`BLOCK_SIZE` (returned by `get_optimal_block_size`, not computable here) = 32"), a second
probe halves it, and a finding only one of the two probes sees is at most a hint naming the
pick. Before this the value was a stand-in with an AR001 note and no bound resting on it was
judged.

Only a `tl.arange` extent (a tile size) is picked, and only when the launch argument's unknown
value is named after a plain function of the package (the launcher's module or one it imports,
`LaunchSite.functions`) and the helper does give a value there (host_invoke.NoValue: a helper
that raises on this path, recurses or leaves from a loop may give no launch at all): a count or
a flag from such a helper keeps the stand-in and its note.
"""

from __future__ import annotations

from typing import Any

from argus.analyzers.model.binder_picks import PICKED_TILE, PickedValues, branch_flags
from argus.analyzers.model.host_functions import HostFunction
from argus.analyzers.model.host_invoke import NoValue
from argus.analyzers.model.host_values import Opaque
from argus.analyzers.model.refusal_bounds import least_tile


class HelperPicks(PickedValues):
    """The helper picks of one probe launch (see the module's docstring)."""

    def _tuned_picks(self, kargs: dict[str, Any], divisor: int = 1) -> dict[str, Any]:
        """binder_picks' picks for constexprs of configs the checker cannot read, with a flag
        (a name the kernel branches on by itself: `if DIVISIBLE_M:`) picked as a flag: True,
        then False in the second probe. A count (4, then 2) is true in both probes, so a bug
        behind `if not DIVISIBLE_M:` (the masks) was never probed and an unmasked read under
        the flag was an error although the tuner sets the flag only where it holds."""
        picks: dict[str, Any] = super()._tuned_picks(kargs, divisor)
        flags = self.kernel.cached("branch_flags", lambda: branch_flags(self.kernel.func))
        return {k: (divisor == 1) if k in flags else v for k, v in picks.items()}

    def _helper_picks(self, kargs: dict[str, Any], divisor: int = 1) -> dict[str, int]:
        """Constexpr tile sizes the launch passes from a package helper's unknown value ->
        the probe's pick (PICKED_TILE, divided by `divisor` in the second probe)."""
        if self.site is None:
            return {}
        return {
            # at least the bound a refusal the helper passed sets (`if D > BD: raise`)
            p.name: least_tile(kargs.get(p.name), PICKED_TILE // divisor)
            for p in self.kernel.params
            if p.constexpr
            and p.name in self.scan.arange_params
            and p.name not in self.kernel.heuristics
            and isinstance(kargs.get(p.name), Opaque)
            and not isinstance(kargs[p.name], NoValue)
            and self._names_helper(kargs[p.name].what)
        }

    def _names_helper(self, what: str) -> bool:
        """Whether `what` (an unknown value's description) names a plain function of the
        package the launcher's evaluation could call."""
        assert self.site is not None
        fn = self.site.functions.get(what)
        if fn is None and "." in what:
            fn = self.site.functions.get(what.rsplit(".", 1)[-1])
        return isinstance(fn, HostFunction)

    @staticmethod
    def named_helper_picks(picks: dict[str, int], kargs: dict[str, Any]) -> tuple[str, ...]:
        return tuple(
            f"`{k}` (returned by `{kargs[k].what}`, not computable here) = {v}" for k, v in picks.items()
        )

"""The launch binder's questions about constexprs: which ones the launcher computes from the
problem sizes (so a probe must make them move), and how the picks and stand-ins a probe rests
on are named in a finding's witness. A mixin of `launch.LaunchBinder`, which provides the
kernel, the tiled dimensions, the site and one host run per size choice (`_run_host`,
`_kernel_args`, `choose_sizes`), and `HelperPicks.named_picks`.
"""

from __future__ import annotations

import contextlib
from typing import Any

from argus.analyzers.errors import CANNOT_EVALUATE
from argus.analyzers.model.binder_picks import branch_flags


class ConstexprChoices:
    """Constexprs driven by sizes, and the names of the values a probe chose for them."""

    kernel: Any
    tiled: Any
    site: Any
    assumed_values: dict[str, tuple[str, Any]]

    def _size_driven_blocks(self, base_args: dict[str, Any]) -> dict[str, int]:
        """Tiled dimensions from which the launcher computes a constexpr (`BLOCK_V =
        min(1024, next_power_of_2(V))`), with the capped block: at small sizes one tile covers
        them and a loop over them never iterates twice, so a `big` probe makes them exceed
        the cap (binder_sizes.py sizes them past twice the cap, no larger)."""
        consts = {p.name for p in self.kernel.params if p.constexpr}
        base = {k: v for k, v in base_args.items() if k in consts and isinstance(v, int)}
        out: dict[str, int] = {}
        if not base or not self.tiled:
            return out
        # one run with every tiled dimension large first: usually no constexpr moves at all
        with contextlib.suppress(*CANNOT_EVALUATE):
            args = self._kernel_args(self._run_host(dict.fromkeys(self.tiled, 5000)))
            if all(args.get(k) == v for k, v in base.items()):
                return out
        for root in list(self.tiled):
            try:
                ev = self._run_host({root: 5000})
                args = self._kernel_args(ev)
            except CANNOT_EVALUATE:
                continue
            # only a capped block (at most half the dimension) makes the loop iterate twice
            caps = [
                args[k]
                for k, v in base.items()
                if isinstance(args.get(k), int)
                and args.get(k) != v
                and 0 < args[k] <= 2500
                and args[k] & (args[k] - 1) == 0
            ]
            if caps:
                out[root] = max(caps)
        return out

    def size_driven_constexprs(self) -> set[str] | None:
        """Constexpr arguments whose launcher values change with the problem sizes
        (`BLOCK_D=next_power_of_2(D)`, `EVEN_K=K % 32 == 0`); None when there is no launch to
        ask."""
        if self.site is None:
            return None
        try:
            a = self._kernel_args(self._run_host(self.choose_sizes("ragged")))
            b = self._kernel_args(self._run_host(self.choose_sizes("exact")))
        except CANNOT_EVALUATE:
            return None
        consts = {p.name for p in self.kernel.params if p.constexpr}
        return {k for k in consts if a.get(k) != b.get(k)}

    def _named_choices(self, picks: dict[str, Any], flags: dict[str, bool]) -> tuple[str, ...]:
        """The picks, named. A picked value the kernel only branches on (`if DIVISIBLE_K:`)
        is named by the branch it selects, not the number: two probes picking 4 and 2 take
        the same path, and a finding seen under both still rests on that pick."""
        branching = self.kernel.cached("branch_flags", lambda: branch_flags(self.kernel.func))
        # a pick already True/False (helper_picks, binder_inputs) is named by named_picks
        as_flags = {
            k: v for k, v in picks.items() if k in branching and isinstance(v, int) and not isinstance(v, bool)
        }
        out = list(self.named_picks({k: v for k, v in picks.items() if k not in as_flags}, flags))
        out += [
            f"`{k}` (autotune configs not readable) {'true' if v else 'false'}" for k, v in sorted(as_flags.items())
        ]
        return tuple(out)

    def _constexpr_stand_ins(self) -> tuple[str, ...]:
        """Constexpr flags the launch does not give (a heuristics table read at run time, a
        missing argument) and the probe fills with a stand-in: the path they select is the
        probe's choice, so what it shows is at most a hint naming them (cause L8)."""
        consts = {p.name for p in self.kernel.params if p.constexpr}
        # only a flag the kernel branches on: a tile size's stand-in does not choose a path,
        # and what does not depend on it (a grid axis the launch lacks) stays judged
        branching = self.kernel.cached("branch_flags", lambda: branch_flags(self.kernel.func))
        return tuple(
            _stand_in_text(name, what, value)
            for name, (what, value) in sorted(self.assumed_values.items())
            if name in consts and name in branching and name not in self.kernel.heuristics
        )


def _stand_in_text(name: str, what: str, value: Any) -> str:
    return f"`{name}` ({what}) = {value}"

"""Dimension classes the launcher does not relate by an assert but that measure the same
extent: suffixed names (`K2` beside `K`), unnamed dimensions of tensors of the same rank, and
products that differ in one unnamed factor."""

from __future__ import annotations

import re

from argus.analyzers.model.binder_state import BinderState
from argus.analyzers.model.host import HostEval
from argus.analyzers.model.host_values import HostTensor


class DimUnification(BinderState):
    """Joins dimension classes that the launcher's names and shapes show to be one extent."""

    def _unify_suffixed_names(self) -> None:
        """`E, K2, N = w.shape` next to `M, K = a.shape`: K2 names the same extent as K (the
        digit only avoids rebinding), asserted or not."""
        by_name = {name: root for root, name in self.display.items()}
        for root, name in list(self.display.items()):
            m = re.fullmatch(r"([A-Za-z][A-Za-z_]*?)_?\d+", name)
            if m and m.group(1) in by_name and by_name[m.group(1)] != root:
                self.dims.union(by_name[m.group(1)], root)
                keep = self.dims.find(root)
                self.display[keep] = m.group(1)

    def _unify_anonymous(self, ev: HostEval) -> None:
        """Dimensions the launcher never names (`_, S, H, _ = k.shape`, or never read) are taken
        to match the same position of another parameter tensor of the same rank: q, k and v share
        batch and head dims. Unifying what differs only makes probes less varied; leaving apart
        what matches would invent out-of-bounds reads, so doubt goes this way."""
        tensors = [v for v in ev.env.values() if isinstance(v, HostTensor) and not v.created]
        named = {self.dims.find(s) for s in self.display}
        for i, t in enumerate(tensors):
            for u in tensors[i + 1 :]:
                if len(t.shape) != len(u.shape) or len(t.shape) < 3 or t.storage == u.storage:
                    continue
                for a, b in zip(t.symbols, u.symbols, strict=True):
                    ra, rb = self.dims.find(a), self.dims.find(b)
                    if ra == rb or (ra in named and rb in named):
                        continue
                    if ra.startswith("(") or rb.startswith("("):
                        continue
                    self.dims.union(a, b)
                    keep = self.dims.find(a)
                    if keep not in self.display:
                        name = self.display.get(ra) or self.display.get(rb)
                        if name:
                            self.display[keep] = name
                    named = {self.dims.find(s) for s in self.display}

    def _unify_product_factors(self) -> None:
        """`topk_ids.numel()` passed as a count next to `torch.empty((T * top_k, N))`: two
        products that share every factor but one, where the other factor of one of them is a
        dimension the launcher never names, measure the same thing; the unnamed factor is T.
        Left apart, the count would be sized independently of the output it indexes."""
        products: list[list[str]] = []
        for sym in self.dims.derived:
            m = re.fullmatch(r"\(([^()]+)\)", sym)
            if m and "*" in m.group(1) and not re.search(r"[-+/%]", m.group(1)):
                products.append(m.group(1).split("*"))
        named = {self.dims.find(s) for s in self.display} | set(self.tiled) | set(self.bare)
        for i, p in enumerate(products):
            for q in products[i + 1 :]:
                if len(p) != len(q):
                    continue
                rp = [self.dims.find(x) for x in p]
                rq = [self.dims.find(x) for x in q]
                only_p = [x for x in rp if x not in rq]
                only_q = [x for x in rq if x not in rp]
                if (
                    len(only_p) != 1
                    or len(only_q) != 1
                    or sorted(set(rp) - {only_p[0]}) != sorted(set(rq) - {only_q[0]})
                ):
                    continue
                a, b = only_p[0], only_q[0]
                if (a in named) == (b in named) or a.startswith("(") or b.startswith("("):
                    continue
                anonymous, known = (a, b) if b in named else (b, a)
                if "." not in anonymous:
                    continue
                self.dims.union(known, anonymous)
                keep = self.dims.find(known)
                self.display.setdefault(keep, self.display.get(known) or self.display.get(anonymous, keep))

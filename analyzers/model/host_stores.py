"""How the host evaluator stores values: assignments to names, tuples, items of the lists
and dicts it holds, and attributes of objects it does not model (`ctx.input_shape = x.shape` in
an autograd `forward`, read back a few lines later), and `del`. A mixin of HostEval, kept
apart so host.py stays one job."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from argus.analyzers.model.host_values import HostTensor, Opaque, dotted_name
from argus.analyzers.model.runtime_values import RunTimeValue


class HostStores:
    """Mixin of HostEval (which provides `env`, `expr` and `saved_tensor`)."""

    env: dict[str, Any]
    saved_tensor: Callable[[str], Any] | None
    expr: Callable[[ast.expr], Any]

    def assign(self, target: ast.expr, v: Any) -> None:
        if isinstance(target, ast.Name):
            self.env[target.id] = v
        elif isinstance(target, ast.Tuple | ast.List):
            starred = [i for i, t in enumerate(target.elts) if isinstance(t, ast.Starred)]
            if starred and isinstance(v, tuple | list) and len(v) >= len(target.elts) - 1:
                self._assign_starred(target.elts, starred[0], list(v))
            elif starred:  # `*batch, L, _ = x.shape` of a value not known: every name unknown
                for t in target.elts:
                    self.assign(t.value if isinstance(t, ast.Starred) else t, Opaque("unpack"))
            elif isinstance(v, tuple | list) and len(v) == len(target.elts):
                for t, x in zip(target.elts, v, strict=True):
                    self.assign(t, x)
            elif isinstance(v, RunTimeValue):  # `c0, c1 = state.view(torch.int64)`: each the run's
                for t in target.elts:
                    self.assign(t.value if isinstance(t, ast.Starred) else t, v)
            elif isinstance(v, Opaque) and v.what.endswith(".saved_tensors") and self.saved_tensor is not None:
                for t in target.elts:
                    self.assign(t, self.saved_tensor(t.id) if isinstance(t, ast.Name) else Opaque("unpack"))
            else:
                # `BLOCK, warps = helper(n)` of an unknown result: each item is that helper's
                # (its name kept for the note and for helper_picks.py)
                what = v.what if isinstance(v, Opaque) and v.what.isidentifier() else "unpack"
                kind = type(v) if isinstance(v, Opaque) else Opaque  # a helper's NoValue stays one
                for t in target.elts:
                    self.assign(t, kind(what))
        elif isinstance(target, ast.Subscript):
            # `kernel_args["BLOCK_ROW"] = 16` on a dict the launcher built: spread later as `**kernel_args`
            base, key = self.expr(target.value), self.expr(target.slice)
            if isinstance(base, dict):
                if isinstance(key, Opaque) or not isinstance(key, str | int | bool | tuple):
                    base.clear()  # an unknown key may have overwritten any entry
                    base[Opaque("key")] = v
                else:
                    base[key] = v
            elif isinstance(base, list):
                # `shape[dim] = 1` (flag-gems' reductions): that item; an index not known may
                # have replaced any item, so the list is unknown
                if isinstance(key, int) and not isinstance(key, bool) and -len(base) <= key < len(base):
                    base[key] = v
                elif isinstance(target.value, ast.Name):
                    self.env[target.value.id] = Opaque("list item")

        elif isinstance(target, ast.Attribute):
            self.store_attribute(target, v)

    def _assign_starred(self, elts: list[ast.expr], star: int, items: list[Any]) -> None:
        """`*batch, L, _ = scores.shape`: the names before and after the starred one take
        their items, the starred one a list of the rest (Python's rule)."""
        after = len(elts) - star - 1
        for t, x in zip(elts[:star], items[:star], strict=True):
            self.assign(t, x)
        rest = items[star : len(items) - after]
        self.assign(elts[star].value, rest)  # type: ignore[attr-defined]
        for t, x in zip(elts[star + 1 :], items[len(items) - after :], strict=True):
            self.assign(t, x)

    def store_attribute(self, target: ast.Attribute, v: Any) -> None:
        """`ctx.input_shape = logits.shape`: an attribute of an object the evaluator does not
        model (a `ctx`, a module) holds `v` until the launcher stores it again; the value is
        kept under its dotted name, which host.py's attribute read looks up first (a branch
        or a loop that stores it leaves it joined or unknown, as for a name). A store on a
        host tensor or on anything but a plain dotted name is not followed."""
        name = dotted_name(target)
        if name and not isinstance(self.expr(target.value), HostTensor):
            self.env[name] = v

    def delete(self, target: ast.expr) -> None:
        """`del shape[axis]` on a list the evaluator holds drops that item (flag-gems builds an
        output's shape so); any other `del` leaves the name unknown, never its old value."""
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            name = target.value.id
            held = self.env.get(name)
            index = self.expr(target.slice)
            if isinstance(held, list) and isinstance(index, int) and -len(held) <= index < len(held):
                self.env[name] = held[:index] + held[index + 1 :] if index != -1 else held[:-1]
            else:
                self.env[name] = Opaque("del")
        elif isinstance(target, ast.Name):
            self.env[target.id] = Opaque("del")


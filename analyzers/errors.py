"""The one exception for "this construct cannot be evaluated", and the built-in errors that mean
the same thing when they come out of evaluating someone else's code.

A kernel or launcher the checker does not model raises `Unevaluable` (what it could not evaluate,
and where); the driver turns it into an AR001 note for that kernel only. Evaluating host code and
kernel arithmetic on synthesized values can also fail inside Python or numpy (a division by a
zero size, a subscript of a scalar): `HOST_ERRORS` names those once, for the places that treat
them as "cannot be evaluated" too.
"""

from __future__ import annotations

from typing import Any


class Unevaluable(Exception):
    """A construct the checker does not model: a `tl.*` op, a launch argument, a grid, ..."""

    def __init__(self, what: str, node: Any = None) -> None:
        super().__init__(what)
        self.what = what
        self.node = node
        #: the source map `node` belongs to, set where the error leaves a helper's call (the
        #: interpreter's map is the caller's again by the time the run catches it)
        self.smap: Any = None


class NoLaunch(Unevaluable):
    """The probe's sizes make the code launch nothing (the loop holding the launch runs no
    iteration at them): there is nothing to judge at those sizes, and no construct is missing,
    so the probe is left out without a note (model/launch_loops.py)."""


# the built-in errors evaluating unmodelled or malformed code raises (never a bug of ours alone:
# each site that catches them reports the construct as not evaluated)
HOST_ERRORS: tuple[type[Exception], ...] = (
    ArithmeticError,
    TypeError,
    ValueError,
    KeyError,
    IndexError,
    AttributeError,
)
CANNOT_EVALUATE: tuple[type[Exception], ...] = (Unevaluable, *HOST_ERRORS)

__all__ = ["CANNOT_EVALUATE", "HOST_ERRORS", "Unevaluable"]

# what `ast.parse` of a slice of someone's file can raise: that slice is skipped, never a crash
UNPARSABLE: tuple[type[Exception], ...] = (SyntaxError, UnicodeDecodeError, ValueError, RecursionError)

"""One Python syntax tree per module text, shared by every stage that reads the whole module.

The unbound-name rule, the binder's caller guards and three rules each parsed the launcher
module on their own, each with its own memo: after an edit (a new text) a check that analyzes
one kernel again parsed the file four to five times, 8-13 ms each on a 1,000-1,400-line file.
Every such reader now shares `module_tree`'s tree; the tree is read-only for all of them.
"""

from __future__ import annotations

import ast
from functools import lru_cache


@lru_cache(maxsize=16)
def module_tree(source: bytes) -> ast.Module | None:
    """The module's syntax tree (do not modify it: other stages read the same object); None
    when the text does not parse."""
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None

"""Which of an operand's tags names the contraction of a `tl.dot`, chosen independently of the
order the tags were made in.

An operand can carry several tags that vary along its contraction axis: a tile gathered through
loaded indices (`kv[ids[k], d]` in a sparse attention) carries both the gathered tensor's own
row coordinate (`SKV`) and the position in the index tensor (`K`). DF001 compares every common
tag, but DF003 counts one of them, and which one used to be the first in the tag dict. `tl.where`
built its tags from a set union, so that order, and with it DF003's verdict, changed with
PYTHONHASHSEED (flag-gems' `flashmla_sparse.py`: SKV=0 counted twice under one seed, nothing
under another).

The order here rests on what the tags are. A tag that came through a loaded index
(`Val.index_tags`) is the position of the index the program walks (each topk slot once); the
gathered tensor's own coordinate is what the index contents say, and repeats there (two slots
naming the same row, or the padding `tl.where(valid, ids, 0)` makes) are the data's, not a fact
of the code. So index positions come first, then the others; ties go by name.
"""

from __future__ import annotations

from collections.abc import Iterable


def contraction_order(keys: Iterable[str], index_tags: frozenset[str]) -> list[str]:
    """`keys` (tags varying along the contraction axis) in the order DF001 and DF003 read
    them: positions of a loaded index first, then by name. The same list whatever order
    `keys` came in."""
    return sorted(set(keys), key=lambda k: (k not in index_tags, k))

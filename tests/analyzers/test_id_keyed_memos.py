"""Memos keyed by `id()` of a syntax-tree node must not answer for another node.

`id()` is an address: once a node is freed, a node made later may be given it. Two memos of
the binder and the scan were keyed so without keeping the node: `HostEval.contains` (whether a
statement holds the launch, asked for every statement of every host run) and the scan's subtree
index (`scan_index.names_of`). Both now hold the nodes they answer for."""

from __future__ import annotations

import ast

from argus.analyzers.model.host import HostEval
from argus.analyzers.model.host_values import DimClasses
from argus.analyzers.model.scan_index import index_subtrees, names_of, tables


def test_a_contains_entry_left_by_another_pair_of_nodes_is_not_taken() -> None:
    st = ast.parse("if x:\n    y = 1\n").body[0]
    outside = ast.parse("z = 2").body[0]
    elsewhere = ast.parse("w = 3").body[0]
    ev = HostEval(DimClasses(), None, recording=True)
    # an entry under the same ids that another (since freed) pair of nodes left, saying "inside"
    ev.contains_memo[(id(st), id(outside))] = (elsewhere, st, True)
    assert ev.contains(st, outside) is False
    assert ev.contains(st, st.body[0]) is True


def test_the_subtree_index_keeps_every_node_it_indexed_alive() -> None:
    for table in tables():
        table.clear()
    tree = ast.parse("def k(a, b):\n    c = a + b\n    return c * 2\n")
    index_subtrees(tree)
    nodes = tables()[2]
    indexed = [n for n in ast.walk(tree)]
    assert all(nodes.get(id(n)) is n for n in indexed)
    assert len(tables()[0]) == len(nodes)
    assert names_of(tree.body[0].body[0]) == {"a", "b", "c"}

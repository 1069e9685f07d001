"""What the server reads from initializationOptions before any setting: trust and empty tables."""

from __future__ import annotations

from argus_lsp.server import client_trusts, empty_object
from argus_lsp.settings import Settings, merge


def test_trust_needs_an_explicit_true() -> None:
    assert client_trusts({"argus": {"trusted": True}}) is True
    assert client_trusts({"trusted": True}) is True
    for silent in (
        None,
        {},
        [],
        {"argus": {}},
        {"argus": {"debounceMs": 0}},
        {"trusted": "yes"},
        {"trusted": 1},
    ):
        assert client_trusts(silent) is False, silent
    assert client_trusts({"argus": {"trusted": False}}) is False


def test_neovim_07_empty_tables_read_as_objects() -> None:
    # Neovim 0.7 encodes `settings = {}` and `{ argus = {} }` with empty arrays
    assert merge(Settings(), empty_object([])) == (Settings(), [])
    assert merge(Settings(), empty_object({"argus": []})) == (Settings(), [])
    assert empty_object({"argus": {"run": "onSave"}}) == {"argus": {"run": "onSave"}}
    _, problems = merge(Settings(), empty_object([1]))
    assert problems  # a real array is still reported

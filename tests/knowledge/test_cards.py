"""The card library: every card parses and is complete, every PF rule has a card, retrieval and CLI work."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from argus.knowledge import cli
from argus.knowledge.cards import CardError, kernel_path, load_cards, parse_card
from argus.knowledge.retrieve import by_bottleneck, by_code, by_pattern, recommend, search

ROOT = Path(__file__).resolve().parents[2]
TOPICS = ["pid-swizzle-l2", "software-pipelining", "persistent-kernels", "tma-descriptors", "warp-specialization",
          "split-k-stream-k", "epilogue-fusion", "autotune-served-shapes", "online-softmax-exp2",
          "causal-block-skipping", "gqa-head-packing", "moe-token-alignment", "fused-topk-weighting",
          "vectorized-memory-access", "fp8-where-it-applies"]


def test_library_loads_and_is_complete() -> None:
    cards = load_cards()
    assert len(cards) >= 15
    ids = {c.id for c in cards}
    assert set(TOPICS) <= ids
    for card in cards:
        assert card.title and card.targets and card.bottlenecks and card.patterns
        assert kernel_path(card).exists(), f"{card.id}: reference kernel {card.kernel} missing"
        for section in ("When to use", "Mechanism", "Evidence", "Caveats"):
            assert card.sections[section].strip(), f"{card.id}: empty section {section}"
        for ev in card.evidence:
            assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", ev["date"]), card.id
            # Measured effects name our GPU and a command; anything else must say it was published.
            assert ev["gpu"] == "H200" or "published" in ev["effect"].lower() or ev["gpu"] == "published", card.id


def test_every_pf_rule_has_a_card() -> None:
    rules = (ROOT.parent / "shared" / "RULES.md")
    codes = sorted(set(re.findall(r"\| (PF\d{3}) \|", rules.read_text()))) if rules.exists() else []
    codes = codes or [f"PF00{i}" for i in range(1, 8)]
    for code in codes:
        assert by_code(code), f"no card answers {code}"


def test_parser_rejects_incomplete_cards(tmp_path: Path) -> None:
    with pytest.raises(CardError, match="missing front-matter"):
        parse_card("---\nid: x\ntitle: y\n---\n## When to use\n", tmp_path / "x.md")
    text = (Path(load_cards()[0].path)).read_text().replace("## Caveats", "## Notes")
    with pytest.raises(CardError, match="missing sections"):
        parse_card(text, tmp_path / "y.md")


def test_retrieval() -> None:
    assert search("L2 cache swizzle GROUP_M")[0].card.id == "pid-swizzle-l2"
    assert search("exp2 online softmax rescale")[0].card.id == "online-softmax-exp2"
    assert {c.id for c in by_code("pf005")} >= {"software-pipelining"}
    assert all("latency" in c.bottlenecks for c in by_bottleneck("latency"))
    assert "moe-token-alignment" in {c.id for c in by_pattern("moe")}
    hits = recommend([{"code": "PF002", "message": "row-major grid"}], bottleneck="memory", pattern="gemm")
    assert hits[0].card.id == "pid-swizzle-l2" and "codes PF002" in hits[0].reasons
    assert recommend([], text="qqqqzzzz") == []


def test_cli(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["list"]) == 0
    assert "pid-swizzle-l2" in capsys.readouterr().out
    assert cli.main(["list", "--code", "PF006", "--json"]) == 0
    assert "tma-descriptors" in {c["id"] for c in json.loads(capsys.readouterr().out)}
    assert cli.main(["show", "causal-block-skipping"]) == 0
    assert "## Caveats" in capsys.readouterr().out
    assert cli.main(["show", "no-such-card"]) == 1
    capsys.readouterr()
    assert cli.main(["search", "tensor", "descriptor", "TMA", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["id"] == "tma-descriptors"
    assert cli.main(["search", "qqqqq"]) == 1
    assert cli.main(["list", "--bottleneck", "nonsense"]) == 2

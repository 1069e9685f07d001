"""The typed events between the interpreter and the rules (analyzers/interp/facts.py).

An emission that does not match its event class fails at the emission, through the real
interpreter; events are frozen; every kind the interpreter emits, and every kind a rule reads,
is declared once; and the declared field types are the types the interpreter really emits, over
the kernels of the corpora (run through the real pipeline stages, nothing mocked)."""

from __future__ import annotations

import ast
import dataclasses
import re
import types
import typing
from pathlib import Path

import numpy as np
import pytest
from argus.analyzers.frontend.parse import parse
from argus.analyzers.interp import facts
from argus.analyzers.interp.facts import EVENTS, EventError, Fact, FactSink, ProbeContext
from argus.analyzers.interp.interpreter import Interpreter
from argus.analyzers.interpretation import ProbeRun
from argus.analyzers.judge import check_read_declarations
from argus.analyzers.kernel_setup import parse_kernel, set_up_kernel
from argus.analyzers.model.launch import LaunchBinder
from argus.analyzers.module_view import build_module_view
from argus.analyzers.rules import REGISTRY
from argus.analyzers.tag_asserts import parse_assertions

ROOT = Path(__file__).resolve().parents[2]

ADD_KERNEL = b"""
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    add_kernel[(triton.cdiv(n, 128),)](x, y, out, n, BLOCK=128)
    return out
"""


def _interpreter() -> Interpreter:
    """A real interpreter for the add kernel under its ragged probe, program 0."""
    view = build_module_view(ADD_KERNEL, parse(ADD_KERNEL))
    site = view.sites[0]
    func, smap = parse_kernel(view, site)
    setup = set_up_kernel(view, site, func, smap)
    binder = LaunchBinder(setup.kernel, setup.scan, setup.launch_sites[0])
    binder.record()
    launch = binder.probe("ragged", None)
    return Interpreter(setup.kernel, setup.scan, launch, setup.helpers, view.consts, FactSink(), set())


def test_the_interpreter_builds_the_declared_event_with_the_probe_context() -> None:
    interp = _interpreter()
    node = interp.kernel.func.body[0]
    interp.fact("autotune-atomic", node, tensor="out_ptr")
    (event,) = interp.sink.facts.values()
    assert isinstance(event, facts.AutotuneHazard)
    assert event.tensor == "out_ptr"
    assert event.probe.probe == "ragged"
    assert event.probe.pid == interp.pid[:1]
    assert event.probe.sizes == interp.launch.describe_sizes() and event.probe.sizes


def test_an_unknown_kind_fails_at_the_emission() -> None:
    interp = _interpreter()
    with pytest.raises(EventError, match="unknown event kind 'oob-laod'"):
        interp.fact("oob-laod", interp.kernel.func.body[0], tensor="x")


def test_a_missing_field_fails_at_the_emission() -> None:
    interp = _interpreter()
    with pytest.raises(EventError, match=r"'race' \(Race\) is missing element, other_pid, symbols"):
        interp.fact("race", interp.kernel.func.body[0], tensor="out_ptr")


def test_an_extra_field_fails_at_the_emission() -> None:
    interp = _interpreter()
    with pytest.raises(EventError, match="has no field 'tensr'"):
        interp.fact("autotune-inplace", interp.kernel.func.body[0], tensr="out_ptr")


def test_the_error_is_not_one_the_driver_turns_into_a_note() -> None:
    """A declaration bug must crash the check, not become an AR001 note that hides it."""
    from argus.analyzers.errors import CANNOT_EVALUATE

    assert not issubclass(EventError, CANNOT_EVALUATE)


def test_events_are_frozen() -> None:
    interp = _interpreter()
    interp.fact("autotune-atomic", interp.kernel.func.body[0], tensor="out_ptr")
    (event,) = interp.sink.facts.values()
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.tensor = "x"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.probe.pid = (3,)  # type: ignore[misc]


def test_a_keyword_named_differently_at_the_emission_is_mapped_by_the_class() -> None:
    node = ast.parse("x").body[0]
    smap = _interpreter().smap
    dot = Fact("dot-mismatch", node, smap, {"kind": "axis", "j": 1, "a_coord": {}, "b_coord": {}})
    assert isinstance(dot, facts.DotMismatch) and dot.kind == "dot-mismatch" and dot.mismatch == "axis"
    note = Fact("unmodelled", node, smap, {"what": "`BLOCK` (a heuristic)", "assumed": 4})
    assert isinstance(note, facts.Unmodelled) and note.stand_in == 4 and note.probe == ProbeContext()


def test_an_event_class_refuses_a_kind_it_does_not_carry() -> None:
    smap = _interpreter().smap
    with pytest.raises(EventError, match="does not carry kind 'oob-load'"):
        facts.Race(
            kind="oob-load",
            node=ast.parse("x"),
            smap=smap,
            tensor="t",
            element=[],
            symbols=[],
            other_pid=None,
        )


def test_each_kind_is_declared_once_and_read_by_a_rule() -> None:
    read = {kind for rule in REGISTRY for kind in rule.reads}
    assert set(EVENTS) == read
    assert check_read_declarations() == []


def _emitted_kinds() -> set[str]:
    """Every literal kind an emission site in analyzers/ names (`.fact("k"`, `Fact("k"`,
    `probe_fact(interp, "k"`, `garbage.pend(interp, "k"`), read from the source."""
    pattern = re.compile(r'(?:\.fact\(|\bFact\(|probe_fact\(\s*\w+,|garbage\.pend\(\s*\w+,)\s*"([a-z0-9-]+)"')
    kinds: set[str] = set()
    for path in (ROOT / "analyzers").rglob("*.py"):
        kinds |= set(pattern.findall(path.read_text(encoding="utf-8")))
    return kinds


def test_every_emitted_kind_is_declared() -> None:
    emitted = _emitted_kinds()
    assert len(emitted) > 20  # the pattern still finds the emission sites
    assert emitted - {"oob-load", "oob-store"} <= set(EVENTS)  # those two come as a variable
    assert set(EVENTS) - emitted <= {"oob-load", "oob-store"}


# ---- the declared types are the emitted ones --------------------------------------------------
def _conforms(value: object, hint: object) -> bool:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is typing.Any:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(_conforms(value, a) for a in args)
    if hint is type(None):
        return value is None
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, np.generic)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, np.generic)
    if origin is list:
        return isinstance(value, list) and all(_conforms(v, args[0]) for v in value)
    if origin is dict:
        return isinstance(value, dict) and all(
            _conforms(k, args[0]) and _conforms(v, args[1]) for k, v in value.items()
        )
    if origin is tuple:
        if not isinstance(value, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_conforms(v, args[0]) for v in value)
        return len(value) == len(args) and all(_conforms(v, a) for v, a in zip(value, args, strict=True))
    return isinstance(value, typing.cast(type, hint))


def _type_problems(event: Fact) -> list[str]:
    hints = typing.get_type_hints(type(event))
    out = []
    for f in dataclasses.fields(event):
        value = getattr(event, f.name)
        if not _conforms(value, hints[f.name]):
            out.append(f"{event.kind}.{f.name} = {value!r} ({type(value).__name__}) is not {hints[f.name]}")
    for f in dataclasses.fields(event.probe):
        value = getattr(event.probe, f.name)
        if not _conforms(value, typing.get_type_hints(ProbeContext)[f.name]):
            out.append(f"{event.kind}.probe.{f.name} = {value!r} ({type(value).__name__})")
    return out


def _events_of(path: Path) -> list[Fact]:
    """The events of every kernel of one file, through the pipeline's own stages."""
    source = path.read_bytes()
    view = build_module_view(source, parse(source))
    out: list[Fact] = []
    for site in view.sites:
        try:
            func, smap = parse_kernel(view, site)
        except (SyntaxError, StopIteration, UnicodeDecodeError, ValueError):
            continue
        setup = set_up_kernel(view, site, func, smap)
        assertions = parse_assertions(source, site.node.start_point[0], site.node.end_point[0])
        out += ProbeRun(setup, view.consts, assertions).run()
    return out


# one file per group of kinds, chosen so that together they reach every kind but one (the
# corpora hold no kernel that reaches `scatter-index`); a run over every corpus file takes a minute
TYPE_SAMPLES = (
    "tests/fixtures/tag_asserts.py",
    "tests/fixtures/host_descriptor.py",
    "tests/fixtures/reduce_combine.py",
    "tests/fixtures/rare_events.py",
    "tests/corpus_own/matmul_blockptr_v2.py",
    "tests/corpus_own/moe_fused_v2.py",
    "tests/corpus_own/moe_fused_v3.py",
    "tests/corpus_own/moe_fused_v4.py",
    "tests/corpus_own/swiglu_v2.py",
    "tests/corpus_own/log_softmax_v2.py",
    "tests/corpus_own/residual_add_v2.py",
    "tests/corpus_own/cross_entropy_v3.py",
    "tests/corpus_own/bmm_v2.py",
    "tests/corpus_own/paged_decode_v3.py",
    "tests/corpus_own/splitk_gemm_v3.py",
    "tests/corpus_own/attn_blockptr_v3.py",
    "tests/corpus_styles/layernorm_tutorial_v3.py",
    "tests/corpus_realworld/named_heuristic.py",
    "tests/corpus_own/softmax_3pass_v2.py",
    # `tl.histogram` is not modelled: the one sample left that emits `unmodelled`, since the
    # sixth session's coverage work analyzes the others to the end
    "tests/corpus_styles/histogram_bins.py",
)
UNREACHED = {"scatter-index"}


@pytest.mark.slow
def test_declared_field_types_match_what_the_interpreter_emits() -> None:
    seen: set[str] = set()
    problems: list[str] = []
    for name in TYPE_SAMPLES:
        for event in _events_of(ROOT / name):
            seen.add(event.kind)
            problems += [f"{name}: {p}" for p in _type_problems(event)]
    assert problems == []
    assert seen == set(EVENTS) - UNREACHED  # the check above covers every kind it names


def test_the_type_check_tells_a_wrong_type() -> None:
    """The check above is not vacuous: a numpy integer where `int` is declared, a tuple where a
    list is, and a float inside a list of ints are each reported."""
    smap = _interpreter().smap
    event = facts.OutOfBounds(
        kind="oob-load",
        node=ast.parse("x"),
        smap=smap,
        tensor="x",
        lane=[0, 1.5],
        offset=np.int64(3),
        shape=(4,),
        symbols=["N"],
        coords=[3],
        lanes=1,
    )
    assert [p.split(" = ")[0] for p in _type_problems(event)] == [
        "oob-load.lane",
        "oob-load.offset",
        "oob-load.shape",
    ]

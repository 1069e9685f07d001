"""Facts: typed, frozen events the interpreter emits, each with the concrete instance it observed.

The interpreter computes; the rules judge. A transfer function that observes something a rule
needs (a lane read outside its tensor, a pointer that does not move, a store of the wrong
coordinate) emits an event: `interp.fact("oob-load", node, tensor=..., lane=...)` or, with its
own source map, `Fact("coverage", node, smap, {...}, related, global_)`. Both build the event
class registered for that kind, with the fields the class declares; the probe it was seen
under (program id, sizes, probe kind, autotune config, assumed launch) travels in one shared
`ProbeContext`. An unknown kind, a missing field or an extra field raises `EventError` at the
emission, before any rule sees the event: the emission and the declaration cannot drift apart.

The event classes are declared once, below; `KINDS` names the kinds a class carries and
`EVENTS` maps each kind to its class. A field an emission site names differently from the
attribute (a `kind=` keyword, which would shadow the event's own kind) is mapped by the class's
`RENAMED`. The interpreter never decides wording or severity: the rule modules do, from these
typed fields.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, fields, replace
from typing import Any, ClassVar

from argus.analyzers.model.kernel import SourceMap

Related = tuple[ast.AST, SourceMap, str]
LoadSite = tuple[ast.AST, SourceMap]

# the emission keywords that make up the probe context (interp.fact adds them itself), in the
# order a witness lists them
CONTEXT_KEYS = ("sizes", "config", "pid", "probe", "assumed", "choice")


class EventError(Exception):
    """An emission that does not match the event declarations: a bug of the checker, never of
    the kernel (deliberately not one of `errors.HOST_ERRORS`, so no driver turns it into a note)."""


@dataclass(frozen=True, slots=True)
class ProbeContext:
    """Where an event was observed: the program id, the probe's sizes and kind, the autotune
    config and, for an assumed launch, the note saying what was assumed; `choice` names the
    values the probe picked where the code does not establish them (a grid axis of a device
    property, a constexpr an unreadable autotune list supplies): error and warning findings
    resting on it are hints (judge.py). A field is None when the emission did not give it
    (global events have no single program, for example)."""

    pid: tuple[int, ...] | None = None
    sizes: str | None = None
    probe: str | None = None
    config: str | None = None
    assumed: str | None = None
    choice: str | None = None


_NO_CONTEXT = ProbeContext()


class _BuildByKind(type):
    """Calling the base class `Fact` itself builds the event class registered for the kind;
    calling an event class builds that class (keyword fields only)."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is Fact:
            return build(*args, **kwargs)
        return super().__call__(*args, **kwargs)


@dataclass(frozen=True, slots=True, kw_only=True)
class Fact(metaclass=_BuildByKind):
    """One observed event: its kind, the node it is reported on, the probe context and the
    places that explain it (`related`). `global_` events are judged over all programs of a
    probe (coverage, races) and are dropped when a run stops early."""

    KINDS: ClassVar[tuple[str, ...]] = ()
    RENAMED: ClassVar[Mapping[str, str]] = {}  # emission keyword -> attribute

    kind: str
    node: ast.AST
    smap: SourceMap
    probe: ProbeContext = _NO_CONTEXT
    related: tuple[Related, ...] = ()
    global_: bool = False

    def __post_init__(self) -> None:
        if self.kind not in self.KINDS:
            raise EventError(
                f"{type(self).__name__} does not carry kind {self.kind!r} (it carries {self.KINDS})"
            )

    @property
    def key(self) -> tuple[str, int]:
        return (self.kind, self.smap.span(self.node).start_byte)


# ---- the events -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class Unmodelled(Fact):
    """A construct the checker does not model (AR001). `stand_in` is the value probes assume
    for a launch parameter the checker could not evaluate; `fallback`: checked as if the kernel
    had no launch site."""

    KINDS = ("unmodelled",)
    RENAMED = {"assumed": "stand_in"}
    what: str
    fallback: bool = False
    stand_in: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TagAssertBad(Fact):
    """A `# argus: tag` comment that cannot be read or names no tile."""

    KINDS = ("tag-assert-bad",)
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TagAssertFailed(Fact):
    """A tag assertion that does not hold: what each side carries at lane `lane`."""

    KINDS = ("tag-assert",)
    text: str
    left: str
    right: str
    left_tag: str
    right_tag: str
    lane: int


@dataclass(frozen=True, slots=True, kw_only=True)
class DotMismatch(Fact):
    """`tl.dot` operands whose contraction coordinates differ at column/row `j`: by value on
    `symbol` (`mismatch="value"`) or by varying along different axes (`mismatch="axis"`)."""

    KINDS = ("dot-mismatch",)
    RENAMED = {"kind": "mismatch"}
    mismatch: str
    j: int
    a_coord: dict[str, int]
    b_coord: dict[str, int]
    symbol: str | None = None
    a_value: int | None = None
    b_value: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PointerStep(Fact):
    """A pointer feeding an accumulating dot that moves by `raw_step` instead of one tile
    (`step`) along `dim`: the coordinates it reads in iterations 0 and 1."""

    KINDS = ("pointer-step",)
    tensor: str
    dim: str
    step: int
    raw_step: int
    coords0: list[int]
    coords1: list[int]
    symbols: list[str]
    side: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReductionCount(Fact):
    """An index of a reduction extent that an output element received `count` times."""

    KINDS = ("coverage",)
    tensor: str
    dim: str
    index: int
    count: int
    missing: int
    extra: int
    element: list[int]


@dataclass(frozen=True, slots=True, kw_only=True)
class PadReduced(Fact):
    """A lane outside the data that reaches a reduction holding `value`, not the neutral one."""

    KINDS = ("pad-reduced",)
    op: str
    lane: list[int]
    value: float
    identity: float
    sign_from: str | None = None  # the loaded tensor whose sign flipped the padding, if one did


@dataclass(frozen=True, slots=True, kw_only=True)
class UndefReduced(Fact):
    """An undefined lane (masked load without `other=`) that reaches `consumer` mixed with
    defined ones; `load` is that load's site, when known."""

    KINDS = ("undef-reduced",)
    op: str
    lane: list[int]
    consumer: str
    load: LoadSite | None


@dataclass(frozen=True, slots=True, kw_only=True)
class StoreTag(Fact):
    """A stored lane whose value was computed for `symbol=got` but lands at `symbol=expected`."""

    KINDS = ("store-tag",)
    tensor: str
    lane: list[int]
    dest: list[int]
    symbols: list[str]
    symbol: str
    expected: int
    got: int
    transposed: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ScatterIndex(Fact):
    """Rows gathered through a loaded index, stored to an address that does not use it."""

    KINDS = ("scatter-index",)
    tensor: str
    lane: list[int]
    dest: list[int]
    symbols: list[str]
    index_symbol: str
    index_value: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ScatterCollision(Fact):
    """Rows of two index entries (`positions`) that land in the same element `dest`."""

    KINDS = ("scatter-collision",)
    tensor: str
    dest: list[int]
    symbols: list[str]
    index_symbol: str
    positions: list[int]


@dataclass(frozen=True, slots=True, kw_only=True)
class AutotuneHazard(Fact):
    """An autotuned kernel's atomic (`autotune-atomic`) or in-place (`autotune-inplace`)
    update of `tensor`, which the decorator does not reset or restore."""

    KINDS = ("autotune-atomic", "autotune-inplace")
    tensor: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Uncovered(Fact):
    """Elements of an output no program of the grid writes (`missing` of `total`)."""

    KINDS = ("uncovered",)
    tensor: str
    element: list[int]
    symbols: list[str]
    missing: int
    total: int
    grid: tuple[int, ...]
    shape: tuple[int, ...] = ()  # the output's extents (rules/untold_extent.py)
    int_data: bool = False  # the kernel loaded integer data (prefix sums, indices)


@dataclass(frozen=True, slots=True, kw_only=True)
class GridAxis(Fact):
    """`tl.program_id(axis)` on a grid of `grid_axes` axes."""

    KINDS = ("grid-axis",)
    axis: int
    grid_axes: int
    grid: tuple[int, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class GridDecomposition(Fact):
    """A program-id axis of `extent` programs split by `op divisor` (`divisor_value`), which
    does not divide it."""

    KINDS = ("grid-decomposition",)
    axis: int
    extent: int
    divisor: str | None
    divisor_value: int
    op: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Race(Fact):
    """An element stored by two programs (`other_pid`) or by two lanes of one store (None)."""

    KINDS = ("race",)
    tensor: str
    element: list[int]
    symbols: list[str]
    other_pid: list[int] | None


@dataclass(frozen=True, slots=True, kw_only=True)
class OutOfBounds(Fact):
    """A lane of a load (`oob-load`) or store (`oob-store`) outside its tensor, mask on."""

    KINDS = ("oob-load", "oob-store")
    tensor: str
    lane: list[int]
    offset: int
    shape: list[int]
    symbols: list[str]
    coords: list[int]
    lanes: int
    int_data: bool = False  # the kernel loaded integer data (prefix sums, indices) before


@dataclass(frozen=True, slots=True, kw_only=True)
class UncheckedIndex(Fact):
    """A value loaded from `index_from` that addresses `tensor` without a range check;
    `compared`: where the kernel compares it with a bound or sentinel on another path."""

    KINDS = ("unchecked-index",)
    tensor: str
    index_from: str
    lower_only: bool
    window_start: str | None
    compared: list[str]


@dataclass(frozen=True, slots=True, kw_only=True)
class Int32Offset(Fact):
    """A growing index times a runtime stride computed in int32: the index's largest value at
    this probe, the factor, and which operand of `expr` grows."""

    KINDS = ("int32-offset",)
    tensor: str
    tensor_sized: bool
    factor_fixed: bool
    expr: str
    grows_max: int
    factor: int
    factor_name: str
    grows_side: str


@dataclass(frozen=True, slots=True, kw_only=True)
class LowPrecision(Fact):
    """A dot (`low-precision-dot`) or loop accumulation (`low-precision-acc`) in `dtype` over
    `inputs`."""

    KINDS = ("low-precision-dot", "low-precision-acc")
    dtype: str
    inputs: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SoftmaxScale(Fact):
    """An online-softmax scale problem, all said by the kind: terms of different maxes added
    (`scale-mismatch`), a stale max in the exponent (`stale-max`), exp without a max
    (`unstable-exp`), a division too early (`normalized-early`) or by a sum of another scale
    (`division-scale`)."""

    KINDS = ("scale-mismatch", "stale-max", "unstable-exp", "normalized-early", "division-scale")


@dataclass(frozen=True, slots=True, kw_only=True)
class MaskedRowNaN(Fact):
    """A fully masked row whose NaN is stored to `element` of `tensor`."""

    KINDS = ("masked-row-nan",)
    tensor: str
    element: list[int]


EVENT_CLASSES: tuple[type[Fact], ...] = (
    Unmodelled,
    TagAssertBad,
    TagAssertFailed,
    DotMismatch,
    PointerStep,
    ReductionCount,
    PadReduced,
    UndefReduced,
    StoreTag,
    ScatterIndex,
    ScatterCollision,
    AutotuneHazard,
    Uncovered,
    GridAxis,
    GridDecomposition,
    Race,
    OutOfBounds,
    UncheckedIndex,
    Int32Offset,
    LowPrecision,
    SoftmaxScale,
    MaskedRowNaN,
)


# ---- the kind -> class table and the factory ---------------------------------------------------
def _kind_table(classes: tuple[type[Fact], ...]) -> dict[str, type[Fact]]:
    table: dict[str, type[Fact]] = {}
    for cls in classes:
        for kind in cls.KINDS:
            if kind in table:
                raise EventError(f"kind {kind!r} is declared by {table[kind].__name__} and {cls.__name__}")
            table[kind] = cls
    return table


EVENTS: dict[str, type[Fact]] = _kind_table(EVENT_CLASSES)
_BASE_FIELDS = frozenset(f.name for f in fields(Fact))


@dataclass(frozen=True)
class _Schema:
    """What an emission of one class may and must give (computed once per class)."""

    required: frozenset[str]
    allowed: frozenset[str]
    renamed: Mapping[str, str]


def _schema(cls: type[Fact]) -> _Schema:
    own = [f for f in fields(cls) if f.name not in _BASE_FIELDS]
    required = frozenset(f.name for f in own if f.default is MISSING and f.default_factory is MISSING)
    return _Schema(required, frozenset(f.name for f in own), dict(cls.RENAMED))


_SCHEMAS: dict[type[Fact], _Schema] = {cls: _schema(cls) for cls in EVENT_CLASSES}


def build(
    kind: str,
    node: ast.AST,
    smap: SourceMap,
    data: Mapping[str, Any] | None = None,
    related: list[Related] | tuple[Related, ...] | None = None,
    global_: bool = False,
) -> Fact:
    """The event of `kind` from an emission's keyword fields (`data`): the probe-context keys
    go to its `ProbeContext`, the rest must be exactly the class's fields."""
    cls = EVENTS.get(kind)
    if cls is None:
        raise EventError(f"unknown event kind {kind!r}: declare its class in analyzers/interp/facts.py")
    schema = _SCHEMAS[cls]
    own: dict[str, Any] = {}
    context: dict[str, Any] = {}
    for key, value in (data or {}).items():
        name = schema.renamed.get(key, key)
        if name in schema.allowed:
            own[name] = value
        elif key in CONTEXT_KEYS:
            context[key] = value
        else:
            raise EventError(f"{kind!r} ({cls.__name__}) has no field {key!r}")
    missing = schema.required.difference(own)
    if missing:
        raise EventError(f"{kind!r} ({cls.__name__}) is missing {', '.join(sorted(missing))}")
    if context.get("pid") is not None:
        context["pid"] = tuple(context["pid"])
    probe = ProbeContext(**context) if context else _NO_CONTEXT
    return cls(
        kind=kind, node=node, smap=smap, probe=probe, related=tuple(related or ()), global_=global_, **own
    )


class FactSink:
    """Collects facts of one kernel across probes, keeping the first instance per (kind, place)."""

    def __init__(self) -> None:
        self.facts: dict[tuple[str, int], Fact] = {}
        self.seen: set[Any] = set()  # dedupe keys for facts reported once per cause
        # set by the interpreter for each probe: adds to a fact the values the probe picked
        # that it rests on (`ProbeContext.choice`)
        self._stamp: Callable[[Fact], Fact] | None = None
        self.stamp_round = 0  # probes stamped so far (first_time keys causes by it)

    @property
    def stamp(self) -> Callable[[Fact], Fact] | None:
        return self._stamp

    @stamp.setter
    def stamp(self, value: Callable[[Fact], Fact] | None) -> None:
        self._stamp = value
        self.stamp_round += 1

    def first_time(self, key: Any) -> bool:
        if self.stamp is not None:
            # once per cause under each probe's picks: a fact seen again under other picked
            # values must reach `add`, which then drops the picks it does not rest on
            key = (key, self.stamp_round)
        if key in self.seen:
            return False
        self.seen.add(key)
        return True

    def add(self, fact: Fact) -> None:
        if self.stamp is not None:
            fact = self.stamp(fact)
        old = self.facts.setdefault(fact.key, fact)
        if old is not fact and old.probe.choice and fact.probe.choice != old.probe.choice:
            # seen again under other picked values: it does not rest on the picks that differ
            again = set((fact.probe.choice or "").split("; "))
            kept = "; ".join(p for p in old.probe.choice.split("; ") if p in again)
            self.facts[fact.key] = replace(old, probe=replace(old.probe, choice=kept or None))

    def has(self, kind: str) -> bool:
        return any(k[0] == kind for k in self.facts)

    def of(self, *kinds: str) -> list[Fact]:
        return [f for f in self.facts.values() if f.kind in kinds]

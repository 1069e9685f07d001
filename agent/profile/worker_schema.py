"""The messages between Argus and the profiling worker: typed, versioned, checked on arrival.

Argus writes a `WorkerRequest` as request.json; the worker answers with JSON-line events on
stdout (`Progress`, then one `WorkerResult` or `WorkerError`). Both ends import this one module,
so a field is declared once: the worker (worker.py) runs as a standalone script, locally or on a
remote host, so this module is staged next to it and, like it, imports only the standard library.
Its name is specific on purpose: the worker puts the task's directory on `sys.path`, and a user
module called `schema` must not collide with it.

Every message is checked against its dataclass when it is read (`from_dict`): a wrong type, a
missing or unknown field or another schema version raises `SchemaError` naming the field, e.g.
`request.inputs[0].shape[1]: expected int, got str 'M'`.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, Union

#: Bumped whenever a field changes meaning or a required field is added.
SCHEMA_VERSION = 1
#: Marks the worker's event lines, so the user's own prints cannot be mistaken for results.
EVENT_PREFIX = "@@ARGUS@@ "

Backend = Literal["auto", "nvidia", "amd", "cpu"]
CounterMode = Literal["auto", "none", "ncu", "rocprof"]
M = TypeVar("M", bound="Message")


class SchemaError(ValueError):
    """A worker message that does not match this schema; the text names the field and the problem."""


class Message:
    """Base of every message: strict reading from JSON-like dicts and plain writing back."""

    @classmethod
    def from_dict(cls: type[M], data: Any, where: str | None = None) -> M:
        """Build and check one message; raises SchemaError on the first field that is wrong."""
        return _read_dataclass(cls, data, where or _snake(cls.__name__))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)  # type: ignore[call-overload]

    def check(self, where: str) -> None:
        """Constraints beyond the field types (ranges, dependencies); overridden where there are some."""


# -- the request --------------------------------------------------------------------------------
@dataclass(frozen=True)
class InputTensor(Message):
    """One launcher argument, drawn fresh per input set: a random tensor of a concrete shape."""

    name: str
    shape: list[int]
    dtype: str  # a torch dtype name: bfloat16, float32, int32, ...
    init: Literal["randn", "rand", "randint"] = "randn"
    scale: float = 1.0
    low: int = 0
    high: int = 100

    def check(self, where: str) -> None:
        if any(d < 0 for d in self.shape):
            raise SchemaError(f"{where}.shape: sizes must be >= 0, got {self.shape}")
        if self.init == "randint" and self.high <= self.low:
            raise SchemaError(f"{where}: randint needs high > low, got [{self.low}, {self.high})")


@dataclass(frozen=True)
class Timing(Message):
    """How long to warm up and time. `rep_ms` None: 300 ms on a GPU, 100 ms under the interpreter."""

    warmup_ms: float = 250.0
    rep_ms: float | None = None
    min_reps: int = 10
    max_reps: int = 1000
    flush_mb: int = 256
    cpu_reps: int = 10

    def check(self, where: str) -> None:
        if not 1 <= self.min_reps <= self.max_reps:
            raise SchemaError(
                f"{where}: needs 1 <= min_reps <= max_reps, got {self.min_reps}, {self.max_reps}"
            )
        if self.warmup_ms < 0 or (self.rep_ms is not None and self.rep_ms <= 0) or self.cpu_reps < 1:
            raise SchemaError(f"{where}: warmup_ms >= 0, rep_ms > 0 and cpu_reps >= 1 are required")


@dataclass(frozen=True)
class WorkerRequest(Message):
    """What the worker runs: the task resolved to concrete sizes, plus how to measure it."""

    kind: Literal["spec", "kernelbench"]
    file: str  # the task's file: absolute locally, "task.py" on a remote host
    kernel: str
    launcher: str  # spec: a function of the file (or dotted name); kernelbench: the model class
    inputs: list[InputTensor] = field(default_factory=list)  # spec tasks only
    reference: str | None = None
    args: dict[str, Any] = field(default_factory=dict)  # constant keyword arguments of the launcher
    sizes: dict[str, int] = field(default_factory=dict)
    flops: float | None = None  # from the task's formula; None: counted on the reference
    bytes: float | None = None  # None: inputs + outputs, once each
    dtype: str | None = None  # the peak column; None: the first floating input's dtype
    backend: Backend = "auto"
    counters: CounterMode = "none"
    counter_timeout: float = 300.0
    counter_launches: int | None = None  # None: 1 on NVIDIA, 5 on AMD
    do_bench_check: bool = False
    proton: bool = False
    timing: Timing = field(default_factory=Timing)
    seed: int = 0
    input_sets: int = 3
    check_reference: bool = True
    version: int = SCHEMA_VERSION

    def check(self, where: str) -> None:
        _check_version(self.version, where)
        if not self.launcher:
            raise SchemaError(f"{where}.launcher: the task names no launcher")
        if self.input_sets < 1 or self.counter_timeout <= 0:
            raise SchemaError(f"{where}: input_sets >= 1 and counter_timeout > 0 are required")


# -- the events -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Progress(Message):
    """A phase the worker entered (start, compile, check, timing, do_bench, counters, proton)."""

    phase: str
    done: int = 0
    total: int = 0


@dataclass(frozen=True)
class DeviceInfo(Message):
    """Where the worker ran: the device torch saw and the versions that matter for a timing."""

    device: Literal["cuda", "cpu"]
    name: str  # "NVIDIA H200", "CPU (Triton interpreter)"
    backend: Literal["nvidia", "amd", "cpu"]
    torch: str
    triton: str  # a version, or "unavailable: <why>"
    python: str
    host: str
    sm_count: int | None = None
    l2_bytes: int | None = None
    capability: str | None = None
    arch: str | None = None  # gcnArchName on AMD


@dataclass(frozen=True)
class DoBench(Message):
    """triton.testing.do_bench on the same callable, for the "within 5%" cross-check."""

    median_ms: float
    times_ms: list[float]


@dataclass(frozen=True)
class CounterCapture(Message):
    """A profiler's raw output (parsed on the Argus side), or why there is none (`error`)."""

    tool: str  # ncu, rocprofv3, or the mode asked for when no GPU ran
    error: str | None = None
    path: str | None = None
    command: list[str] = field(default_factory=list)
    rc: int | None = None
    stdout: str = ""  # ncu's CSV
    stderr: str = ""
    dropped_metrics: list[str] = field(default_factory=list)
    kernel_trace: str = ""  # rocprofv3 CSVs
    kernel_stats: str = ""
    compute_analyze: str = ""  # rocprof-compute analyze -b 2
    compute_error: str | None = None


@dataclass(frozen=True)
class ProtonCapture(Message):
    """Triton Proton's hatchet tree of a few launches, or why there is none."""

    tool: str = "proton"
    hatchet: Any = None
    launches: int = 0
    error: str | None = None


@dataclass(frozen=True)
class WorkerResult(Message):
    """The measurement: times, counted work, correctness and whatever captures were asked for."""

    env: DeviceInfo
    median_ms: float
    times_ms: list[float]
    dtype: str | None = None
    rel_error: float | None = None
    flops: float | None = None
    flops_source: str | None = None
    bytes: float | None = None
    bytes_source: str | None = None
    warnings: list[str] = field(default_factory=list)
    do_bench: DoBench | None = None
    counters: CounterCapture | None = None
    proton: ProtonCapture | None = None

    def check(self, where: str) -> None:
        if not self.times_ms or self.median_ms < 0:
            raise SchemaError(f"{where}: a result needs at least one time and median_ms >= 0")


@dataclass(frozen=True)
class WorkerError(Message):
    """The task failed in the worker: the exception and (the tail of) its traceback."""

    message: str
    traceback: str | None = None


Event = Progress | WorkerResult | WorkerError
EVENT_KINDS: dict[str, type[Message]] = {
    "progress": Progress,
    "result": WorkerResult,
    "error": WorkerError,
}
_KIND_OF = {cls: kind for kind, cls in EVENT_KINDS.items()}


def encode_event(message: Message) -> str:
    """One stdout line (without the newline): prefix, then `{"event", "version", **fields}`."""
    body = {"event": _KIND_OF[type(message)], "version": SCHEMA_VERSION, **message.to_dict()}
    return EVENT_PREFIX + json.dumps(body)


def decode_event(line: str) -> Event | None:
    """The event on a stdout line; None for a line that is not an event (the user's own output).
    Raises SchemaError for a marked line that is not a valid event of this schema version."""
    if not line.startswith(EVENT_PREFIX):
        return None
    try:
        body = json.loads(line[len(EVENT_PREFIX) :])
    except json.JSONDecodeError as exc:
        raise SchemaError(f"event: not JSON ({exc})") from None
    if not isinstance(body, dict):
        raise SchemaError(f"event: expected an object, got {type(body).__name__}")
    kind = body.pop("event", None)
    if kind not in EVENT_KINDS:
        raise SchemaError(f"event: unknown kind {kind!r} (known: {', '.join(EVENT_KINDS)})")
    _check_version(body.pop("version", None), f"{kind} event")
    return EVENT_KINDS[kind].from_dict(body, f"{kind} event")  # type: ignore[return-value]


# -- reading ----------------------------------------------------------------------------------------
def _check_version(version: Any, where: str) -> None:
    if version != SCHEMA_VERSION:
        raise SchemaError(
            f"{where}: schema version {version!r}, this side speaks {SCHEMA_VERSION} "
            "(worker.py and worker_schema.py must come from the same Argus)"
        )


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() and i else c.lower() for i, c in enumerate(name))


def _read_dataclass(cls: type[M], data: Any, where: str) -> M:
    if not isinstance(data, dict):
        raise SchemaError(f"{where}: expected an object, got {_show(data)}")
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise SchemaError(
            f"{where}: unknown field {', '.join(map(repr, unknown))} (known: {', '.join(fields)})"
        )
    hints = typing.get_type_hints(cls)
    values = {}
    for name, f in fields.items():
        if name in data:
            values[name] = _read(data[name], hints[name], f"{where}.{name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise SchemaError(f"{where}: missing field {name!r}")
    message = cls(**values)
    message.check(where)
    return message


def _read(value: Any, hint: Any, where: str) -> Any:
    """`value` checked against the type `hint` (nested messages built); SchemaError when it does not fit."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return value
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]  # the schema uses only `X | None`
        return _read(value, inner, where)
    if origin is Literal:
        if value not in args:
            raise SchemaError(f"{where}: expected one of {', '.join(map(repr, args))}, got {_show(value)}")
        return value
    if origin is list:
        if not isinstance(value, list):
            raise SchemaError(f"{where}: expected a list, got {_show(value)}")
        return [_read(v, args[0], f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            raise SchemaError(f"{where}: expected an object with string keys, got {_show(value)}")
        return {k: _read(v, args[1], f"{where}.{k}") for k, v in value.items()}
    if isinstance(hint, type) and issubclass(hint, Message):
        return _read_dataclass(hint, value, where)
    return _read_scalar(value, hint, where)


def _read_scalar(value: Any, hint: type, where: str) -> Any:
    ok = (
        isinstance(value, int | float) and not isinstance(value, bool)
        if hint is float  # JSON writes 4096.0 as 4096
        else isinstance(value, hint) and (hint is bool or not isinstance(value, bool))
    )
    if not ok:
        raise SchemaError(f"{where}: expected {hint.__name__}, got {_show(value)}")
    return value


def _show(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"

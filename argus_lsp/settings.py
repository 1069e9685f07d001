"""The server's settings, from initializationOptions and workspace/configuration (section "argus").

Settings are a frozen dataclass so a running analysis keeps the settings it started with. A bad
value never stops the server: it falls back to the default and the problem is reported back to the
user as a message, as jedi-language-server does.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

LEVELS = ("error", "warning", "hint", "info", "off")
RUN_MODES = ("onType", "onSave")


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] | None = None  # code prefixes to report; None = all
    ignore: tuple[str, ...] = ()  # code prefixes never to report (wins over select)
    severity: dict[str, str] = field(default_factory=dict)  # code prefix -> error|warning|hint|info|off
    run: str = "onType"  # analyze while typing, or only when the file is saved
    debounce_ms: int = 150  # quiet time after the last keystroke before analyzing (onType)
    # "Profile" lens (features/profile_lens.py): where and how `argus.profile` runs a kernel's task
    profile_target: str = "local"  # "local" or "ssh://[user@]host[:port]"
    profile_python: str | None = None  # interpreter with torch + triton on the target; None: default
    profile_timeout: float = 600.0  # seconds before the worker (and its children) is killed
    profile_counters: bool = False  # also collect ncu / rocprof counters (slower)


def _codes(value: Any, key: str, problems: list[str]) -> tuple[str, ...] | None:
    if isinstance(value, str):
        value = [v for v in value.replace(",", " ").split()]
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        problems.append(f"argus.{key} must be a list of codes, got {value!r}")
        return None
    return tuple(v.strip().upper() for v in value if v.strip())


def merge(base: Settings, raw: Any) -> tuple[Settings, list[str]]:
    """`base` updated with the keys present in `raw` (a dict, possibly wrapped as {"argus": {...}})."""
    problems: list[str] = []
    if raw is None:
        return base, problems
    if isinstance(raw, dict) and isinstance(raw.get("argus"), dict):
        raw = raw["argus"]
    if not isinstance(raw, dict):
        return base, [f"argus settings must be an object, got {raw!r}"]
    out = base
    if "select" in raw:
        sel = None if raw["select"] is None else _codes(raw["select"], "select", problems)
        out = replace(out, select=sel)
    if "ignore" in raw:
        ign = _codes(raw["ignore"] or [], "ignore", problems)
        out = replace(out, ignore=ign or ())
    if "severity" in raw:
        sev = raw["severity"] or {}
        if not isinstance(sev, dict):
            problems.append(f"argus.severity must map codes to levels, got {sev!r}")
        else:
            good = {}
            for code, level in sev.items():
                if isinstance(level, str) and level.lower() in LEVELS:
                    good[str(code).upper()] = level.lower()
                else:
                    problems.append(f"argus.severity.{code}: {level!r} is not one of {', '.join(LEVELS)}")
            out = replace(out, severity=good)
    if "run" in raw:
        if raw["run"] in RUN_MODES:
            out = replace(out, run=raw["run"])
        else:
            problems.append(f"argus.run must be one of {', '.join(RUN_MODES)}, got {raw['run']!r}")
    if "debounceMs" in raw:
        ms = raw["debounceMs"]
        if isinstance(ms, int | float) and not isinstance(ms, bool) and ms >= 0:
            out = replace(out, debounce_ms=int(ms))
        else:
            problems.append(f"argus.debounceMs must be a number >= 0, got {ms!r}")
    return _merge_profile(out, _profile_keys(raw), problems), problems


def _profile_keys(raw: dict) -> dict:
    """`{"profile": {"target": ...}}` (how VS Code nests `argus.profile.target`) or dotted keys."""
    nested = raw.get("profile")
    keys = dict(nested) if isinstance(nested, dict) else {}
    keys.update({k[len("profile.") :]: v for k, v in raw.items() if k.startswith("profile.")})
    return keys


def _merge_profile(out: Settings, keys: dict, problems: list[str]) -> Settings:
    if "target" in keys:
        t = keys["target"]
        if isinstance(t, str) and (t == "local" or t.startswith("ssh://")):
            out = replace(out, profile_target=t)
        else:
            problems.append(f"argus.profile.target must be 'local' or 'ssh://[user@]host[:port]', got {t!r}")
    if "python" in keys:
        py = keys["python"]
        if py is None or isinstance(py, str):
            out = replace(out, profile_python=(py or "").strip() or None)
        else:
            problems.append(f"argus.profile.python must be a path or null, got {py!r}")
    if "timeout" in keys:
        t = keys["timeout"]
        if isinstance(t, int | float) and not isinstance(t, bool) and t > 0:
            out = replace(out, profile_timeout=float(t))
        else:
            problems.append(f"argus.profile.timeout must be a number of seconds > 0, got {t!r}")
    if "counters" in keys:
        c = keys["counters"]
        if isinstance(c, bool):
            out = replace(out, profile_counters=c)
        else:
            problems.append(f"argus.profile.counters must be true or false, got {c!r}")
    return out

"""The one settings model of Argus, read by `argus check` and by the language server alike.

Three layers, each replacing what the one before it set: the defaults, the project's
`[tool.argus]` table (config.py finds it), and then either the command line's flags (the CLI) or
the editor's settings (the server: initializationOptions and workspace/configuration, section
"argus"). So a team writes its rule selection once and the editor and CI agree on it.

The two sources are read with different strictness on purpose. A project file is code under
review: an unknown key or an empty selection is a problem the CLI refuses with exit 2, because a
typo must never switch a gate off. Editor settings arrive from clients that send every key with
its default (VS Code sends `select: null, ignore: []`), so an unset or empty editor value leaves
the project's value in force, and a bad one falls back with a message instead of stopping the
server (as jedi-language-server does). Settings are frozen so a running analysis keeps the
settings it started with.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field, replace
from typing import Any

from argus.analyzers import unknown_codes

LEVELS = ("error", "warning", "hint", "info", "off")
RUN_MODES = ("onType", "onSave")
PROJECT_KEYS = ("select", "ignore", "severity", "kernel-timeout")  # what `[tool.argus]` may hold
#: sub-tables of `[tool.argus]` that other commands read and validate themselves
#: (`[tool.argus.optimize]`: argus_lsp/cli_optimize.py)
PROJECT_SUBTABLES = ("optimize",)
# per-person settings, never a project's
EDITOR_ONLY_KEYS = ("run", "debounceMs", "profile", "launches", "checkProcesses", "hoverWaitMs")


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] | None = None  # code prefixes to report; None = all
    ignore: tuple[str, ...] = ()  # code prefixes never to report (wins over select)
    severity: dict[str, str] = field(default_factory=dict)  # code prefix -> error|warning|hint|info|off
    # seconds of interpretation one kernel may take before it is reported as AR001 "budget
    # exceeded" (analyzers/interp/budget.py); None: the analyzers' default
    kernel_timeout: float | None = None
    run: str = "onType"  # analyze while typing, or only when the file is saved
    debounce_ms: int = 150  # quiet time after the last keystroke before analyzing (onType)
    # "Profile" lens (features/profile_lens.py): where and how `argus.profile` runs a kernel's task
    profile_target: str = "local"  # "local" or "ssh://[user@]host[:port]"
    profile_python: str | None = None  # interpreter with torch + triton on the target; None: default
    profile_timeout: float = 600.0  # seconds before the worker (and its children) is killed
    profile_counters: bool = False  # also collect ncu / rocprof counters (slower)
    # the launch file to bind kernels from (features/launches.py); None: .argus/launches.json
    launches: str | None = None
    # processes the checks run in (features/check_pool.py): 1 or 2; 0 runs them on threads of the
    # server, where they share the GIL with hover (the behaviour before worker processes)
    check_processes: int = 1
    # how long a hover waits for its kernel's trace before answering that it is being traced
    # (the trace goes on, and answers the next hover): a hover never waits on a slow kernel
    hover_wait_ms: int = 40

    def level_for(self, code: str, default: str) -> str:
        """The level a finding of `code` is shown at: the longest matching `severity` prefix wins."""
        best = max((p for p in self.severity if code.startswith(p)), key=len, default=None)
        return self.severity[best] if best is not None else default


# --- values shared by both sources ---------------------------------------------------------------


def split_codes(value: Any) -> list[str] | None:
    """Codes as a list (`["DF", "MB001"]`) or one comma/space-separated string; None if neither."""
    if isinstance(value, str):
        value = value.replace(",", " ").split()
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        return None
    return [v.strip().upper() for v in value if v.strip()]


def code_problems(codes: list[str], where: str) -> list[str]:
    """A message for codes that match no rule (`argus rules` lists them)."""
    bad = unknown_codes(codes)
    if not bad:
        return []
    plural = "s" if len(bad) > 1 else ""
    return [f"unknown rule code{plural} in {where}: {', '.join(bad)} (`argus rules` lists them)"]


def empty_selection_problem(where: str) -> str:
    return f"{where} selects no rule, so nothing would be checked; leave it out to check every rule"


def timeout_problem(value: Any, where: str) -> str | None:
    """None for a usable kernel timeout (a number of seconds > 0), else what is wrong with it."""
    ok = isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < float("inf")
    return None if ok else f"{where} must be a number of seconds > 0, got {value!r}"


def _levels(raw: Any, where: str, problems: list[str]) -> dict[str, str] | None:
    if not isinstance(raw, dict):
        problems.append(f"{where} must map codes to levels, got {raw!r}")
        return None
    good: dict[str, str] = {}
    for code, level in raw.items():
        if isinstance(level, str) and level.lower() in LEVELS:
            good[str(code).strip().upper()] = level.lower()
        else:
            problems.append(f"{where}.{code}: {level!r} is not one of {', '.join(LEVELS)}")
    return good


# --- the project: `[tool.argus]` ------------------------------------------------------------------


def unknown_key_problem(key: str, where: str) -> str:
    """`selct` -> "... unknown key `selct` (did you mean `select`?)"; editor keys are named as such."""
    if key in EDITOR_ONLY_KEYS or key.startswith("profile."):
        return f"{where}: `{key}` is an editor setting, not a project one (set it in the editor)"
    close = difflib.get_close_matches(key, PROJECT_KEYS, n=1, cutoff=0.6)
    hint = f" (did you mean `{close[0]}`?)" if close else f" (known keys: {', '.join(PROJECT_KEYS)})"
    return f"{where}: unknown key `{key}`{hint}"


def from_project(table: Any, where: str) -> tuple[Settings, list[str]]:
    """Settings from one `[tool.argus]` table, with every problem in it (`where` names the file)."""
    if not isinstance(table, dict):
        return Settings(), [f"{where}: [tool.argus] must be a table"]
    problems = [
        unknown_key_problem(key, where)
        for key in table
        if key not in PROJECT_KEYS and not (key in PROJECT_SUBTABLES and isinstance(table[key], dict))
    ]
    out = Settings()
    for key in ("select", "ignore"):
        if key not in table:
            continue
        codes = split_codes(table[key])
        name = f"{where} ([tool.argus] {key})"
        if codes is None:
            problems.append(f"{name} must be a list of codes or a comma-separated string")
        elif key == "select" and not codes:
            problems.append(empty_selection_problem(f"{where}: `select = {table[key]!r}` in [tool.argus]"))
        else:
            problems += code_problems(codes, name)
            out = replace(out, **{key: tuple(codes)})
    if "severity" in table:
        levels = _levels(table["severity"], f"{where} ([tool.argus] severity)", problems)
        if levels is not None:
            problems += code_problems(list(levels), f"{where} ([tool.argus] severity)")
            out = replace(out, severity=levels)
    if "kernel-timeout" in table:
        bad = timeout_problem(table["kernel-timeout"], f"{where} ([tool.argus] kernel-timeout)")
        if bad:
            problems.append(bad)
        else:
            out = replace(out, kernel_timeout=float(table["kernel-timeout"]))
    return out, problems


# --- the editor ------------------------------------------------------------------------------------


def _unwrap(raw: Any) -> tuple[dict | None, list[str]]:
    """The editor's object: `{"argus": {...}}` unwrapped; an empty JSON array (how Neovim 0.7
    encodes an empty Lua table) is an empty object."""
    if raw is None:
        return None, []
    if isinstance(raw, list) and not raw:
        return {}, []
    if isinstance(raw, dict) and isinstance(raw.get("argus"), dict | list):
        return _unwrap(raw["argus"])
    if not isinstance(raw, dict):
        return None, [f"argus settings must be an object, got {raw!r}"]
    return raw, []


def _editor_codes(value: Any, key: str, problems: list[str]) -> tuple[str, ...] | None:
    codes = split_codes(value)
    if codes is None:
        problems.append(f"argus.{key} must be a list of codes, got {value!r}")
        return None
    return tuple(codes)


def merge(base: Settings, raw: Any) -> tuple[Settings, list[str]]:
    """`base` updated with the keys present in `raw` (a dict, possibly wrapped as {"argus": {...}})."""
    raw, problems = _unwrap(raw)
    if raw is None:
        return base, problems
    out = base
    if "select" in raw:
        sel = None if raw["select"] is None else _editor_codes(raw["select"], "select", problems)
        out = replace(out, select=sel)
    if "ignore" in raw:
        ign = _editor_codes(raw["ignore"] or [], "ignore", problems)
        out = replace(out, ignore=ign or ())
    if "severity" in raw:
        levels = _levels(raw["severity"] or {}, "argus.severity", problems)
        if levels is not None:
            out = replace(out, severity=levels)
    if "run" in raw:
        if raw["run"] in RUN_MODES:
            out = replace(out, run=raw["run"])
        else:
            problems.append(f"argus.run must be one of {', '.join(RUN_MODES)}, got {raw['run']!r}")
    if raw.get("kernelTimeout") is not None:
        bad = timeout_problem(raw["kernelTimeout"], "argus.kernelTimeout")
        if bad:
            problems.append(bad)
        else:
            out = replace(out, kernel_timeout=float(raw["kernelTimeout"]))
    if "debounceMs" in raw:
        ms = raw["debounceMs"]
        if isinstance(ms, int | float) and not isinstance(ms, bool) and ms >= 0:
            out = replace(out, debounce_ms=int(ms))
        else:
            problems.append(f"argus.debounceMs must be a number >= 0, got {ms!r}")
    if "checkProcesses" in raw:
        n = raw["checkProcesses"]
        if isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= 2:
            out = replace(out, check_processes=n)
        else:
            problems.append(f"argus.checkProcesses must be 0, 1 or 2, got {n!r}")
    if "hoverWaitMs" in raw:
        ms = raw["hoverWaitMs"]
        if isinstance(ms, int | float) and not isinstance(ms, bool) and ms >= 0:
            out = replace(out, hover_wait_ms=int(ms))
        else:
            problems.append(f"argus.hoverWaitMs must be a number >= 0, got {ms!r}")
    if "launches" in raw:
        path = raw["launches"]
        if path is None or isinstance(path, str):
            out = replace(out, launches=(path or "").strip() or None)
        else:
            problems.append(
                f"argus.launches must be a path (relative to the workspace folder) or null, got {path!r}"
            )
    return _merge_profile(out, _profile_keys(raw), problems), problems


def _is_unset(value: Any) -> bool:
    return value is None or (isinstance(value, list | tuple | dict | str) and not value)


def editor_over(project: Settings, raw: Any) -> tuple[Settings, list[str]]:
    """The editor's settings over the project's: a value the editor leaves unset or empty
    (`select: null`, `ignore: []`, `severity: {}`) keeps the project's value."""
    table, problems = _unwrap(raw)
    if table is None:
        return project, problems
    kept = {k: v for k, v in table.items() if not (k in PROJECT_KEYS and _is_unset(v))}
    merged, more = merge(project, kept)
    return merged, problems + more


def resolve(project: Settings, init_options: Any, latest: Any) -> tuple[Settings, list[str]]:
    """The server's settings: the project's, under the editor's latest non-empty answer
    (workspace/configuration or a pushed change), else its initializationOptions."""
    answer, problems = _unwrap(latest)
    settings, more = editor_over(project, latest if answer else init_options)
    return settings, problems + more


PROFILE_KEYS = ("target", "python", "timeout", "counters")  # under `argus.profile`


def _profile_keys(raw: dict) -> dict:
    """`{"profile": {"target": ...}}` (how VS Code nests `argus.profile.target`) or dotted keys
    (a dotted key wins)."""
    nested = raw.get("profile")
    nested = nested if isinstance(nested, dict) else {}
    keys = {}
    for key in PROFILE_KEYS:
        if f"profile.{key}" in raw:
            keys[key] = raw[f"profile.{key}"]
        elif key in nested:
            keys[key] = nested[key]
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

"""The editor settings the server reads are the ones VS Code declares (issue 13: `argus.checkProcesses`,
`argus.kernelTimeout` and `argus.debounceMs` were read by the server but missing from
editors/vscode/package.json, so VS Code offered no completion, no validation and no description).

What the server reads is observed, not listed: its settings parsers (`settings.merge`, and
`features/optimize.parse_settings` for `argus.optimize.*`) are handed a mapping that notes every
key they look up."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from argus_lsp.features.optimize import OptimizeSettings, parse_settings
from argus_lsp.settings import Settings, merge

MANIFEST = Path(__file__).resolve().parents[2] / "editors" / "vscode" / "package.json"
#: settings only the extension reads (how to start the server, LSP tracing)
CLIENT_ONLY = {"argus.path", "argus.interpreter", "argus.trace.server"}
#: the one server key VS Code names differently (editors/vscode/src/settings.ts maps it)
VSCODE_NAME = {"severity": "severityOverrides"}


class Noting(dict):
    """An empty settings object that notes each key looked up in it."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    def __contains__(self, key: object) -> bool:
        self.asked.append(str(key))
        return super().__contains__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self.asked.append(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self.asked.append(key)
        return super().__getitem__(key)


def server_keys() -> set[str]:
    """Every `argus.*` key the server's settings parsers look up."""
    top = Noting()
    merge(Settings(), top)
    optimize = Noting()
    parse_settings({"optimize": optimize})
    keys = set(top.asked) | {f"optimize.{k}" for k in optimize.asked}
    # "argus" is the wrapper ({"argus": {...}}); "profile" and "optimize" hold the dotted keys
    keys -= {"argus", "profile", "optimize"}
    return {f"argus.{VSCODE_NAME.get(k, k)}" for k in keys}


def declared() -> dict[str, dict]:
    return json.loads(MANIFEST.read_text())["contributes"]["configuration"]["properties"]


def test_the_parsers_are_observed_reading_the_settings() -> None:
    keys = server_keys()
    # the observation is real: the keys added in issue 13 and one of each group are seen
    assert {"argus.checkProcesses", "argus.kernelTimeout", "argus.debounceMs"} <= keys
    assert {"argus.select", "argus.profile.timeout", "argus.optimize.budget"} <= keys


def test_every_setting_the_server_reads_is_declared() -> None:
    assert sorted(server_keys() - set(declared())) == []


def test_every_declared_setting_is_read_by_the_server_or_the_client() -> None:
    assert sorted(set(declared()) - server_keys() - CLIENT_ONLY) == []


def test_the_declared_defaults_are_the_servers() -> None:
    props = declared()
    s, o = Settings(), OptimizeSettings()
    expected = {
        "argus.run": s.run,
        "argus.debounceMs": s.debounce_ms,
        "argus.kernelTimeout": s.kernel_timeout,
        "argus.checkProcesses": s.check_processes,
        "argus.hoverWaitMs": s.hover_wait_ms,
        "argus.profile.target": s.profile_target,
        "argus.profile.timeout": s.profile_timeout,
        "argus.profile.counters": s.profile_counters,
        "argus.optimize.policy": o.policy,
        "argus.optimize.apiKeyEnv": o.api_key_env,
        "argus.optimize.budget": o.budget,
        "argus.optimize.minutes": o.minutes,
    }
    assert {k: props[k]["default"] for k in expected} == expected


def test_each_declared_server_setting_with_a_bad_value_is_reported_by_name() -> None:
    # the server does read what is declared: a wrong type comes back as a problem naming it
    bad = {
        "debounceMs": -1,
        "kernelTimeout": "soon",
        "checkProcesses": 9,
        "hoverWaitMs": "x",
        "run": "sometimes",
    }
    _, problems = merge(Settings(), bad)
    for key in bad:
        assert any(f"argus.{key}" in p for p in problems), (key, problems)

"""Finding a project's `[tool.argus]`: from the checked file's folder upward, as ruff does.

The nearest `pyproject.toml` that has a `[tool.argus]` table applies to a file; one without the
table is passed over, so a sub-package's own pyproject.toml does not hide the repository's
settings. A pyproject.toml on the way that cannot be read or parsed is an error, since it might
have held the table. Lookups are cached per folder: a run over a thousand files reads each
pyproject.toml once.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from argus_lsp.settings import Settings, from_project


class ConfigError(Exception):
    """A settings file that exists but cannot be used: a usage error (exit 2) for the CLI."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class ProjectConfig:
    settings: Settings
    source: Path | None  # the pyproject.toml the settings came from; None: the defaults
    problems: tuple[str, ...] = ()  # what was wrong in it (the settings hold the usable part)


NO_CONFIG = ProjectConfig(Settings(), None)


def _read_table(path: Path) -> tuple[bool, object]:
    """(whether the file has [tool.argus], the table); raises ConfigError if it cannot be parsed."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError([f"cannot read {path}: {exc}"]) from exc
    tool = data.get("tool", {})
    if not isinstance(tool, dict) or "argus" not in tool:
        return False, None
    return True, tool["argus"]


def load_file(path: Path) -> ProjectConfig:
    """The `[tool.argus]` of one pyproject.toml (NO_CONFIG when it has none)."""
    has_table, table = _read_table(path)
    if not has_table:
        return NO_CONFIG
    settings, problems = from_project(table, str(path))
    return ProjectConfig(settings, path, tuple(problems))


@dataclass
class ConfigFinder:
    """Per-folder cache of the nearest `[tool.argus]`; one finder per run or per server."""

    _by_folder: dict[Path, ProjectConfig] = field(default_factory=dict)

    def for_folder(self, folder: Path) -> ProjectConfig:
        folder = folder.resolve()
        walked: list[Path] = []
        found = NO_CONFIG
        for current in (folder, *folder.parents):
            if current in self._by_folder:
                found = self._by_folder[current]
                break
            walked.append(current)
            candidate = current / "pyproject.toml"
            if candidate.is_file():
                config = load_file(candidate)
                if config.source is not None:
                    found = config
                    break
        for current in walked:
            self._by_folder[current] = found
        return found

    def for_file(self, path: Path) -> ProjectConfig:
        return self.for_folder(path.parent)


def find_pyproject(folder: Path) -> Path | None:
    """The pyproject.toml whose `[tool.argus]` applies under `folder` (None: there is none);
    raises ConfigError for a file on the way that cannot be parsed."""
    return ConfigFinder().for_folder(folder).source


def project_settings(folder: Path | None) -> tuple[Settings, list[str]]:
    """For the language server: the settings that apply under `folder` (a workspace root) and
    the problems to show the user; a broken file yields the defaults and its problem."""
    if folder is None:
        return Settings(), []
    try:
        config = ConfigFinder().for_folder(folder)
    except ConfigError as exc:
        return Settings(), list(exc.problems)
    return config.settings, list(config.problems)

"""Project settings for `argus check` from `[tool.argus]` in the nearest pyproject.toml.

A team writes its rule selection once next to its other tool settings, and CI, pre-commit and
people running `argus check` by hand then agree; flags given on the command line still win.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path


class ConfigError(Exception):
    """The settings file exists but cannot be used; a usage error (exit 2)."""


@dataclass
class Settings:
    select: list[str] | None = None
    ignore: list[str] | None = None
    source: Path | None = None  # the pyproject.toml the values came from


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml in `start` or one of its parents."""
    start = start.resolve()
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def split_codes(value: object, where: str) -> list[str]:
    """Codes given as a list (`["DF", "MB001"]`) or a comma-separated string (`"DF,MB001"`)."""
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        items = value
    else:
        raise ConfigError(f"{where} must be a list of codes or a comma-separated string")
    return [item.strip().upper() for item in items if item.strip()]


def load(start: Path) -> Settings:
    """Read `[tool.argus]` from the nearest pyproject.toml; no file or no table means no settings."""
    path = find_pyproject(start)
    if path is None:
        return Settings()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    table = data.get("tool", {}).get("argus")
    if table is None:
        return Settings(source=path)
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.argus] must be a table")
    settings = Settings(source=path)
    if "select" in table:
        settings.select = split_codes(table["select"], f"{path}: tool.argus.select")
    if "ignore" in table:
        settings.ignore = split_codes(table["ignore"], f"{path}: tool.argus.ignore")
    return settings

"""Bring the real-world packages onto the machine: pinned wheels from the package registry,
verified by hash, unpacked (Python sources only) into a git-ignored folder.

Kept apart from `realworld.py` so the download, the unpacking and the search for kernel files
can be tested on a local fake package without the network or the checker.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

# A Python file is searched for kernels only if it mentions this (every @triton.jit module does).
TRITON_MARKER = b"triton"
# A larger source file is skipped as unreadable data rather than parsed (none of the pinned
# packages comes near it).
MAX_SOURCE_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class Pin:
    """One package at one version, and the sha256 of the wheel the registry served for it."""

    name: str  # the registry's name, as `pip download` takes it
    version: str
    sha256: str | None  # None: accept what the registry serves (tests of fake packages)

    @property
    def label(self) -> str:
        return f"{self.name}=={self.version}"


# Current versions on 2026-12-01; hashes of the wheels `pip download --no-deps` fetched that day.
PINS: tuple[Pin, ...] = (
    Pin("liger-kernel", "0.8.5", "60789cd576af073ab9b192b570d2597fd0cdad489cd62fb44fb16256d43754c9"),
    Pin("flag-gems", "5.0.2", "d7c5a6121bf2d3f7daddde43bfa7cae739de6cb5b294dcfe7ae6173045c35552"),
    Pin("fla-core", "0.6.0", "b0708b70e0b119cd58a0a5146ea56cb175cef6ed969d8ac60267e3e077ce3ebd"),
)


class FetchError(RuntimeError):
    """The package could not be brought here (pip failed, no wheel, wrong hash, bad archive)."""


def _normalized(name: str) -> str:
    """Wheel file names spell `flag-gems` as `flag_gems` (PEP 427); compare in that form."""
    return name.lower().replace("-", "_").replace(".", "_")


def find_wheel(folder: Path, pin: Pin) -> Path | None:
    prefix = f"{_normalized(pin.name)}-{pin.version}-"
    found = sorted(p for p in folder.glob("*.whl") if p.name.lower().startswith(prefix))
    return found[0] if found else None


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def download(pin: Pin, folder: Path, pip_args: tuple[str, ...] = (), timeout_s: float = 600) -> Path:
    """The pinned wheel in `folder`, downloaded with pip unless it is already there.

    `pip_args` go to `pip download` as they are (the tests point it at a local folder with
    `--no-index --find-links DIR`). The hash is checked on every call, so a truncated or
    replaced file is never analyzed."""
    folder.mkdir(parents=True, exist_ok=True)
    wheel = find_wheel(folder, pin)
    if wheel is None:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
        cmd += ["--dest", str(folder), *pip_args, pin.label]
        try:
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired as exc:
            raise FetchError(f"pip download {pin.label} did not finish in {timeout_s:.0f} s") from exc
        if run.returncode != 0:
            tail = (run.stderr or run.stdout).strip().splitlines()[-3:]
            raise FetchError(f"pip download {pin.label} failed: {' / '.join(tail)}")
        wheel = find_wheel(folder, pin)
        if wheel is None:
            raise FetchError(f"pip download {pin.label} left no wheel in {folder}")
    if pin.sha256 is not None:
        got = sha256_of(wheel)
        if got != pin.sha256:
            raise FetchError(f"{wheel.name}: sha256 {got} is not the pinned {pin.sha256}")
    return wheel


def unpack_sources(wheel: Path, dest: Path) -> Path:
    """Extract the wheel's `.py` files under `dest/<name>-<version>/`; returns that folder.

    Only Python sources are written, and a member whose path would leave the folder (absolute,
    `..`) is refused, since the archive comes from outside."""
    name, version = wheel.name.split("-")[:2]  # PEP 427: name-version-...; neither holds a dash
    root = dest / f"{name}-{version}"
    marker = root / ".unpacked"
    if marker.exists():
        return root
    try:
        with zipfile.ZipFile(wheel) as zf:
            for info in zf.infolist():
                if info.is_dir() or not info.filename.endswith(".py"):
                    continue
                target = (root / info.filename).resolve()
                if not target.is_relative_to(root.resolve()):
                    raise FetchError(f"{wheel.name}: member {info.filename!r} leaves the folder")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(zf.read(info))
    except zipfile.BadZipFile as exc:
        raise FetchError(f"{wheel.name} is not a valid wheel: {exc}") from exc
    marker.write_text(wheel.name + "\n")
    return root


def triton_files(root: Path) -> list[Path]:
    """The `.py` files under `root` that mention Triton, in a stable order."""
    out = []
    for path in sorted(root.rglob("*.py")):
        try:
            if path.stat().st_size > MAX_SOURCE_BYTES:
                continue
            if TRITON_MARKER in path.read_bytes():
                out.append(path)
        except OSError:
            continue
    return out

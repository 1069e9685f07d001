"""Argus's one installed import namespace.

The repository keeps its folders `analyzers/`, `agent/` and `knowledge/` at the top (the design fixes
that layout), but those names are far too generic to install into a user's site-packages: a user's
own `analyzers/` package would shadow ours, or ours theirs. So they are installed as
`argus.analyzers`, `argus.agent` and `argus.knowledge` (see `setup.py`).

Run from a source tree without installing (``PYTHONPATH=$PWD``, as on the GPU machine), the folders
are siblings of this one rather than inside it; the package path then also looks in the repository
root, so that `argus.analyzers` resolves to the sibling folder. An installed copy has the folders
inside and leaves the path alone.
"""

from pathlib import Path as _Path

_SUBPACKAGES = ("analyzers", "agent", "knowledge")
_here = _Path(__file__).resolve().parent
_root = _here.parent
if not (_here / "analyzers").is_dir() and all((_root / n / "__init__.py").is_file() for n in _SUBPACKAGES):
    __path__.append(str(_root))  # noqa: F821 - a package's __path__ is defined by the import system

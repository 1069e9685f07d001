"""What a launcher's cache-key texts depend on, remembered between checks of one document.

A kernel's cache key (cache_keys.kernel_key) holds the texts of the files and functions its
launchers' host code reads (`LaunchFunctions.other_texts`). Finding those means gathering the
launcher's host functions (model/host_functions.gather_functions: an AST walk of the launcher
and of every function it reaches, and an `ast.unparse` of the file's own ones), which took three
quarters of an edit that reused every kernel's findings. That answer depends on little: the
launcher's own text, the definitions of the names it looked up in its file, the module constants
it read, the file's imports, and the texts of the other files it read. `LaunchTextMemo` keeps the
answer by the launcher's text, with exactly those dependencies (`LaunchDeps`, recorded while the
functions are gathered), and gives it back only when each of them is what it was: any edit to a
definition or constant it read, to the imports, or to a file it read, gathers again.
"""

from __future__ import annotations

import ast
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from argus.analyzers.host_sources import ModuleFunctions, plain_definitions
from argus.analyzers.imports import ImportRef
from tree_sitter import Node

if TYPE_CHECKING:  # module_view builds the recorders: imported only for the annotations
    from argus.analyzers.module_view import ModuleView
    from argus.analyzers.project import SourceSet

MEMO_LAUNCHERS = 256  # launchers remembered per document (a few kB each)
MEMO_VARIANTS = 4  # answers kept per launcher text, each with what it was gathered from


@dataclass
class LaunchDeps:
    """Everything a launcher's gathered functions were computed from, besides its own text."""

    #: name looked up as a function of the file -> that definition's text (None: there was none)
    local: dict[str, bytes | None] = field(default_factory=dict)
    #: module constant looked up -> `ast.dump` of its expression (None: no such constant)
    constants: dict[str, str | None] = field(default_factory=dict)
    imports: dict[str, ImportRef] = field(default_factory=dict)
    #: other files read through the project -> their text (None: unreadable)
    reads: dict[str, bytes | None] = field(default_factory=dict)

    def key_texts(self, home: str) -> dict[str, bytes]:
        """What the kernel's cache key must hold of these (besides the functions' texts, which
        `LaunchFunctions.other_texts` gives): the constants read, the imports, the other files
        read (a constant imported from a module none of whose functions is called, too)."""
        out = {path: text for path, text in self.reads.items() if text is not None and path != home}
        consts = sorted((name, dump) for name, dump in self.constants.items() if dump is not None)
        if consts:
            out[f"{home}#constants"] = repr(consts).encode()
        if self.imports:
            out[f"{home}#imports"] = repr(sorted(self.imports.items())).encode()
        return out

    def still_hold(self, view: ModuleView, imports: dict[str, ImportRef], project: SourceSet | None) -> bool:
        """Whether each dependency is, in `view` (and its project), what it was."""
        if imports != self.imports:
            return False
        defs = plain_definitions(view)
        if any(_node_text(view, defs.get(name)) != text for name, text in self.local.items()):
            return False
        if any(_dump(view.const_nodes.get(name)) != dump for name, dump in self.constants.items()):
            return False
        if project is None:
            return not self.reads
        return all(project.text_of(path) == text for path, text in self.reads.items())


class RecordingFunctions(ModuleFunctions):
    """The file's `ModuleFunctions`, noting in `deps` every definition and constant it is asked
    for (answers unchanged)."""

    def __init__(self, deps: LaunchDeps, *args: Any) -> None:
        super().__init__(*args)
        self.deps = deps
        deps.imports = dict(self.imports)

    def local(self, name: str) -> tuple[ast.FunctionDef, ModuleFunctions, str] | None:
        if name not in self.deps.local:
            self.deps.local[name] = _node_text(self.view, plain_definitions(self.view).get(name))
        return super().local(name)

    def constant(self, name: str, depth: int = 0) -> tuple[bool, Any]:
        head, _, tail = name.partition(".")
        if not tail and head not in self.deps.constants:
            self.deps.constants[head] = _dump(self.view.const_nodes.get(head))
        return super().constant(name, depth)


@contextmanager
def recording_reads(project: SourceSet | None, deps: LaunchDeps) -> Iterator[None]:
    """Note in `deps.reads` every file the project reads meanwhile (the project's reader is
    wrapped for the duration; a SourceSet serves one check on one thread)."""
    if project is None:
        yield
        return
    read: Callable[[str], bytes | None] = project._read

    def noted(path: str) -> bytes | None:
        text = read(path)
        deps.reads.setdefault(path, text)
        return text

    project._read = noted
    try:
        yield
    finally:
        project._read = read


class LaunchTextMemo:
    """A small thread-safe LRU: launcher key -> the last few (dependencies, other texts) it was
    gathered with. A launcher keeps its text while a host function it calls is edited and the
    edit undone (the latency benchmark's edit and undo, a person's typing and deleting): with
    one answer per key the edit's answer replaced the original's, and the undo gathered again
    (its launchers' functions and the file's kernels' writes, 20-30 ms on a 900-line file)."""

    def __init__(self, capacity: int = MEMO_LAUNCHERS, variants: int = MEMO_VARIANTS) -> None:
        self._data: OrderedDict[str, list[tuple[LaunchDeps, dict[str, bytes]]]] = OrderedDict()
        self._lock = threading.Lock()
        self.capacity = capacity
        self.variants = variants
        self.hits = 0
        self.misses = 0

    def get(
        self, key: str, view: ModuleView, imports: dict[str, ImportRef], project: SourceSet | None
    ) -> dict[str, bytes] | None:
        with self._lock:
            held = list(self._data.get(key, ()))
            if held:
                self._data.move_to_end(key)
        for deps, texts in held:  # (most recent first)
            if deps.still_hold(view, imports, project):
                self.hits += 1
                return texts
        self.misses += 1
        return None

    def put(self, key: str, deps: LaunchDeps, texts: dict[str, bytes]) -> None:
        with self._lock:
            held = [(deps, texts), *self._data.get(key, ())][: self.variants]
            self._data[key] = held
            self._data.move_to_end(key)
            while len(self._data) > self.capacity:
                self._data.popitem(last=False)


def _node_text(view: ModuleView, node: Node | None) -> bytes | None:
    return None if node is None else view.source[node.start_byte : node.end_byte]


def _dump(node: object) -> str | None:
    """A constant's expression as a comparable string (the `f().locals` entries are dicts and
    lists of expressions)."""
    if node is None:
        return None
    if isinstance(node, dict):
        return repr({k: _dump(v) for k, v in node.items()})
    if isinstance(node, list):
        return repr([_dump(v) for v in node])
    return ast.dump(node, include_attributes=False) if isinstance(node, ast.AST) else repr(node)

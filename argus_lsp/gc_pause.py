"""Keep the garbage collector's full collections short in the long-running processes (the
language server and its check workers).

A full collection scans every object the collector tracks. After start-up those are mostly the
imported modules' functions, classes and tables (pygls, lsprotocol's converters, numpy, the
checker: about 70,000 objects), and one full collection of them took 70-80 ms of CPU, run on
whichever thread happened to allocate, holding the interpreter lock meanwhile: the message loop
could not answer a hover for that long, and for 300 ms and more of wall time on a loaded core
(`python benchmarks/lsp_gc_pause.py`). Those objects live as long as the process, so they are
moved to the permanent generation once, after start-up (`gc.freeze`), and never scanned again;
what is allocated later (documents, trees, findings, traces) is collected as before.
"""

from __future__ import annotations

import gc


def freeze_start_up() -> None:
    """Collect what start-up left over, then exempt every object alive now from later
    collections (call once, after the imports, before serving)."""
    gc.collect()
    gc.freeze()

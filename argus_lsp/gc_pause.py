"""Keep the garbage collector's full collections short in the long-running processes (the
language server and its check workers) and in `argus check`, which checks many files in one.

A full collection scans every object the collector tracks. After start-up those are mostly the
imported modules' functions, classes and tables (pygls, lsprotocol's converters, numpy, the
checker: about 70,000 objects), and one full collection of them took 70-80 ms of CPU, run on
whichever thread happened to allocate, holding the interpreter lock meanwhile: the message loop
could not answer a hover for that long, and for 300 ms and more of wall time on a loaded core
(`python benchmarks/lsp_gc_pause.py`). Those objects live as long as the process, so they are
moved to the permanent generation once, after start-up (`gc.freeze`), and never scanned again;
what is allocated later (documents, trees, findings, traces) is collected as before.

What is allocated later still made the tail of the edits' latency: a check parses the module and
the kernel, binds and interprets, and with the default threshold (a young collection every 700
net allocations) much of that survives two young collections while the check still holds it, so
it is promoted to the oldest generation, which is then collected in full each time it grew by a
quarter: 50-120 ms of CPU a time over the documents' trees and caches (the analyzers' module tree
memo holds up to 16 module trees), landing on whichever edit happened to allocate
(`benchmarks/lsp_edit_costs.py --gc-stats`: 12 full collections, 1.1 s of the 180 edits' 5 s).
A young generation of `YOUNG` objects lets a check's temporaries die young (they are freed by
their reference counts before a collection sees them): the same replay then makes no full
collection and spends 0.3 s in the collector. Cyclic garbage waits for at most that many
allocations longer. `argus check` of a package is the same work file after file: on the 35
real files around the checker's p95 the young generation of `YOUNG` takes 4.7% less CPU
(55.9 -> 53.4 s, the two settings alternating file by file in one process).
"""

from __future__ import annotations

import atexit
import gc

#: net allocations between two young collections (CPython's default: 700)
YOUNG = 50_000


def freeze_start_up() -> None:
    """Collect what start-up left over, then exempt every object alive now from later
    collections, and collect the young generation less often (call once, after the imports,
    before serving)."""
    gc.collect()
    gc.freeze()
    # at exit, the frozen objects go back to the collector, so the interpreter's last collection
    # frees them as it would have (extension modules that count their live objects at exit,
    # Triton's nanobind bindings, otherwise report them as leaked)
    atexit.register(gc.unfreeze)
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG, middle, old)


def freeze_once() -> None:
    """`freeze_start_up` unless this process froze already (a process that runs the CLI's
    check more than once, as the test suite does, collects in full only the first time)."""
    if gc.get_freeze_count() == 0:
        freeze_start_up()

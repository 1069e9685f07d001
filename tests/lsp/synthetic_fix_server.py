"""The real server with one synthetic rule added on top of `check_source`, for tests only.

It reports every `tl.store(...)` call without `mask=` (message "synthetic unmasked store") with a
quick fix that adds `, mask=mask`, so the fix path (diagnostic `data` -> code action -> edit ->
diagnostic gone) is exercised whatever the real rules report at the time.
"""

from __future__ import annotations

import re
import sys

from analyzers import Finding, Fix, Severity, Span, TextEdit, check_source
from argus_lsp.features import diagnostics

STORE = re.compile(rb"tl\.store\(([^()\n]*)\)")
MESSAGE = "synthetic unmasked store"


def with_synthetic(source: bytes, path: str, **kwargs) -> list[Finding]:
    out = list(check_source(source, path, **kwargs))
    for m in STORE.finditer(source):
        if b"mask=" in m.group(1):
            continue
        start, end = m.start(), m.end()
        row = source.count(b"\n", 0, start)
        col = start - (source.rfind(b"\n", 0, start) + 1)
        span = Span(start, end, (row, col), (row, col + end - start))
        fix = Fix("Add mask=mask", (TextEdit(end - 1, end - 1, ", mask=mask"),))
        out.append(
            Finding("MB002", "oob-store", Severity.ERROR, "k", span, MESSAGE, {"summary": "synthetic"}, fix)
        )
    return out


if __name__ == "__main__":
    diagnostics.check_source = with_synthetic
    from argus_lsp.server import main

    sys.exit(main())

"""The Argus language server with gate 3's clock replaced, for tests without a GPU.

Run as a script (`python tests/lsp/optimize_server.py`, the pytest-lsp and real-editor tests do): it
sets `argus_lsp.features.optimize.TIMER`, then serves on stdio exactly as `argus serve` does. The
timer answers milliseconds per served shape: the user's kernel 10, a candidate whose source says
`# FAST` 5, `# SLOW` 20, any other 10. The agent notes in every result that the timer was injected.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from argus_lsp.features import optimize as optimize_feature  # noqa: E402
from argus_lsp.server import main  # noqa: E402


def fake_timer(candidate) -> dict[str, float]:
    ms = 10.0
    if candidate is not None and "# FAST" in candidate.source:
        ms = 5.0
    elif candidate is not None and "# SLOW" in candidate.source:
        ms = 20.0
    return {"served": ms}


if __name__ == "__main__":
    optimize_feature.TIMER = fake_timer
    sys.exit(main(sys.argv[1:] if sys.argv[1:] != ["serve"] else []))

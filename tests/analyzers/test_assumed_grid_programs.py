"""A kernel with no launch the checker can bind runs two programs per probe, not every corner.

Its grid is assumed, so coverage and races are not judged on it (interpreter.finish,
access_checks): only what each program does alone is, and the origin and the last corner show
that (lowest addresses; every axis at its tail). flag-gems' flash kernels, launched through a
`*params.args()` spread, ran all eight corners of an assumed (2, 2, 2) grid in each of four
probes: 7.6 s of one file's 9.1 s.
"""

from __future__ import annotations

from argus.analyzers.interp import interpreter
from argus.analyzers.interp.programs import _assumed_grid_programs

from tests.analyzers.kernel_checks import findings

UNBOUND = """
@triton.jit
def shifted_copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs + 1, mask=offs < n)
    tl.store(y_ptr + offs, x, mask=offs < n)
"""


def test_the_origin_and_the_last_corner_stand_for_an_assumed_grid() -> None:
    assert _assumed_grid_programs((2, 2, 2), False) == [(0, 0, 0), (1, 1, 1)]
    assert _assumed_grid_programs((3, 1, 1), False) == [(0, 0, 0), (2, 0, 0)]
    assert _assumed_grid_programs((1, 1, 1), False) == [(0, 0, 0)]
    assert _assumed_grid_programs((4, 5, 1), True) == [(0, 0, 0), (1, 1, 0), (3, 4, 0)]


def test_an_unbound_kernel_runs_two_programs_a_probe_and_keeps_its_finding(monkeypatch) -> None:
    runs: list[tuple[str, tuple[int, int, int]]] = []
    original = interpreter.Interpreter.run_program

    def counted(self, address_only: bool) -> None:
        runs.append((self.launch.kind, self.pid))
        original(self, address_only)

    monkeypatch.setattr(interpreter.Interpreter, "run_program", counted)
    found = findings(UNBOUND)
    kinds = {kind for kind, _ in runs}
    assert kinds and all(sum(k == kind for k, _ in runs) <= 2 for kind in kinds), runs
    # the read one element past the end, at the last program's tail
    assert any(f.code == "MB001" and f.line == 10 for f in found), [(f.code, f.line) for f in found]

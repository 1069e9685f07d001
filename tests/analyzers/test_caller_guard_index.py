"""binder_callers' caller search reads the module once (one index per module, one answer per
function) and skips modules whose text never names the function outside its `def`: these
tests pin that the answers are the ones a walk over every function gives (the speed change of
branch `speed2` must not change a finding), including calls from nested functions, method
calls, a caller that is itself nested, and names that appear only in comments."""

from __future__ import annotations

import ast

from argus.analyzers.model.binder_callers import caller_guard
from argus.analyzers.model.kernel import SourceMap
from argus.analyzers.model.launch_site import LaunchSite

_MODULE = """
def _launch(x, n, block):
    pass


def guarded(x, n, block):
    even = n % block == 0
    if even:
        _launch(x, n, block)


def outer(x, n, block):
    def inner():
        if n % block == 0:
            return self_obj._launch(x, n, block)
    return inner


def lonely(x):  # only `lonely` itself names it; a comment says: lonely(x)
    pass


def unguarded_user(x, n):
    return {lonely: 1}
"""


def _site(text: str, name: str) -> LaunchSite:
    src = text.encode()
    starts = [0]
    for line in src.split(b"\n")[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    func = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef) and n.name == name)
    return LaunchSite(func, func, func.body, SourceMap(src, starts, 0, 0))


def test_guards_of_plain_nested_and_method_callers_are_all_read() -> None:
    # `guarded` tests through a local (`even`), `inner` (nested in `outer`) tests in place:
    # both relate sizes, so the launch runs only under them; the first caller's test is named
    assert caller_guard(_site(_MODULE, "_launch")) == "even"


def test_one_unguarded_caller_anywhere_makes_the_launch_unguarded() -> None:
    text = _MODULE + "\n\ndef careless(x):\n    def deep():\n        _launch(x, 3, 4)\n    return deep\n"
    assert caller_guard(_site(text, "_launch")) is None


def test_a_name_written_only_in_its_def_and_comments_has_no_guard() -> None:
    assert caller_guard(_site(_MODULE, "lonely")) is None


def test_a_caller_found_after_the_module_was_indexed_for_another_function() -> None:
    # the index is per module text: an edited module (one more caller) is indexed again
    assert caller_guard(_site(_MODULE, "_launch")) == "even"
    edited = _MODULE.replace("    even = n % block == 0\n    if even:\n", "    if True:\n")
    assert caller_guard(_site(edited, "_launch")) is None

"""The kernel cache's second level leaves the host code a launcher reads out of its key
(issue 13: a letter typed in a host function that an autograd `forward` calls re-interpreted
all five kernels of liger's grpo_loss.py, 630-700 ms): the binding's fingerprint holds what the
interpretation reads of it, and what the rules read of host code (rule_reads.py: the negative
fills behind a loaded index, the names a launch passes, scratch buffers) is kept beside the
findings and asked again on the new text.

Real checker and kernels; each cached result must equal a cold check of the same text."""

from __future__ import annotations

from argus.analyzers import KernelCache, check_source
from argus.analyzers.rule_reads import host_read, read_alike, recording

GATHER = '''import torch
import triton
import triton.language as tl


@triton.jit
def gather_kernel(ids_ptr, table_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    ids = tl.load(ids_ptr + offs, mask=mask, other=0)
    row = tl.load(table_ptr + ids, mask=mask)
    tl.store(out_ptr + offs, row, mask=mask)


def pad_ids(ids, n):
    padded = torch.zeros(n, dtype=torch.int64, device=ids.device)
    padded[: ids.numel()] = ids
    return padded


def gather(ids, table):
    n = 1024
    padded = pad_ids(ids, n)
    out = torch.empty(n, dtype=table.dtype, device=table.device)
    gather_kernel[(triton.cdiv(n, 128),)](padded, table, out, n, BLOCK=128)
    return out
'''


def edit(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1
    return text.replace(old, new)


def checked(text: str, cache: KernelCache) -> tuple[list, int, int, int]:
    """Findings through `cache`, with the first level's misses, the second's hits and misses."""
    before = cache.misses, cache.bound_hits, cache.bound_misses
    found = check_source(text, "k.py", cache=cache)
    return found, cache.misses - before[0], cache.bound_hits - before[1], cache.bound_misses - before[2]


def test_an_edit_in_a_host_function_the_launcher_calls_interprets_nothing() -> None:
    cache = KernelCache()
    checked(GATHER, cache)
    edited = edit(GATHER, "    padded[: ids.numel()] = ids\n", "    padded[: ids.numel()] = ids\n    tag = 1\n")
    found, misses, hits, _ = checked(edited, cache)
    assert (misses, hits) == (1, 1)  # the host function's text is in the first key, not the second
    assert found == check_source(edited, "k.py")
    assert sorted(f.code for f in found) == ["DF004", "MB005"]


def test_a_host_edit_that_changes_what_a_rule_reads_judges_again() -> None:
    # a negative fill of the index tensor in host code: MB005 becomes a warning (index_evidence.py);
    # the binding (an int64 tensor of n elements) is the same, the rule's read is not
    cache = KernelCache()
    (mb,) = [f for f in checked(GATHER, cache)[0] if f.code == "MB005"]
    assert mb.severity.value == "hint"
    filled = edit(GATHER, "torch.zeros(n, dtype", "torch.full((n,), -1, dtype")
    found, misses, _, _ = checked(filled, cache)
    assert misses == 1  # (the second level finds the binding, then the read answers otherwise)
    assert found == check_source(filled, "k.py")
    (mb,) = [f for f in found if f.code == "MB005"]
    assert mb.severity.value == "warning" and "fills the tensor" in mb.message
    # and back: the first text's findings come from the cache, equal to a cold check
    again, misses, _, _ = checked(GATHER, cache)
    assert misses == 0 and again == check_source(GATHER, "k.py")


def test_reads_are_recorded_with_their_answers_and_asked_again() -> None:
    calls = []

    @host_read
    def letters(source: bytes, wanted: str) -> int:
        calls.append(wanted)
        return source.count(wanted.encode())

    letters(b"abc", "a")  # outside a recording: nothing kept
    with recording() as reads:
        assert letters(b"banana", "a") == 3
        with recording() as inner:
            letters(b"banana", "n")
        assert [r[1:] for r in inner] == [(("n",), 2)]
    assert [r[1:] for r in reads] == [(("a",), 3)]
    assert read_alike(reads, b"cabana") and not read_alike(reads, b"cab")

# cause K6: sorted values are scattered to their rank among distinct values (a compaction): the destination index differs from the source's by design.
import torch
import triton
import triton.language as tl


@triton.jit
def unique_sorted_kernel(sorted_ptr, out_ptr, count_ptr, n, BLOCK: tl.constexpr):
    """One program: out[:count] = the distinct values of the sorted input, in order."""
    i = tl.arange(0, BLOCK)
    mask = i < n
    cur = tl.load(sorted_ptr + i, mask=mask, other=0)
    prev = tl.load(sorted_ptr + tl.maximum(i - 1, 0), mask=mask, other=0)
    starts = tl.where(mask & (i > 0), (cur != prev).to(tl.int32), 0)
    rank = tl.cumsum(starts, 0)
    tl.store(out_ptr + rank, cur, mask=mask)
    tl.store(count_ptr + i * 0, tl.max(rank, 0) + 1, mask=i == 0)


def unique_sorted(sorted_values):
    n = sorted_values.numel()
    out = torch.empty_like(sorted_values)
    count = torch.empty(1, dtype=torch.int32, device=sorted_values.device)
    unique_sorted_kernel[(1,)](sorted_values, out, count, n, BLOCK=triton.next_power_of_2(n))
    return out[: int(count.item())]


if __name__ == "__main__":
    x = torch.sort(torch.randint(0, 9, (37,))).values
    torch.testing.assert_close(unique_sorted(x), torch.unique(x))
    print("ok")

import sys

import torch
import triton
import triton.language as tl


@triton.jit
def _tile_coords(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M: tl.constexpr):
    group_id = tile_id // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + (tile_id % group_size_m)
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit
def matmul_tma_persistent(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_bn, stride_cm,
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr, NUM_SMS: tl.constexpr,
):
    """C = A @ B^T, A (M, K), B (N, K), both K-major."""
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_am, 1],
                                       block_shape=[BLOCK_SIZE_M, BLOCK_SIZE_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[stride_bn, 1],
                                       block_shape=[BLOCK_SIZE_N, BLOCK_SIZE_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[stride_cm, 1],
                                       block_shape=[BLOCK_SIZE_M, BLOCK_SIZE_N])

    start_pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    k_tiles = tl.cdiv(K, BLOCK_SIZE_K)
    num_tiles = num_pid_m * num_pid_n
    num_pid_in_group = GROUP_SIZE_M * num_pid_n

    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True):
        pid_m, pid_n = _tile_coords(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M)
        offs_am = pid_m * BLOCK_SIZE_M
        offs_bn = pid_n * BLOCK_SIZE_N

        accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for ki in range(k_tiles):
            offs_k = ki * BLOCK_SIZE_K
            a = a_desc.load([offs_am, offs_k])
            b = b_desc.load([offs_bn, offs_k])
            accumulator = tl.dot(a, b.T, accumulator)

        c_desc.store([offs_bn, offs_am], accumulator.to(tl.float16))  # expect: DF004  # also: GR001


def _alloc(size, alignment, stream):
    return torch.empty(size, device="cuda", dtype=torch.int8)


def matmul_nt(a, b, out=None, num_sms=None):
    M, K = a.shape
    N, K2 = b.shape
    assert K == K2 and a.stride(1) == 1 and b.stride(1) == 1
    if out is None:
        out = torch.empty((M, N), device=a.device, dtype=torch.float16)
    if a.is_cuda:
        triton.set_allocator(_alloc)
        num_sms = num_sms or torch.cuda.get_device_properties(a.device).multi_processor_count
    num_sms = num_sms or 4
    BM, BN, BK = 32, 32, 32
    num_tiles = triton.cdiv(M, BM) * triton.cdiv(N, BN)
    grid = (min(num_sms, num_tiles),)
    matmul_tma_persistent[grid](
        a, b, out, M, N, K,
        a.stride(0), b.stride(0), out.stride(0),
        BLOCK_SIZE_M=BM, BLOCK_SIZE_N=BN, BLOCK_SIZE_K=BK,
        GROUP_SIZE_M=4, NUM_SMS=grid[0],
    )
    return out


def reference(a, b):
    return (a.float() @ b.float().t()).half()


if __name__ == "__main__":
    import _check as c

    def case(M, N, K):
        # rows 16-byte aligned: K and N are multiples of 8
        a = c.padded(torch.randn(M, K).half(), col_pad=8)
        b = c.padded(torch.randn(N, K).half(), col_pad=8)
        out = c.poisoned((M, N), torch.float16, col_pad=8)
        matmul_nt(a, b, out, num_sms=3)
        return c.close("c", out, reference(a, b), atol=2e-2, rtol=1e-2)

    c.main(case, [(1, 8, 8), (32, 32, 32), (100, 72, 40), (70, 136, 96), (200, 24, 16)])

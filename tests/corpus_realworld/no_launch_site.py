# cause L5: launched from another module of the package; `counts` is (E, n_tiles), and only the masks' n_tiles is seen here.
import triton
import triton.language as tl


@triton.jit
def tile_prefix_sum_kernel(counts_ptr, n_tiles, BLOCK: tl.constexpr):
    """In place: row e of counts (E, n_tiles) becomes its exclusive prefix sum. Grid: (E,)."""
    e = tl.program_id(0).to(tl.int64)
    row_ptr = counts_ptr + e * n_tiles
    running = 0
    for start in range(0, n_tiles, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n_tiles
        c = tl.load(row_ptr + offs, mask=mask, other=0)
        tl.store(row_ptr + offs, tl.cumsum(c, 0) - c + running, mask=mask)
        running += tl.sum(c, 0)


if __name__ == "__main__":
    from _launchers import check_tile_prefix_sum

    check_tile_prefix_sum()
    print("ok")

# cause K10: a loop accumulator typed from an output the kernel's own file never allocates (`dtype=counts_ptr.dtype.element_ty`): here an int32 count buffer, not fp16.
# launched from _launchers.py, so the buffer's dtype is not known here.
import triton
import triton.language as tl


@triton.jit
def label_counts_kernel(labels_ptr, counts_ptr, n, BLOCK: tl.constexpr):
    """counts[c] = how many of the n labels equal c; one program per class."""
    c = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=counts_ptr.dtype.element_ty)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        labels = tl.load(labels_ptr + offs, mask=offs < n, other=-1)
        acc += (labels == c).to(counts_ptr.dtype.element_ty)
    tl.store(counts_ptr + c, tl.sum(acc, axis=0))


if __name__ == "__main__":
    from _launchers import check_label_counts

    check_label_counts()
    print("ok")

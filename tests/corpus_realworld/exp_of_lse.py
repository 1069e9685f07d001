# cause K2: `exp(x - lse)`, with the log-sum-exp finished in pass 1, and `exp` of a log-space target, are stable.
import torch
import triton
import triton.language as tl


@triton.jit
def soft_tv_kernel(s_ptr, s_stride, t_ptr, t_stride, loss_ptr, n_cols, BLOCK: tl.constexpr):
    """loss[row] = sum |softmax(s) - exp(t)| / 2, with t a row of log-probabilities."""
    row = tl.program_id(0).to(tl.int64)
    s_ptr += row * s_stride
    t_ptr += row * t_stride
    run_max = float("-inf")
    run_sum = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        s = tl.load(s_ptr + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        new_max = tl.maximum(run_max, tl.max(s, axis=0))
        run_sum = run_sum * tl.exp(run_max - new_max) + tl.sum(tl.exp(s - new_max), axis=0)
        run_max = new_max
    lse = run_max + tl.log(run_sum)
    total = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        s = tl.load(s_ptr + cols, mask=mask, other=float("-inf")).to(tl.float32)
        t = tl.load(t_ptr + cols, mask=mask, other=float("-inf")).to(tl.float32)
        p = tl.exp(s - lse)
        q = tl.exp(t)
        total += tl.sum(tl.abs(p - q), axis=0)
    tl.store(loss_ptr + row, total * 0.5)


def soft_tv(student_logits, teacher_logprobs):
    n_rows, n_cols = student_logits.shape
    assert teacher_logprobs.shape == student_logits.shape
    loss = torch.empty(n_rows, dtype=torch.float32, device=student_logits.device)
    soft_tv_kernel[(n_rows,)](
        student_logits,
        student_logits.stride(0),
        teacher_logprobs,
        teacher_logprobs.stride(0),
        loss,
        n_cols,
        BLOCK=64,
    )
    return loss


if __name__ == "__main__":
    s, t = torch.randn(3, 150) * 4, torch.log_softmax(torch.randn(3, 150), -1)
    want = (torch.softmax(s, -1) - t.exp()).abs().sum(-1) / 2
    torch.testing.assert_close(soft_tv(s, t), want)
    print("ok")

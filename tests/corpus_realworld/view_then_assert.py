# cause L4: `x.view(-1, n)` sizes rows from a total the probe chose freely; `assert dy.shape == y.shape` says both views have one row count, so a probe that breaks it is no launch.
import torch
import triton
import triton.language as tl


@triton.jit
def scale_rows(y, dy, dx, D, BD: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    y += row * D
    dy += row * D
    dx += row * D
    cols = tl.arange(0, BD)
    mask = cols < D
    a = tl.load(y + cols, mask=mask, other=0.0)
    b = tl.load(dy + cols, mask=mask, other=0.0)
    tl.store(dx + cols, a * b, mask=mask)


def scale(y: torch.Tensor, dy: torch.Tensor):
    y = y.view(-1, dy.shape[-1])
    dy = dy.view(-1, dy.shape[-1])
    assert dy.shape == y.shape
    dx = torch.empty_like(y)
    T, D = y.shape[0], y.shape[-1]
    scale_rows[(T,)](y, dy, dx, D, BD=triton.next_power_of_2(D))
    return dx


if __name__ == "__main__":
    y, dy = torch.randn(3, 5, 8), torch.randn(15, 8)
    torch.testing.assert_close(scale(y, dy), (y.reshape(-1, 8) * dy))
    print("ok")

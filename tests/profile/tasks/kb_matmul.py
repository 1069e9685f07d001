"""KernelBench-format task (Model, get_inputs, get_init_inputs, ModelNew) for the parser tests."""

import torch


class Model(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a @ b


class ModelNew(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(64, 32), torch.randn(32, 48)]


def get_init_inputs():
    return []

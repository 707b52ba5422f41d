"""WRONG: clamps in place inside `x.contiguous()`, which IS x when x is already contiguous, so the caller's tensor is overwritten, breaking "Compute into a new tensor" and "Your function must not modify its input"."""

import torch
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <ATen/ATen.h>
#include <torch/csrc/Exceptions.h>

at::Tensor relu(const at::Tensor& x) {
    TORCH_CHECK(x.scalar_type() == at::kFloat,
                "relu: expected a float32 tensor, got ", x.scalar_type());
    TORCH_CHECK(x.device().is_cpu(), "relu: expected a CPU tensor, got one on ", x.device());

    // contiguous() gives a packed buffer we can work in directly.
    at::Tensor out = x.contiguous();
    float* o = out.data_ptr<float>();
    const int64_t n = out.numel();
    for (int64_t i = 0; i < n; ++i) {
        if (o[i] < 0.0f) o[i] = 0.0f;
    }
    return out;
}
"""

_ext = load_inline(
    name="tutor_ch03_relu",
    cpp_sources=CPP_SOURCE,
    functions=["relu"],
    extra_cflags=["-O2"],
    no_implicit_headers=True,
)


def relu(x: torch.Tensor) -> torch.Tensor:
    return _ext.relu(x)

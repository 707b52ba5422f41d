"""WRONG: writes `in[i] > 0 ? in[i] : 0`, so NaN (for which every comparison is false) becomes 0, breaking "relu(NaN) is NaN in PyTorch ... NaN must stay NaN in the same places"."""

import torch
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <ATen/ATen.h>
#include <torch/csrc/Exceptions.h>

at::Tensor relu(const at::Tensor& x) {
    TORCH_CHECK(x.scalar_type() == at::kFloat,
                "relu: expected a float32 tensor, got ", x.scalar_type());
    TORCH_CHECK(x.device().is_cpu(), "relu: expected a CPU tensor, got one on ", x.device());

    const at::Tensor input = x.contiguous();
    at::Tensor out = at::empty_like(input);
    const float* in = input.data_ptr<float>();
    float* o = out.data_ptr<float>();
    const int64_t n = input.numel();
    for (int64_t i = 0; i < n; ++i) {
        o[i] = in[i] > 0.0f ? in[i] : 0.0f;
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

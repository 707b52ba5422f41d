"""WRONG: `in[i] <= 0 ? 0 : in[i]` keeps NaN but turns -0.0 into +0.0, while torch.relu(-0.0) is -0.0, breaking "must equal torch.relu(x) ... at the extremes (zeros of both signs ...)"."""

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
        o[i] = in[i] <= 0.0f ? 0.0f : in[i];
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

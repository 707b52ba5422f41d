"""WRONG: calls at::set_num_threads(hardware_concurrency()) on every call, so a caller who chose torch.set_num_threads(1) finds the process-wide intra-op thread count changed after one softmax, a global setting the task never asks to touch ("Optional: split the rows across threads with at::parallel_for")."""

import torch
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/Exceptions.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

template <typename scalar_t>
void softmax_rows(const scalar_t* x, scalar_t* out, int64_t begin, int64_t end, int64_t cols) {
    for (int64_t r = begin; r < end; ++r) {
        const scalar_t* in = x + r * cols;
        scalar_t* o = out + r * cols;
        scalar_t m = -std::numeric_limits<scalar_t>::infinity();
        for (int64_t j = 0; j < cols; ++j) m = std::max(m, in[j]);
        scalar_t sum = 0;
        for (int64_t j = 0; j < cols; ++j) {
            o[j] = std::exp(in[j] - m);
            sum += o[j];
        }
        const scalar_t inv = scalar_t(1) / sum;
        for (int64_t j = 0; j < cols; ++j) o[j] *= inv;
    }
}

at::Tensor softmax(const at::Tensor& x) {
    TORCH_CHECK(x.dim() == 2, "softmax: expected a 2-D (rows, cols) tensor, got ", x.dim(), " dimensions");
    TORCH_CHECK(x.device().is_cpu(), "softmax: expected a CPU tensor, got one on ", x.device());
    // Bonus: use every core for the rows.
    at::set_num_threads(std::max<int>(1, static_cast<int>(std::thread::hardware_concurrency())));
    const at::Tensor input = x.contiguous();
    at::Tensor out = at::empty_like(input);
    const int64_t rows = input.size(0), cols = input.size(1);
    AT_DISPATCH_FLOATING_TYPES(input.scalar_type(), "softmax", [&] {
        const scalar_t* in = input.data_ptr<scalar_t>();
        scalar_t* o = out.data_ptr<scalar_t>();
        const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(cols, 1));
        at::parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
            softmax_rows<scalar_t>(in, o, begin, end, cols);
        });
    });
    return out;
}
"""

_ext = load_inline(
    name="tutor_ch03_softmax",
    cpp_sources=CPP_SOURCE,
    functions=["softmax"],
    extra_cflags=["-O2"],
    no_implicit_headers=True,
)


def softmax(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension of a 2-D tensor."""
    return _ext.softmax(x)

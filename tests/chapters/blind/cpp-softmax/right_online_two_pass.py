"""RIGHT: an online softmax: one pass keeps the running max and rescales the running sum (in double) whenever the max grows, a second pass writes exp(x - m) / s; rows split with at::parallel_for, and -inf, +inf and NaN rows come out as torch.softmax gives them."""

import torch
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/Exceptions.h>

#include <algorithm>
#include <cmath>
#include <limits>

template <typename scalar_t>
void softmax_rows(const scalar_t* x, scalar_t* out, int64_t begin, int64_t end, int64_t cols) {
    using acc_t = double;
    const acc_t inf = std::numeric_limits<acc_t>::infinity();
    for (int64_t r = begin; r < end; ++r) {
        const scalar_t* in = x + r * cols;
        scalar_t* o = out + r * cols;
        acc_t m = -inf, s = 0;
        for (int64_t j = 0; j < cols; ++j) {
            const acc_t v = static_cast<acc_t>(in[j]);
            if (v > m) {                 // new max: rescale what was summed so far
                s = s * std::exp(m - v) + 1;
                m = v;
            } else if (v != -inf) {      // exp(-inf - m) would add nothing (or NaN if m is -inf)
                s += std::exp(v - m);    // NaN stays NaN, and poisons the row as in torch
            }
        }
        if (m == inf) s = std::numeric_limits<acc_t>::quiet_NaN();  // inf - inf: torch gives NaN
        for (int64_t j = 0; j < cols; ++j) {
            o[j] = static_cast<scalar_t>(std::exp(static_cast<acc_t>(in[j]) - m) / s);
        }
    }
}

at::Tensor softmax(const at::Tensor& x) {
    TORCH_CHECK(x.dim() == 2, "softmax: expected a 2-D (rows, cols) tensor, got ", x.dim(), " dimensions");
    TORCH_CHECK(x.is_cpu(), "softmax: expected a CPU tensor, got one on ", x.device());
    TORCH_CHECK(x.scalar_type() == at::kFloat || x.scalar_type() == at::kDouble,
                "softmax: expected float32 or float64, got ", x.scalar_type());
    const at::Tensor input = x.contiguous();
    const int64_t rows = input.size(0), cols = input.size(1);
    at::Tensor out = at::empty({rows, cols}, input.options());
    AT_DISPATCH_FLOATING_TYPES(input.scalar_type(), "softmax", [&] {
        const scalar_t* in = input.const_data_ptr<scalar_t>();
        scalar_t* o = out.mutable_data_ptr<scalar_t>();
        const int64_t grain = cols == 0 ? rows + 1 : std::max<int64_t>(1, 8192 / cols);
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

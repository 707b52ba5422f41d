"""Exercise: register a C++ function as a PyTorch custom op so torch.compile can keep it in the graph.

`_ext.row_logsumexp` (the C++ below, given and correct) works in eager mode, but torch.compile
cannot see inside a pybind11 function: with fullgraph=True, compiling anything that calls it
fails. Make `row_logsumexp` a custom op with torch.library.custom_op, and give it a fake
implementation with register_fake, so the compiler can trace it as one opaque node.

You do not need to change CPP_SOURCE: it is built once (10-20 s) and then loaded from the cache.
"""

import torch
from torch.utils.cpp_extension import load_inline

# The C++ side is given: a row-wise log-sum-exp, log(sum_j exp(x[r, j])), computed stably.
CPP_SOURCE = r"""
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/Exceptions.h>

#include <algorithm>
#include <cmath>
#include <limits>

at::Tensor row_logsumexp(const at::Tensor& x) {
    TORCH_CHECK(x.dim() == 2, "row_logsumexp: expected a 2-D tensor, got ", x.dim(), " dimensions");
    TORCH_CHECK(x.scalar_type() == at::kFloat && x.device().is_cpu(),
                "row_logsumexp: expected a float32 CPU tensor, got ", x.scalar_type(), " on ", x.device());
    const at::Tensor input = x.contiguous();
    const int64_t rows = input.size(0), cols = input.size(1);
    at::Tensor out = at::empty({rows}, input.options());
    const float* in = input.data_ptr<float>();
    float* o = out.data_ptr<float>();
    at::parallel_for(0, rows, 64, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            const float* row = in + r * cols;
            float m = -std::numeric_limits<float>::infinity();
            for (int64_t j = 0; j < cols; ++j) m = std::max(m, row[j]);
            if (!std::isfinite(m)) { o[r] = m; continue; }  // empty row, or +-inf in it
            double sum = 0.0;
            for (int64_t j = 0; j < cols; ++j) sum += std::exp(static_cast<double>(row[j] - m));
            o[r] = m + static_cast<float>(std::log(sum));
        }
    });
    return out;
}
"""

_ext = load_inline(
    name="tutor_ch03_logsumexp",
    cpp_sources=CPP_SOURCE,
    functions=["row_logsumexp"],
    extra_cflags=["-O2"],
    no_implicit_headers=True,
)



# TODO 1: make `row_logsumexp` an operator named "tutor_ch03::row_logsumexp" that torch.compile
#         can keep in its graph as one node. Watch out: the op's schema (its arguments, and
#         which of them it writes to) comes from what you declare; row_logsumexp writes to
#         nothing.
def row_logsumexp(x: torch.Tensor) -> torch.Tensor:
    """log(sum(exp(x), dim=1)) for a 2-D float32 CPU tensor: shape (rows, cols) -> (rows,)."""
    return _ext.row_logsumexp(x)


# TODO 2: tell the compiler what the op returns without running it: it traces with tensors
#         that have shapes, dtypes and devices but no data, so the C++ kernel cannot run on
#         them. What shape does one value per row have?

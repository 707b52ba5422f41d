"""WRONG: declares the schema from Python with torch.library.define and only registers the kernel in C++, so the operator does not exist for C++ callers or AOT programs that load the library without this Python file, breaking step 1 "declare it with TORCH_LIBRARY"."""

import torch
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/Exceptions.h>
#include <torch/library.h>

#include <cmath>

// The kernel (given): the root mean square of every row, sqrt(mean_j x[r, j]^2), accumulated
// in double. (rows, cols) -> (rows,), float32 or float64, CPU.
at::Tensor row_rms_cpu(const at::Tensor& x) {
    TORCH_CHECK(x.dim() == 2, "row_rms: expected a 2-D (rows, cols) tensor, got ", x.dim(), " dimensions");
    TORCH_CHECK(x.size(1) > 0, "row_rms: expected at least one column");
    const at::Tensor input = x.contiguous();
    const int64_t rows = input.size(0), cols = input.size(1);
    at::Tensor out = at::empty({rows}, input.options());
    AT_DISPATCH_FLOATING_TYPES(input.scalar_type(), "row_rms", [&] {
        const scalar_t* in = input.data_ptr<scalar_t>();
        scalar_t* o = out.data_ptr<scalar_t>();
        at::parallel_for(0, rows, 64, [&](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r) {
                double acc = 0.0;
                for (int64_t j = 0; j < cols; ++j) {
                    const double v = static_cast<double>(in[r * cols + j]);
                    acc += v * v;
                }
                o[r] = static_cast<scalar_t>(std::sqrt(acc / static_cast<double>(cols)));
            }
        });
    });
    return out;
}

// The schema is declared from Python below; the library only provides the CPU kernel.

TORCH_LIBRARY_IMPL(tutor_ch03_cpp, CPU, m) {
    m.impl("row_rms", &row_rms_cpu);
}
"""

torch.library.define("tutor_ch03_cpp::row_rms", "(Tensor x) -> Tensor")

load_inline(
    name="tutor_ch03_row_rms",
    cpp_sources=CPP_SOURCE,
    is_python_module=False,
    extra_cflags=["-O2"],
    no_implicit_headers=True,
)


@torch.library.register_fake("tutor_ch03_cpp::row_rms")
def _(x):
    return x.new_empty(x.shape[:1])


def row_rms(x: torch.Tensor) -> torch.Tensor:
    """Root mean square of every row of a 2-D float CPU tensor: (rows, cols) -> (rows,)."""
    return torch.ops.tutor_ch03_cpp.row_rms(x)

"""RIGHT: registers the kernel as a lambda under CompositeExplicitAutograd instead of &row_rms_cpu under CPU (which the guide says passes), and the fake is x.new_empty((x.size(0),))."""

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

TORCH_LIBRARY(tutor_ch03_cpp, m) {
    m.def("row_rms(Tensor x) -> Tensor");
}

TORCH_LIBRARY_IMPL(tutor_ch03_cpp, CompositeExplicitAutograd, m) {
    m.impl("row_rms", [](const at::Tensor& x) { return row_rms_cpu(x); });
}
"""

load_inline(
    name="tutor_ch03_row_rms",
    cpp_sources=CPP_SOURCE,
    is_python_module=False,
    extra_cflags=["-O2"],
    no_implicit_headers=True,
)


@torch.library.register_fake("tutor_ch03_cpp::row_rms")
def _row_rms_fake(x):
    return x.new_empty((x.size(0),))


def row_rms(x: torch.Tensor) -> torch.Tensor:
    """Root mean square of every row of a 2-D float CPU tensor: (rows, cols) -> (rows,)."""
    return torch.ops.tutor_ch03_cpp.row_rms(x)

"""WRONG: the fake passes dtype but not device (torch.empty(rows, dtype=x.dtype)), so it always answers "CPU": on meta inputs (the Meta kernel register_fake installs) it hands back a real CPU tensor, breaking "must produce exactly the metadata of the real output: shape, dtype, device ... Take them from the inputs"."""

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

TORCH_LIBRARY_IMPL(tutor_ch03_cpp, CPU, m) {
    m.impl("row_rms", &row_rms_cpu);
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
def _(x):
    return torch.empty(x.shape[0], dtype=x.dtype)  # the kernel is CPU-only anyway


def row_rms(x: torch.Tensor) -> torch.Tensor:
    """Root mean square of every row of a 2-D float CPU tensor: (rows, cols) -> (rows,)."""
    return torch.ops.tutor_ch03_cpp.row_rms(x)

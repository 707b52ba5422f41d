"""Reference solution: a C++ operator registered with TORCH_LIBRARY, loaded without any pybind11
module, called as torch.ops.tutor_ch03_cpp.row_rms, and given a Python fake implementation so
torch.compile(fullgraph=True) keeps it as one node."""

import torch
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
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

// The operator: its name and schema, once per namespace. A pure function of x: no (a!)
// annotation, a fresh output.
TORCH_LIBRARY(tutor_ch03_cpp, m) {
    m.def("row_rms(Tensor x) -> Tensor");  // key
}

// Its CPU kernel: the dispatcher calls row_rms_cpu when x is a CPU tensor.
TORCH_LIBRARY_IMPL(tutor_ch03_cpp, CPU, m) {  // key
    m.impl("row_rms", &row_rms_cpu);  // key
}
"""

# is_python_module=False: no pybind11 module, the shared library is loaded into the process
# with torch.ops.load_library, which runs the registrations above.
load_inline(
    name="tutor_ch03_row_rms_ref",
    cpp_sources=CPP_SOURCE,
    is_python_module=False,  # key
    extra_cflags=["-O2"],
    no_implicit_headers=True,
)


# The fake implementation: shapes, dtype and device only, no data. torch.compile and opcheck
# run it on fake tensors instead of the C++ kernel.
@torch.library.register_fake("tutor_ch03_cpp::row_rms")  # key
def _(x):
    return x.new_empty(x.shape[:1])  # key: one value per row, x's dtype and device


def row_rms(x: torch.Tensor) -> torch.Tensor:
    """Root mean square of every row of a 2-D float CPU tensor, through the registered op."""
    return torch.ops.tutor_ch03_cpp.row_rms(x)  # key

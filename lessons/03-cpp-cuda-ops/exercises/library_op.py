"""Exercise: register a C++ function as a PyTorch operator from C++ itself.

`row_rms_cpu` (given, correct) returns the root mean square of every row of a 2-D float32 or
float64 CPU tensor: shape (rows, cols) -> (rows,). Below it is bound with pybind11
(`functions=[...]`): eager PyTorch can call it, torch.compile cannot see into it.

Make it the operator `tutor_ch03_cpp::row_rms`, known to the dispatcher by name, so that
`torch.ops.tutor_ch03_cpp.row_rms(x)` works and `torch.compile(fullgraph=True)` keeps it in its
graph as a single node. No pybind11 module should be left: the shared library is loaded into
the process and registers the operator itself.

You do not need to change `row_rms_cpu`. The first build takes 20-60 s; later ones come from
the cache when the source is unchanged.
"""

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

// TODO 1: declare the operator row_rms in the namespace tutor_ch03_cpp, with its schema.
//   Watch out: the schema is a promise the compiler relies on: what goes in, what comes out,
//   and whether anything passed in is written to (row_rms writes to nothing).

// TODO 2: make row_rms_cpu the operator's kernel for tensors on the CPU.
"""

# TODO 3: build without a pybind11 module: the library only has to be loaded, so that the
#   registrations above run. (Then nothing is called through `_ext` any more.)
_ext = load_inline(
    name="tutor_ch03_row_rms",
    cpp_sources=CPP_SOURCE,
    functions=["row_rms_cpu"],
    extra_cflags=["-O2"],
    no_implicit_headers=True,
)


# TODO 4: tell torch.compile what the operator returns without running it. It traces with
#   tensors that have a shape, a dtype and a device but no data, so the C++ kernel cannot run
#   on them. The op is registered in C++, so refer to it by its qualified name.


def row_rms(x: torch.Tensor) -> torch.Tensor:
    """Root mean square of every row of a 2-D float CPU tensor: (rows, cols) -> (rows,)."""
    # TODO 5: call the operator, not the pybind11 function.
    return _ext.row_rms_cpu(x)

"""Exercise: ReLU written in C++ and built just in time with load_inline.

Fill in the body of `relu` in CPP_SOURCE. Importing this file builds the extension: about
10-20 s the first time, under a second when the source has not changed since the last build
(in tutor's checks, a few seconds after an edit: see BINDINGS_HEADERS).
A compile error is reported with the line of this file it is on.
"""

import torch
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <ATen/ATen.h>

at::Tensor relu(const at::Tensor& x) {
    // TODO 1: reject what this function cannot handle with a clear error: anything but
    //   float32 (the message must say "float32" and what it got), and anything not on the CPU
    //   (the message must say "CPU").

    // TODO 2: return a NEW tensor equal to torch.relu(x), for any shape and any memory layout
    //   (transposed, sliced with gaps, expanded). Watch out: raw pointers walk memory in order,
    //   and a NaN must stay NaN, as it does in torch.relu.

    TORCH_CHECK_NOT_IMPLEMENTED(false, "TODO: implement relu in CPP_SOURCE");
    return x;
}
"""

# The Python bindings load_inline writes after your code (for functions=[...]) need pybind11,
# which torch/csrc/Exceptions.h brings; your code does not. Kept after your code, that include
# lets tutor compile the bindings on their own, once, so an edit of your code rebuilds in
# seconds (plain load_inline builds it all as one file, and works the same).
BINDINGS_HEADERS = "#include <torch/csrc/Exceptions.h>"

_ext = load_inline(
    name="tutor_ch03_relu",       # the build folder's name: one name per extension
    cpp_sources=[CPP_SOURCE, BINDINGS_HEADERS],
    functions=["relu"],           # generate Python bindings for these C++ functions
    extra_cflags=["-O2"],
    no_implicit_headers=True,     # we include only the headers we use: builds twice as fast
)


def relu(x: torch.Tensor) -> torch.Tensor:
    return _ext.relu(x)

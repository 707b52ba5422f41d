"""Exercise: make a softmax CUDA kernel fast by giving each row a whole thread block.

The kernel below is correct but launched as <<<rows, 1>>>: one thread per row, walking its row
three times on its own while the other 31 lanes of its warp sit idle. Rewrite it so that one
block of kThreads threads handles each row: the threads share the columns (strided loops) and
combine their partial max and sum with warp shuffles and shared memory.

Importing this file compiles CPP_SOURCE with the C++ compiler and CUDA_SOURCE with nvcc; it
needs a CUDA GPU and the CUDA toolkit (nvcc) matching your PyTorch build.
"""

import torch
from torch.utils.cpp_extension import load_inline

# Host side, compiled by the C++ compiler: validate, allocate, launch, check the launch.
CPP_SOURCE = r"""
#include <ATen/ATen.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/Exceptions.h>

#include <limits>

// Defined in CUDA_SOURCE, which nvcc compiles.
void launch_softmax(const float* x, float* y, int64_t rows, int64_t cols, cudaStream_t stream);

at::Tensor softmax(const at::Tensor& x) {
    // TODO 1: refuse, with a clear error and before touching memory, what the kernel cannot
    //   handle: a tensor not on a CUDA device (the message must mention "CUDA"), anything but
    //   float32 (the message must mention "float32"), anything but 2-D.
    TORCH_CHECK(x.size(0) <= std::numeric_limits<int>::max(), "softmax: too many rows for one launch");

    // Make x's GPU the current device, so the output is allocated and the kernel runs there.
    const c10::cuda::CUDAGuard device_guard(x.device());
    const at::Tensor input = x.contiguous();
    at::Tensor out = at::empty_like(input);
    if (input.numel() == 0) return out;  // a launch with zero blocks is an error

    // PyTorch's current stream: the kernel is ordered with every other op on it.
    launch_softmax(input.data_ptr<float>(), out.data_ptr<float>(), input.size(0), input.size(1),
                   c10::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();  // raises if the launch itself failed (bad configuration, ...)
    return out;
}
"""

# Device side, compiled by nvcc.
CUDA_SOURCE = r"""
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

constexpr int kThreads = 256;             // threads per block: 8 warps of 32
constexpr int kWarps = kThreads / 32;

// TODO 2: the max and the sum of the 32 values held by one warp's lanes, without shared
//   memory; afterwards every lane must hold the warp's result.
__device__ __forceinline__ float warp_max(float v) { return v; }
__device__ __forceinline__ float warp_sum(float v) { return v; }

// TODO 3: the max and the sum over a whole block (kWarps warps). Watch out: every thread of the
//   block must take part (no early return), and shared memory written by one warp may only be
//   read after all of them have written it, and rewritten only after all have read it.

// TODO 4: one block per row, its threads sharing the row's columns: the row's max, the sum of
//   expf(x - max), then the output, each computed by all of the block's threads together.
//   This version is the "before": one thread walks the whole row three times.
__global__ void softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
    const float* row = x + static_cast<int64_t>(blockIdx.x) * cols;
    float* out = y + static_cast<int64_t>(blockIdx.x) * cols;

    float m = -INFINITY;
    for (int64_t j = 0; j < cols; ++j) m = fmaxf(m, row[j]);
    float sum = 0.0f;
    for (int64_t j = 0; j < cols; ++j) sum += expf(row[j] - m);
    for (int64_t j = 0; j < cols; ++j) out[j] = expf(row[j] - m) / sum;
}

void launch_softmax(const float* x, float* y, int64_t rows, int64_t cols, cudaStream_t stream) {
    // TODO 5: launch as many threads per block as the kernel now expects.
    softmax_kernel<<<static_cast<unsigned int>(rows), 1, 0, stream>>>(x, y, cols);
}
"""

_ext = load_inline(
    name="tutor_ch03_softmax_cuda",
    cpp_sources=CPP_SOURCE,
    cuda_sources=CUDA_SOURCE,
    functions=["softmax"],
    extra_cflags=["-O2"],
    extra_cuda_cflags=["-O2"],
    no_implicit_headers=True,
)


def softmax(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension of a 2-D float32 CUDA tensor."""
    return _ext.softmax(x)

"""Reference solution: a fused softmax CUDA kernel, one thread block per row.

Each block owns one row. Its threads read the row in a strided loop (neighbouring threads read
neighbouring addresses, so loads are coalesced), then reduce in two steps: the row max, then the
sum of exp(x - max), each reduced inside warps with shuffles and across warps through shared
memory. A third pass writes exp(x - max) / sum.
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
    TORCH_CHECK(x.is_cuda(), "softmax: expected a CUDA tensor, got one on ", x.device());
    TORCH_CHECK(x.scalar_type() == at::kFloat, "softmax: expected a float32 tensor, got ", x.scalar_type());
    TORCH_CHECK(x.dim() == 2, "softmax: expected a 2-D (rows, cols) tensor, got ", x.dim(), " dimensions");
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

// Butterfly reductions inside one warp: after 5 steps every lane holds the result.
__device__ __forceinline__ float warp_max(float v) {
    for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
}
__device__ __forceinline__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

// Every thread brings its partial value; every thread gets the whole block's result.
template <bool kMax>
__device__ float block_reduce(float v, float* partials) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = kMax ? warp_max(v) : warp_sum(v);          // 1. inside each warp, in registers
    if (lane == 0) partials[warp] = v;             // 2. one value per warp into shared memory
    __syncthreads();
    v = lane < kWarps ? partials[lane] : (kMax ? -INFINITY : 0.0f);
    v = kMax ? warp_max(v) : warp_sum(v);          // 3. each warp combines the kWarps values
    __syncthreads();                               // before anyone reuses partials
    return v;
}

__global__ void softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
    __shared__ float partials[kWarps];
    const float* row = x + static_cast<int64_t>(blockIdx.x) * cols;
    float* out = y + static_cast<int64_t>(blockIdx.x) * cols;

    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, row[j]);
    m = block_reduce<true>(m, partials);  // key

    float sum = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) sum += expf(row[j] - m);
    sum = block_reduce<false>(sum, partials);

    const float inv = 1.0f / sum;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) out[j] = expf(row[j] - m) * inv;
}

void launch_softmax(const float* x, float* y, int64_t rows, int64_t cols, cudaStream_t stream) {
    // One block per row, kThreads threads each, no dynamic shared memory, PyTorch's stream.
    softmax_kernel<<<static_cast<unsigned int>(rows), kThreads, 0, stream>>>(x, y, cols);  // key
}
"""

_ext = load_inline(
    name="tutor_ch03_softmax_cuda_ref",
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

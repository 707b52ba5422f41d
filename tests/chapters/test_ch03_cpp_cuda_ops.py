"""Chapter 3 (custom C++ and CUDA operators): solutions pass, realistic learner mistakes fail
with a reason that says what is wrong, and the CUDA exercise is skipped without a GPU.

Each mutant of a C++ exercise gets its own extension name, as a learner's file has one distinct
from the reference's: the same name with a different source would rebuild both every run.
The reasons are matched in any case: some start a sentence with a checked word.
"""

import re
from functools import partial

import pytest
import torch

from .conftest import (
    REJECTED,
    assert_fails,
    assert_passes,
    describe,
    mutant_seeds,
    mutate,
)

pytestmark = pytest.mark.slow

failed = partial(assert_fails, ignore_case=True)


def renamed(source: str, ext: str) -> str:
    """`source` with its extension `tutor_ch03_<op>_ref` named `tutor_ch03_<op>_<ext>` instead."""
    source, n = re.subn(r'name="(tutor_ch03_[a-z_]+?)_ref"', rf'name="\1_{ext}"', source)
    assert n == 1
    return source


@pytest.fixture
def ext_mutant(check_code, solution_text):
    """ext_mutant(exercise_id, (old, new), ..., ext=...) -> the verdict on the exercise's reference
    solution with the edits applied and its extension renamed (see `renamed`), run on several
    seeds that must all reject it (the first seed's verdict is returned)."""

    def run(exercise_id: str, *edits: tuple[str, str], ext: str):
        # Several seeds, like `mutant`; the extension is built once (same source, same name).
        source = renamed(mutate(solution_text(exercise_id), *edits), ext)
        verdicts = [
            check_code(exercise_id, source, seed=seed) for seed in mutant_seeds(f"{exercise_id}|{ext}|{edits!r}")
        ]
        for v in verdicts:
            assert v.status in REJECTED, f"the mutant was not rejected on seed {v.seed}\n{describe(v)}"
        return verdicts[0]

    return run


# -- cpp-relu -------------------------------------------------------------------------------------


def test_relu_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("cpp-relu"))
    assert "build_s" in v.figures


def test_relu_without_dtype_check_fails_on_the_message(ext_mutant):
    v = ext_mutant(
        "cpp-relu",
        (
            "    TORCH_CHECK(x.scalar_type() == at::kFloat,\n"
            '                "relu: expected a float32 tensor, got ", x.scalar_type());\n',
            "",
        ),
        ext="t_nodtype",
    )
    # data_ptr<float>() still throws, but with a message that does not say what was expected.
    failed(v, "float64", "should mention 'float32'", "expected scalar type Float")


def test_relu_without_contiguous_fails_on_a_strided_input(ext_mutant):
    v = ext_mutant(
        "cpp-relu", ("const at::Tensor input = x.contiguous();", "const at::Tensor input = x;"), ext="t_nocontig"
    )
    failed(v, "non-contiguous", "max abs error")


def test_relu_writing_into_its_input_fails(ext_mutant):
    v = ext_mutant("cpp-relu", ("at::Tensor out = at::empty_like(input);", "at::Tensor out = input;"), ext="t_inplace")
    # The call contract sees the write first (the check's own no_mutation would say the same).
    failed(v, "`relu(...)` left a change behind", "`x` was changed in place")


def test_relu_compile_error_points_at_the_learners_line(check_code, solution_text):
    src = renamed(
        mutate(
            solution_text("cpp-relu"), ("o[i] = in[i] < 0.0f ? 0.0f : in[i];", "o[i] = in[i] < 0.0f ? 0.0f : in[i]")
        ),
        "t_syntax",
    )
    line = next(i for i, text in enumerate(src.splitlines(), 1) if "o[i] = in[i] < 0.0f ? 0.0f : in[i]" in text)
    v = check_code("cpp-relu", src)
    failed(v, "does not compile", f"line {line} of your file", "error:")
    assert "build_s" in v.figures
    assert "did not build" in v.output


def test_relu_misnamed_function_is_blamed_on_the_bindings(ext_mutant):
    v = ext_mutant(
        "cpp-relu",
        ("at::Tensor relu(const at::Tensor& x)", "at::Tensor my_relu(const at::Tensor& x)"),
        ext="t_misnamed",
    )
    failed(v, "does not compile", "functions=")


def test_relu_dropping_nan_fails(ext_mutant):
    v = ext_mutant(
        "cpp-relu", ("o[i] = in[i] < 0.0f ? 0.0f : in[i];", "o[i] = in[i] > 0.0f ? in[i] : 0.0f;"), ext="t_nan"
    )
    failed(v, "where relu(x) is NaN", "keeps NaN as NaN")


def test_relu_without_device_check_fails(ext_mutant):
    v = ext_mutant(
        "cpp-relu",
        ('    TORCH_CHECK(x.device().is_cpu(), "relu: expected a CPU tensor, got one on ", x.device());\n', ""),
        ext="t_nodevice",
    )
    failed(v, "not on the CPU", "should mention 'cpu'")


def test_relu_turning_negative_zero_positive_fails(ext_mutant):
    # -0.0 == 0.0, so only the sign bit shows that `<=` sends -0.0 to the constant +0.0.
    v = ext_mutant(
        "cpp-relu", ("o[i] = in[i] < 0.0f ? 0.0f : in[i];", "o[i] = in[i] <= 0.0f ? 0.0f : in[i];"), ext="t_negzero"
    )
    failed(v, "the sign bit of relu(x)", "torch.relu(-0.0) is -0.0")


def test_relu_with_std_max_and_a_copy_passes(check_code, solution_text):
    # Correct but different: std::max keeps NaN (max(NaN, 0) returns its first argument), and
    # x.contiguous().clone() always copies.
    src = renamed(
        mutate(
            solution_text("cpp-relu"),
            ("o[i] = in[i] < 0.0f ? 0.0f : in[i];", "o[i] = std::max(in[i], 0.0f);"),
            ("at::Tensor out = at::empty_like(input);", "at::Tensor out = input.clone();"),
        ),
        "t_stdmax",
    )
    for seed in mutant_seeds("cpp-relu|t_stdmax"):
        assert_passes(check_code("cpp-relu", src, seed=seed))


# -- cpp-softmax ----------------------------------------------------------------------------------


def test_softmax_solution_passes_and_is_timed(solution_verdict):
    v = assert_passes(solution_verdict("cpp-softmax"))
    assert v.figures["time"]["learner_s"] > 0 and v.figures["vs torch.softmax"]["reference_s"] > 0


def test_softmax_without_max_subtraction_overflows(ext_mutant):
    v = ext_mutant(
        "cpp-softmax",
        ("scalar_t m = -std::numeric_limits<scalar_t>::infinity();", "scalar_t m = 0;"),
        ("for (int64_t j = 0; j < cols; ++j) m = std::max(m, in[j]);  // key\n", ""),
        ext="t_nomax",
    )
    failed(v, "NaN or inf", "subtract each row's max")


def test_softmax_over_the_wrong_dimension_fails(ext_mutant):
    v = ext_mutant(
        "cpp-softmax",
        (
            "const int64_t rows = input.size(0), cols = input.size(1);",
            "const int64_t rows = input.size(1), cols = input.size(0);",
        ),
        ext="t_wrongdim",
    )
    failed(v, "softmax(x) for", "max abs error")


def test_softmax_without_dtype_dispatch_fails_on_float64(ext_mutant):
    v = ext_mutant(
        "cpp-softmax",
        ('AT_DISPATCH_FLOATING_TYPES(input.scalar_type(), "softmax", [&] {  // key', "[&] { using scalar_t = float;"),
        ("    });\n    return out;", "    }();\n    return out;"),
        ext="t_float",
    )
    failed(v, "float64", "AT_DISPATCH_FLOATING_TYPES")


def test_softmax_without_contiguous_fails_on_a_transposed_input(ext_mutant):
    v = ext_mutant(
        "cpp-softmax", ("const at::Tensor input = x.contiguous();", "const at::Tensor input = x;"), ext="t_nocontig"
    )
    failed(v, "transposed", "max abs error")


def test_softmax_without_device_check_fails(ext_mutant):
    v = ext_mutant(
        "cpp-softmax",
        ('    TORCH_CHECK(x.device().is_cpu(), "softmax: expected a CPU tensor, got one on ", x.device());\n', ""),
        ext="t_nodevice",
    )
    failed(v, "not on the CPU", "should mention 'cpu'")


def test_softmax_float_sum_loses_float64_precision(ext_mutant):
    v = ext_mutant("cpp-softmax", ("scalar_t sum = 0;", "float sum = 0;"), ext="t_floatsum")
    failed(v, "float64", "max abs error")


def test_softmax_serial_loop_with_division_passes(check_code, solution_text):
    # Correct but different: no threads, a division per element instead of a multiply.
    src = renamed(
        mutate(
            solution_text("cpp-softmax"),
            ("for (int64_t j = 0; j < cols; ++j) o[j] *= inv;", "for (int64_t j = 0; j < cols; ++j) o[j] /= sum;"),
            (
                "        at::parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {\n"
                "            softmax_rows<scalar_t>(in, o, begin, end, cols);\n        });",
                "        (void)grain;\n        softmax_rows<scalar_t>(in, o, 0, rows, cols);",
            ),
        ),
        "t_serial",
    )
    for seed in mutant_seeds("cpp-softmax|t_serial"):
        assert_passes(check_code("cpp-softmax", src, seed=seed))


# -- cuda-softmax ---------------------------------------------------------------------------------
# Every test below but the first needs a CUDA GPU and nvcc; without them each is skipped with
# that reason (the check itself reports "needs a CUDA GPU", which the first test asserts).

needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (and nvcc) to build and run")

# Correct but different: 128 threads, one pass that keeps a running max and the sum of
# exponentials relative to it (online softmax), combined by a shared-memory tree reduction
# with __syncthreads() between steps instead of warp shuffles.
CUDA_TREE_REDUCTION = r"""
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

constexpr int kThreads = 128;

__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
    const float mm = fmaxf(m, m2);
    const float a = m == -INFINITY ? 0.0f : s * expf(m - mm);
    const float b = m2 == -INFINITY ? 0.0f : s2 * expf(m2 - mm);
    m = mm;
    s = a + b;
}

__global__ void softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
    __shared__ float s_max[kThreads];
    __shared__ float s_sum[kThreads];
    const float* row = x + static_cast<int64_t>(blockIdx.x) * cols;
    float* out = y + static_cast<int64_t>(blockIdx.x) * cols;
    float m = -INFINITY, s = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) merge(m, s, row[j], 1.0f);
    s_max[threadIdx.x] = m;
    s_sum[threadIdx.x] = s;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) {
            float mm = s_max[threadIdx.x], ss = s_sum[threadIdx.x];
            merge(mm, ss, s_max[threadIdx.x + stride], s_sum[threadIdx.x + stride]);
            s_max[threadIdx.x] = mm;
            s_sum[threadIdx.x] = ss;
        }
        __syncthreads();
    }
    const float row_max = s_max[0];
    const float inv = 1.0f / s_sum[0];
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) out[j] = expf(row[j] - row_max) * inv;
}

void launch_softmax(const float* x, float* y, int64_t rows, int64_t cols, cudaStream_t stream) {
    softmax_kernel<<<static_cast<unsigned int>(rows), kThreads, 0, stream>>>(x, y, cols);
}
"""

STRIDED_LOOP = "for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)"
CROSS_WARP = (
    "    if (lane == 0) partials[warp] = v;             // 2. one value per warp into shared memory\n"
    "    __syncthreads();\n"
    "    v = lane < kWarps ? partials[lane] : (kMax ? -INFINITY : 0.0f);\n"
    "    v = kMax ? warp_max(v) : warp_sum(v);          // 3. each warp combines the kWarps values\n"
    "    __syncthreads();                               // before anyone reuses partials\n"
)


def with_cuda_source(source: str, cuda: str) -> str:
    """`source` (a cuda-softmax solution) with its whole CUDA_SOURCE string replaced by `cuda`."""
    start = source.index('CUDA_SOURCE = r"""') + len('CUDA_SOURCE = r"""')
    end = source.index('"""', start)
    return source[:start] + cuda + source[end:]


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU path")
def test_cuda_softmax_is_skipped_without_a_gpu(check_code, solution_text, course):
    for source in (solution_text("cuda-softmax"), course.exercise("cuda-softmax").stub):
        v = check_code("cuda-softmax", source)
        assert v.status == "skipped", describe(v)
        assert "needs a CUDA GPU" in v.reason


def test_cuda_softmax_mutants_and_mistakes_apply_to_the_solution(solution_text, course):
    # Runs everywhere: the GPU-only tests below and the targeted hints edit text that must still
    # be in the solution, or they would silently test an unbroken kernel on a GPU machine.
    source = solution_text("cuda-softmax")
    assert source.count(STRIDED_LOOP) == 3 and CROSS_WARP in source
    with_cuda_source(source, CUDA_TREE_REDUCTION)
    for m in course.exercise("cuda-softmax").mistakes:
        assert m.mutant and mutate(source, *m.mutant) != source


@needs_gpu
def test_cuda_softmax_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("cuda-softmax"))
    assert v.figures["speedup_vs_one_thread_per_row"] >= 5


@needs_gpu
def test_cuda_softmax_one_thread_per_row_is_too_slow(check_code, course):
    # The stub's kernel (<<<rows, 1>>>) with the input checks done: correct, but slow.
    stub = course.exercise("cuda-softmax").stub.read_text(encoding="utf-8")
    src = mutate(
        stub,
        (
            "    TORCH_CHECK(x.size(0) <= std::numeric_limits<int>::max()",
            '    TORCH_CHECK(x.is_cuda(), "softmax: expected a CUDA tensor");\n'
            '    TORCH_CHECK(x.scalar_type() == at::kFloat, "softmax: expected a float32 tensor");\n'
            '    TORCH_CHECK(x.dim() == 2, "softmax: expected a 2-D tensor");\n'
            "    TORCH_CHECK(x.size(0) <= std::numeric_limits<int>::max()",
        ),
    )
    failed(check_code("cuda-softmax", src), "as fast as one thread per row")


@needs_gpu
def test_cuda_softmax_without_max_subtraction_overflows(ext_mutant):
    # exp(x) straight away: fine for small values, inf / inf = NaN from |x| ~ 90 on.
    v = ext_mutant(
        "cuda-softmax",
        (
            "    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, row[j]);\n"
            "    m = block_reduce<true>(m, partials);  // key\n",
            "    m = 0.0f;\n",
        ),
        ext="t_nomax",
    )
    failed(v, "NaN or inf", "subtract the row max")


@needs_gpu
def test_cuda_softmax_max_padded_with_zero_fails_on_negative_rows(ext_mutant):
    # The neutral value of the sum (0) used for the max too: a row of negative values gets max 0,
    # every expf underflows, 0 / 0.
    v = ext_mutant(
        "cuda-softmax",
        (
            "v = lane < kWarps ? partials[lane] : (kMax ? -INFINITY : 0.0f);",
            "v = lane < kWarps ? partials[lane] : 0.0f;",
        ),
        ext="t_pad0",
    )
    failed(v, "near -1000", "not the row's max")


@needs_gpu
def test_cuda_softmax_reducing_only_inside_each_warp_fails(ext_mutant):
    # Shuffles only: each warp normalises its own columns, so a row sums to its number of warps.
    v = ext_mutant("cuda-softmax", (CROSS_WARP, ""), ext="t_warponly")
    failed(v, "do not sum to 1", "every warp")


@needs_gpu
def test_cuda_softmax_one_column_per_thread_fails_on_long_rows(ext_mutant):
    # Each thread handles column threadIdx.x only: rows longer than the block leave columns
    # unwritten and out of the sums.
    v = ext_mutant(
        "cuda-softmax",
        (STRIDED_LOOP, "for (int64_t j = threadIdx.x; j < cols && j < kThreads; j += blockDim.x)"),
        ext="t_nostride",
    )
    failed(v, "softmax(x) for x of shape (")


@needs_gpu
def test_cuda_softmax_thread_local_max_fails(ext_mutant):
    # Each thread subtracts its own max: rows still sum to 1, the values are wrong.
    v = ext_mutant("cuda-softmax", ("    m = block_reduce<true>(m, partials);  // key\n", ""), ext="t_localmax")
    failed(v, "softmax(x) for x of shape (", "max abs error")


@needs_gpu
def test_cuda_softmax_without_dtype_check_fails_on_the_message(ext_mutant):
    v = ext_mutant(
        "cuda-softmax",
        (
            '    TORCH_CHECK(x.scalar_type() == at::kFloat, "softmax: expected a float32 tensor, got ", '
            "x.scalar_type());\n",
            "",
        ),
        ext="t_nodtype",
    )
    failed(v, "float64 input should raise an error", "should mention 'float32'")


@needs_gpu
def test_cuda_softmax_tree_reduction_online_variant_passes(check_code, solution_text):
    src = renamed(with_cuda_source(solution_text("cuda-softmax"), CUDA_TREE_REDUCTION), "t_tree")
    for seed in mutant_seeds("cuda-softmax|t_tree"):
        v = assert_passes(check_code("cuda-softmax", src, seed=seed))
        assert v.figures["speedup_vs_one_thread_per_row"] >= 5


# -- library-custom-op ----------------------------------------------------------------------------

FAKE = """@row_logsumexp.register_fake  # key
def _(x):
    return x.new_empty(x.shape[:-1])  # key: (rows, cols) -> (rows,), same dtype and device as x"""
DECORATOR = '@torch.library.custom_op("tutor_ch03::row_logsumexp", mutates_args=())  # key\n'


def test_custom_op_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("library-custom-op"))
    assert "compile_s" in v.figures


def test_custom_op_fake_with_one_value_per_column_fails(mutant):
    v = mutant("library-custom-op", "return x.new_empty(x.shape[:-1])", "return x.new_empty(x.shape[1:])")
    failed(v, "fake implementation says the output has shape", "one value per row")


def test_custom_op_fake_with_the_default_dtype_fails(mutant):
    # torch.empty(rows) is float32 on the CPU only while those are torch's defaults.
    v = mutant("library-custom-op", "return x.new_empty(x.shape[:-1])", "return torch.empty(x.shape[0])")
    failed(v, "default dtype is float64", "returns float64 on cpu", "not torch's defaults")


def test_custom_op_fake_pinning_the_row_count_recompiles(mutant):
    v = mutant("library-custom-op", "return x.new_empty(x.shape[:-1])", "return x.new_empty(int(x.shape[0]))")
    failed(v, "captured", "graphs for 3 different row counts", "int(x.shape[0])")


def test_custom_op_returning_a_view_for_one_column_fails(mutant):
    v = mutant(
        "library-custom-op",
        "    return _ext.row_logsumexp(x)\n",
        "    if x.shape[1] == 1:\n        return x.squeeze(1)\n    return _ext.row_logsumexp(x)\n",
    )
    failed(v, "returned a view of x", "never its input or a view of it")


def test_custom_op_with_a_wrong_gradient_fails(mutant):
    v = mutant(
        "library-custom-op",
        FAKE,
        FAKE + "\n\n\ndef _setup(ctx, inputs, output):\n    ctx.save_for_backward(inputs[0], output)\n\n\n"
        "def _backward(ctx, grad):\n    x, lse = ctx.saved_tensors\n"
        "    return grad.unsqueeze(-1) * torch.exp(x) / lse.unsqueeze(-1)\n\n\n"
        "row_logsumexp.register_autograd(_backward, setup_context=_setup)\n",
    )
    failed(v, "has an autograd formula", "softmax(x)")


def test_custom_op_registered_with_define_impl_and_torch_ops_passes(variant):
    # Issue 20: this correct registration was rejected ("does not contain your op as one node").
    variant(
        "library-custom-op",
        (DECORATOR, ""),
        (
            "def row_logsumexp(x: torch.Tensor) -> torch.Tensor:\n",
            'torch.library.define("tutor_ch03::row_logsumexp", "(Tensor x) -> Tensor")\n\n\n'
            '@torch.library.impl("tutor_ch03::row_logsumexp", "cpu")\n'
            "def _row_logsumexp_cpu(x: torch.Tensor) -> torch.Tensor:\n",
        ),
        (
            FAKE,
            '@torch.library.register_fake("tutor_ch03::row_logsumexp")\n'
            "def _(x):\n    return x.new_empty(x.shape[:-1])\n\n\n"
            "row_logsumexp = torch.ops.tutor_ch03.row_logsumexp",
        ),
    )


# -- torch-library-op -----------------------------------------------------------------------------
# Edits to the Python side only keep the reference's C++ source and extension name: the build is
# shared. Edits to the C++ source (or to what load_inline generates) get their own name.

ROW_RMS_FAKE = (
    '@torch.library.register_fake("tutor_ch03_cpp::row_rms")  # key\n'
    "def _(x):\n"
    "    return x.new_empty(x.shape[:1])  # key: one value per row, x's dtype and device\n"
)


def test_library_op_solution_passes(solution_verdict):
    v = assert_passes(solution_verdict("torch-library-op"))
    assert "compile_s" in v.figures and "build_s" in v.figures and v.figures["graphs_compiled"] == 1


def test_library_op_stub_fails_on_the_missing_operator(check_code, course):
    v = check_code("torch-library-op", course.exercise("torch-library-op").stub)
    failed(v, "there is no operator tutor_ch03_cpp::row_rms", "TORCH_LIBRARY")


def test_library_op_schema_declaring_a_mutation_fails(ext_mutant):
    v = ext_mutant(
        "torch-library-op",
        ('m.def("row_rms(Tensor x) -> Tensor");', 'm.def("row_rms(Tensor(a!) x) -> Tensor");'),
        ext="t_mutates",
    )
    failed(v, "says row_rms writes to x", "Tensor(a!)")


def test_library_op_kernel_registered_for_the_wrong_key_fails(ext_mutant):
    v = ext_mutant(
        "torch-library-op",
        ("TORCH_LIBRARY_IMPL(tutor_ch03_cpp, CPU, m) {  // key", "TORCH_LIBRARY_IMPL(tutor_ch03_cpp, CUDA, m) {"),
        ext="t_cudakey",
    )
    failed(v, "no kernel for CPU tensors", "CUDA")


def test_library_op_called_through_pybind11_fails_to_compile(ext_mutant):
    # The library still registers the op (its static initialisers run on import), but row_rms
    # calls the pybind11 binding, which torch.compile cannot trace.
    v = ext_mutant(
        "torch-library-op",
        ("#include <torch/library.h>\n", "#include <torch/csrc/Exceptions.h>\n#include <torch/library.h>\n"),
        ("    is_python_module=False,  # key\n", '    functions=["row_rms_cpu"],\n'),
        ("load_inline(\n    name=", "_ext = load_inline(\n    name="),
        ("return torch.ops.tutor_ch03_cpp.row_rms(x)  # key", "return _ext.row_rms_cpu(x)"),
        ext="t_pybind",
    )
    failed(v, "calls a pybind11 function", "torch.ops.tutor_ch03_cpp.row_rms")


def test_library_op_recomputed_in_python_is_not_the_op(mutant):
    # Correct values, but the operator never runs: the graph holds aten ops only.
    v = mutant(
        "torch-library-op",
        "return torch.ops.tutor_ch03_cpp.row_rms(x)  # key",
        "return x.pow(2).mean(dim=1).sqrt()",
    )
    failed(v, "holds tutor_ch03_cpp::row_rms 0 times")


def test_library_op_fake_without_the_device_fails_on_meta(mutant):
    # Right on fake CPU tensors of both dtypes; only a meta input shows the device is not x's.
    v = mutant("torch-library-op", "return x.new_empty(x.shape[:1])", "return torch.empty(x.shape[0], dtype=x.dtype)")
    failed(v, "on the `meta` device", "returns float64 on cpu", "take the device")


def test_library_op_schema_defined_from_python_fails(ext_mutant):
    v = ext_mutant(
        "torch-library-op",
        ('TORCH_LIBRARY(tutor_ch03_cpp, m) {\n    m.def("row_rms(Tensor x) -> Tensor");  // key\n}\n', ""),
        (
            "load_inline(\n    name=",
            'torch.library.define("tutor_ch03_cpp::row_rms", "(Tensor x) -> Tensor")\n\nload_inline(\n    name=',
        ),
        ext="t_pydef",
    )
    failed(v, "is declared from Python", "TORCH_LIBRARY(tutor_ch03_cpp, m)")


def test_library_op_keeping_a_pybind11_module_fails(ext_mutant):
    v = ext_mutant(
        "torch-library-op",
        ("#include <torch/library.h>\n", "#include <torch/csrc/Exceptions.h>\n#include <torch/library.h>\n"),
        ("    is_python_module=False,  # key\n", '    functions=["row_rms_cpu"],\n'),
        ext="t_keepbind",
    )
    failed(v, "still builds a pybind11 module", "is_python_module=False")


def test_library_op_composite_key_lambda_and_alias_passes(check_code, solution_text):
    # Correct but different: the kernel as a lambda under CompositeExplicitAutograd, the fake
    # registered through torch.library.register_fake called as a function, and row_rms the
    # OpOverloadPacket itself.
    src = renamed(
        mutate(
            solution_text("torch-library-op"),
            (
                'TORCH_LIBRARY_IMPL(tutor_ch03_cpp, CPU, m) {  // key\n    m.impl("row_rms", &row_rms_cpu);  // key\n',
                "TORCH_LIBRARY_IMPL(tutor_ch03_cpp, CompositeExplicitAutograd, m) {\n"
                '    m.impl("row_rms", [](const at::Tensor& x) { return row_rms_cpu(x); });\n',
            ),
            (
                ROW_RMS_FAKE,
                "def _row_rms_fake(x):\n"
                "    return torch.empty((x.shape[0],), dtype=x.dtype, device=x.device)\n\n\n"
                'torch.library.register_fake("tutor_ch03_cpp::row_rms", _row_rms_fake)\n',
            ),
            (
                "def row_rms(x: torch.Tensor) -> torch.Tensor:\n"
                '    """Root mean square of every row of a 2-D float CPU tensor, through the registered op."""\n'
                "    return torch.ops.tutor_ch03_cpp.row_rms(x)  # key\n",
                "row_rms = torch.ops.tutor_ch03_cpp.row_rms\n",
            ),
        ),
        "t_composite",
    )
    for seed in mutant_seeds("torch-library-op|t_composite"):
        assert_passes(check_code("torch-library-op", src, seed=seed))

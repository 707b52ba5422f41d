"""Check: the learner's C++ row_rms is an operator registered in C++ (TORCH_LIBRARY +
TORCH_LIBRARY_IMPL), loaded without a pybind11 module, called as torch.ops.tutor_ch03_cpp.row_rms,
with a Python fake implementation. Checked: the op exists; its schema is one tensor in, one new
tensor out, nothing written; eager values for float32, float64, odd and non-contiguous shapes
(a CPU kernel is reached); torch.compile(fullgraph=True) compiles a function using it into one
graph that holds it as exactly one node; the fake implementation describes the real output
(float64 too); torch.library.opcheck passes. Reports the build, the compile and a timing against
the same computation in ATen."""

import math
from pathlib import Path

import torch

NAMESPACE, NAME = "tutor_ch03_cpp", "row_rms"
QUALIFIED = f"{NAMESPACE}::{NAME}"
_KEYS = ("CPU", "CUDA", "Meta", "CompositeExplicitAutograd", "CompositeImplicitAutograd", "Autograd", "AutogradCPU")

_build = None


def _helpers():
    global _build
    if _build is None:
        import importlib.util

        spec = importlib.util.spec_from_file_location("tutor_ch03_build", Path(__file__).with_name("_ch03_build.py"))
        _build = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(_build)
    return _build


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _registered_keys() -> str:
    keys = [k for k in _KEYS if torch._C._dispatch_has_kernel_for_dispatch_key(QUALIFIED, k)]
    return ", ".join(keys) or "-"


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _expected(x: torch.Tensor) -> torch.Tensor:
    """sqrt(mean(x^2)) of every row, computed in float64 and returned in x's dtype."""
    return x.double().pow(2).mean(dim=1).sqrt().to(x.dtype)


def _call(ctx, fn, x, what):
    """Run the op; a missing CPU kernel or any other exception fails with the input named."""
    try:
        return fn(x)
    except NotImplementedError as exc:
        if "Could not run" in str(exc):
            ctx.fail(ctx.t("{op} has no kernel for CPU tensors (kernels are registered for: {keys}): the "
                           "TORCH_LIBRARY_IMPL block that holds m.impl(...) must name the dispatch key of the "
                           "tensors your kernel handles", op=f"torch.ops.{NAMESPACE}.{NAME}", keys=_registered_keys()))
        ctx.fail(ctx.t("row_rms raised {error} for {what}: {message}", error=type(exc).__name__, what=what,
                       message=_first_line(exc)))
    except Exception as exc:  # noqa: BLE001 - reported to the learner
        ctx.fail(ctx.t("row_rms raised {error} for {what}: {message}", error=type(exc).__name__, what=what,
                       message=_first_line(exc)))


def check(ctx):
    mine = _helpers().load_learner(ctx, ctx.t("building your C++ library…"))
    fn = getattr(mine, "row_rms", None)
    ctx.expect(callable(fn), ctx.t("your file must define `{name}`", name="row_rms"))

    # 1. The operator exists: TORCH_LIBRARY ran, which happens when load_inline loads the library.
    try:
        packet = getattr(getattr(torch.ops, NAMESPACE), NAME)
    except (AttributeError, RuntimeError):
        packet = None
    ctx.expect(packet is not None,
               ctx.t("there is no operator {op} after importing your file: define it in C++ with "
                     "TORCH_LIBRARY({namespace}, m) and m.def(...), and build with load_inline(..., "
                     "is_python_module=False), which loads the library (and so runs its registrations) "
                     "into the process", op=QUALIFIED, namespace=NAMESPACE))
    overloads = packet.overloads()
    ctx.expect("default" in overloads,
               ctx.t("{op} has no default overload (it has: {overloads}): define the schema as "
                     "\"row_rms(...) -> ...\", with no .overload name", op=QUALIFIED,
                     overloads=", ".join(overloads) or "-"))

    # 2. The schema: one tensor in, one fresh tensor out, nothing written, nothing aliased.
    schema = packet.default._schema
    written = [a.name for a in schema.arguments if a.alias_info is not None and a.alias_info.is_write]
    ctx.expect(not written,
               ctx.t("your schema `{schema}` says row_rms writes to {names} (the ! in Tensor(a!)), but it only "
                     "reads its input: a pure op has no alias annotation, or torch.compile treats x as changed "
                     "by every call and copies it back", schema=schema, names=", ".join(written)))
    aliased = [r for r in schema.returns if r.alias_info is not None] + [
        a for a in schema.arguments if a.alias_info is not None]
    ctx.expect(not aliased,
               ctx.t("your schema `{schema}` says the output shares memory with the input (an alias annotation "
                     "like Tensor(a)), but row_rms returns a new tensor: write plain Tensor on both sides",
                     schema=schema))
    types = [str(a.type) for a in schema.arguments], [str(r.type) for r in schema.returns]
    ctx.expect(types == (["Tensor"], ["Tensor"]),
               ctx.t("your schema `{schema}` does not describe row_rms, which takes one tensor and returns one "
                     "tensor", schema=schema))

    # 3. Eager values, through the learner's function and through torch.ops directly.
    cases = [
        (ctx.t("a single row and column"), lambda: ctx.randn(1, 1, scale=3.0)),
        (ctx.t("a small float32 x"), lambda: ctx.randn(ctx.choice([3, 7]), ctx.choice([5, 33]))),
        (ctx.t("a float64 x"), lambda: ctx.randn(ctx.choice([9, 40]), ctx.choice([17, 300]), dtype=torch.float64)),
        (ctx.t("a transposed (non-contiguous) x"),
         lambda: ctx.randn(ctx.choice([6, 31]), ctx.choice([11, 64]), noncontiguous=True)),
        (ctx.t("no rows"), lambda: ctx.randn(0, ctx.choice([3, 8]))),
    ]
    for i in ctx.trials(len(cases), ctx.t("eager values, trial")):
        what, make = cases[i]
        x = make()
        described = ctx.t("{what} of shape {shape}", what=what, shape=tuple(x.shape))
        out = _call(ctx, lambda t: ctx.no_mutation(fn, t), x, described)
        ctx.expect_close(ctx.t("row_rms(x) for {what}", what=described), out, _expected(x))
        direct = _call(ctx, packet, x, described)
        ctx.expect_close(ctx.t("torch.ops.{namespace}.row_rms(x) for {what}", namespace=NAMESPACE, what=described),
                         direct, _expected(x))

    # 4. torch.compile(fullgraph=True) with a backend that counts the op's nodes.
    graphs = []

    def counting_backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward  # run the captured graph as it is

    def scaled(t):
        return fn(t) * 2.0 + 1.0

    compiled = torch.compile(scaled, fullgraph=True, backend=counting_backend, dynamic=True)
    x = ctx.randn(ctx.choice([5, 12]), ctx.choice([7, 50]))
    with ctx.build(ctx.t("compiling row_rms(x) * 2 + 1 with torch.compile(fullgraph=True)"), figure="compile_s"):
        try:
            out = compiled(x)
        except Exception as exc:  # noqa: BLE001 - reported to the learner
            text = str(exc)
            lowered = text.lower()
            if "fake impl" in lowered or "fake tensor" in lowered or "meta kernel" in lowered:
                ctx.fail(ctx.t("torch.compile(fullgraph=True) fails: your op has no fake implementation, so the "
                               "compiler cannot tell the shape and dtype of its output while tracing; register one "
                               "in Python with torch.library.register_fake(\"{op}\")", op=QUALIFIED))
            if "marked as skipped" in text or "does not know how to trace" in text or "pybind" in text:
                ctx.fail(ctx.t("torch.compile(fullgraph=True) cannot trace your row_rms: it calls a pybind11 "
                               "function, which is opaque to the compiler; call the registered operator, "
                               "torch.ops.{namespace}.{name}", namespace=NAMESPACE, name=NAME))
            ctx.fail(ctx.t("torch.compile(fullgraph=True) failed: {error}: {message}", error=type(exc).__name__,
                           message=_first_line(exc)),
                     [line for line in text.splitlines()[1:6] if line.strip()])
    ctx.expect_close(ctx.t("compiled row_rms(x) * 2 + 1"), out, _expected(x) * 2.0 + 1.0)
    targets = [n.target for g in graphs for n in g.graph.nodes if n.op == "call_function"]

    def is_mine(target) -> bool:
        if isinstance(target, torch._ops.OpOverload):
            return target.namespace == NAMESPACE and target.__name__.split(".")[0] == NAME
        if isinstance(target, torch._ops.OpOverloadPacket):
            return target._qualified_op_name == QUALIFIED
        return False

    nodes = sum(1 for t in targets if is_mine(t))
    ctx.expect(nodes == 1,
               ctx.t("the compiled graph holds {op} {count} times, expected exactly once (its calls: {calls}): "
                     "row_rms must call the registered operator itself, once", op=QUALIFIED, count=nodes,
                     calls=", ".join(sorted({str(t) for t in targets})) or "-"))
    ctx.figure("graphs_compiled", len(graphs))

    # 5. The fake implementation, on fake tensors: the real op's shape, dtype and device.
    ctx.phase(ctx.t("running your fake implementation on fake tensors"))
    from torch._subclasses.fake_tensor import FakeTensorMode

    for dtype in (torch.float32, torch.float64):
        x = ctx.randn(ctx.choice([3, 8]), ctx.choice([5, 11]), dtype=dtype)
        real = packet(x)
        try:
            with FakeTensorMode() as mode:
                fake = packet(mode.from_tensor(x))
        except Exception as exc:  # noqa: BLE001 - reported to the learner
            ctx.fail(ctx.t("your fake implementation raised {error}: {message}. It receives fake tensors (shapes, "
                           "no data): build the output with x.new_empty(...), never call the C++ kernel",
                           error=type(exc).__name__, message=_first_line(exc).rstrip(".")))
        ctx.expect(isinstance(fake, torch.Tensor),
                   ctx.t("your fake implementation returned a {kind}, expected a tensor", kind=type(fake).__name__))
        ctx.expect(tuple(fake.shape) == tuple(real.shape),
                   ctx.t("your fake implementation says the output has shape {fake}, but the real op returns shape "
                         "{real} for an input of shape {shape}: one value per row",
                         fake=tuple(fake.shape), real=tuple(real.shape), shape=tuple(x.shape)))
        ctx.expect(fake.dtype == real.dtype and fake.device.type == real.device.type,
                   ctx.t("your fake implementation returns {fake_dtype} on {fake_device} for a {dtype} input, the "
                         "real op returns {real_dtype} on {real_device}: take the dtype and device from x",
                         fake_dtype=_dtype_name(fake.dtype), fake_device=fake.device.type, dtype=_dtype_name(dtype),
                         real_dtype=_dtype_name(real.dtype), real_device=real.device.type))

    # 6. opcheck: schema vs behaviour, fake vs real (strides too), AOTAutograd tracing.
    ctx.phase(ctx.t("torch.library.opcheck"))
    for dtype in (torch.float32, torch.float64):
        sample = ctx.randn(ctx.choice([4, 9]), ctx.choice([3, 20]), dtype=dtype)
        try:
            torch.library.opcheck(packet.default, (sample,))
        except Exception as exc:  # noqa: BLE001 - reported to the learner
            ctx.fail(ctx.t("torch.library.opcheck found a problem with your op: {message}",
                           message=_first_line(exc)))

    x = ctx.randn(2048, 512)
    scale = 1.0 / math.sqrt(x.shape[1])
    ctx.time(lambda: packet(x), lambda: torch.linalg.vector_norm(x, dim=1) * scale, name="vs ATen",
             compares=ctx.t("your op vs torch.linalg.vector_norm(x, dim=1) / sqrt(cols)"))

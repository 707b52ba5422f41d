"""Check: the learner's C++ row_rms is an operator registered in C++ (TORCH_LIBRARY +
TORCH_LIBRARY_IMPL), loaded without a pybind11 module, called as torch.ops.tutor_ch03_cpp.row_rms,
with a Python fake implementation. Checked: the op exists; its schema is one tensor in, one new
tensor out, nothing written; eager values for float32, float64, odd and non-contiguous shapes
(a CPU kernel is reached); torch.compile(fullgraph=True) compiles a function using it into one
graph that holds it as exactly one node; the fake implementation describes the real output
(float64 too); torch.library.opcheck passes. Reports the build, the compile and a timing against
the same computation in ATen."""

import math
import os
import re
from pathlib import Path

import torch
from _ch03_build import load_learner

NAMESPACE, NAME = "tutor_ch03_cpp", "row_rms"
QUALIFIED = f"{NAMESPACE}::{NAME}"
_KEYS = ("CPU", "CUDA", "Meta", "CompositeExplicitAutograd", "CompositeImplicitAutograd", "Autograd", "AutogradCPU")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _registered_keys() -> str:
    keys = [k for k in _KEYS if torch._C._dispatch_has_kernel_for_dispatch_key(QUALIFIED, k)]
    return ", ".join(keys) or "-"


def _schema_registered_at() -> str:
    """The file (without line) where the operator's schema was registered, from the dispatcher's
    own record: `debug: registered at /path/main.cpp:41` for TORCH_LIBRARY, torch/library.py for
    torch.library.define."""
    try:
        dump = torch._C._dispatch_dump(QUALIFIED)
    except Exception:  # noqa: BLE001 - an older or newer torch: no record to read
        return ""
    match = re.search(r"^debug: registered at (.+?)(?::\d+)?\s*$", dump, re.MULTILINE)
    return match.group(1) if match else ""


def _pybind_modules() -> list[str]:
    """Python extension modules (a PyInit_<name> symbol) among the shared libraries mapped into
    this process from the extension build folder."""
    import ctypes

    from torch.utils.cpp_extension import get_default_build_root

    root = os.path.realpath(os.environ.get("TORCH_EXTENSIONS_DIR") or get_default_build_root())
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            paths = {line.split(None, 5)[5].strip() for line in maps if len(line.split(None, 5)) == 6}
    except OSError:  # not Linux: nothing to inspect
        return []
    found = []
    for path in sorted(paths):
        if not path.endswith(".so") or not os.path.realpath(path).startswith(root + os.sep):
            continue
        name = Path(path).stem
        try:
            if hasattr(ctypes.CDLL(path), f"PyInit_{name}"):
                found.append(name)
        except OSError:
            continue
    return found


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
    mine = load_learner(ctx, ctx.t("building your C++ library…"))
    fn = getattr(mine, "row_rms", None)
    ctx.expect(callable(fn), ctx.t("your file must define `{name}`", name="row_rms"))

    def eager(t):
        # A Python function is wrapped by the call contract, the operator itself (row_rms =
        # torch.ops.tutor_ch03_cpp.row_rms, just as right) is not: call both alike. What the call
        # may not change, its input, no_mutation checks. (torch.compile skips the contract anyway.)
        with ctx.uncontracted():
            return fn(t)

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

    # 1b. Defined in C++, not from Python: torch.library.define in the .py file makes an operator
    #     that C++ callers and AOT-compiled programs loading only the library never see.
    where = _schema_registered_at()
    ctx.expect(not (where.endswith(".py") or QUALIFIED in getattr(torch.library, "_defs", ())),
               ctx.t("{op} is declared from Python (its schema was registered at {where}), so the library alone "
                     "does not define it: C++ callers and programs that load only the library never see it. "
                     "Declare it in the C++ source, with m.def(\"row_rms(Tensor x) -> Tensor\") inside "
                     "TORCH_LIBRARY({namespace}, m)", op=QUALIFIED, where=where or "Python", namespace=NAMESPACE))

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
        out = _call(ctx, lambda t: ctx.no_mutation(eager, t), x, described)
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
    with ctx.build(ctx.t("compiling row_rms(x) * 2 + 1 with torch.compile(fullgraph=True)"), figure="compile_s",
                   label=ctx.t("compiling with torch.compile")):
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
    ctx.figure("graphs_compiled", len(graphs), label=ctx.t("graphs compiled"))

    # 4b. No pybind11 module: the library is loaded with is_python_module=False and called through
    #     the dispatcher. A build with functions=[...] still leaves a Python extension module.
    modules = _pybind_modules()
    ctx.expect(not modules,
               ctx.t("your file still builds a pybind11 module ({names}): load_inline with functions=[...] (or "
                     "is_python_module left True) generates Python bindings the task removes. Build with "
                     "load_inline(..., is_python_module=False) and no functions=, which only loads the library "
                     "and runs its TORCH_LIBRARY blocks", names=", ".join(modules)))

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

    # 5b. On a `meta` input (register_fake is the op's Meta kernel too): shapes, dtype and device from
    #     x, never torch's defaults (torch.empty(n, dtype=x.dtype) hands back a CPU tensor).
    rows, cols = ctx.choice([3, 8]), ctx.choice([5, 11])
    meta = torch.empty(rows, cols, dtype=torch.float64, device="meta")
    try:
        got = packet(meta)
    except Exception as exc:  # noqa: BLE001 - reported to the learner
        ctx.fail(ctx.t("{op} raised {error} for a float64 tensor on the `meta` device (your fake implementation "
                       "serves as its Meta kernel): {message}", op=QUALIFIED, error=type(exc).__name__,
                       message=_first_line(exc)))
    ok = isinstance(got, torch.Tensor) and got.device.type == "meta" and got.dtype == torch.float64 \
        and tuple(got.shape) == (rows,)
    ctx.expect(ok, ctx.t("for a float64 x of shape {shape} on the `meta` device your fake implementation returns "
                         "{got}, expected float64 on meta with shape {want}: take the device (and dtype) from x, "
                         "e.g. x.new_empty(...)", shape=(rows, cols), want=(rows,),
                         got=(f"{_dtype_name(got.dtype)} on {got.device.type} with shape {tuple(got.shape)}"
                              if isinstance(got, torch.Tensor) else type(got).__name__)))

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
             label=ctx.t("time against ATen"),
             compares=ctx.t("your op vs torch.linalg.vector_norm(x, dim=1) / sqrt(cols)"),
             sides=(ctx.t("your op"), ctx.t("ATen")))

"""Check: row_logsumexp is a registered operator (torch.library.custom_op, or define/impl and
torch.ops) that declares no mutation, with a correct fake implementation; it passes
torch.library.opcheck, and a function using it compiles with torch.compile(fullgraph=True)
into a graph that holds it as one node, with the same results as eager."""

import torch
from _ch03_build import load_learner


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _is_custom_op(op) -> bool:
    # custom_op returns a CustomOpDef (it has ._opoverload); torch.library.define/impl give
    # torch.ops.ns.name, an OpOverloadPacket. Either is a real operator.
    return hasattr(op, "_opoverload") or isinstance(op, (torch._ops.OpOverload, torch._ops.OpOverloadPacket))


def _schema(op):
    """The operator's schema, whichever way it was registered."""
    if hasattr(op, "_opoverload"):
        return op._opoverload._schema
    if isinstance(op, torch._ops.OpOverloadPacket):
        return op.default._schema
    return op._schema


def _is_learners_op(target) -> bool:
    """A graph node's target that is a registered operator outside torch's own namespaces.
    torch.compile records a custom_op as an OpOverload (ns.name.default), and an op called as
    torch.ops.ns.name as an OpOverloadPacket (ns.name): both are one node."""
    if isinstance(target, torch._ops.OpOverload):
        namespace = target.namespace
    elif isinstance(target, torch._ops.OpOverloadPacket):
        namespace = target._qualified_op_name.split("::")[0]
    else:
        return False
    return namespace not in ("aten", "prims", "prim", "_c10d_functional", "inductor")


def check(ctx):
    mine = load_learner(ctx, ctx.t("building the C++ log-sum-exp extension…"))
    op = getattr(mine, "row_logsumexp", None)
    ctx.expect(callable(op), ctx.t("your file must define `{name}`", name="row_logsumexp"))

    # First, so that every call below goes to an operator: the reference's is one (a CustomOpDef,
    # which the call contract does not wrap), and a plain function would be judged differently.
    ctx.expect(_is_custom_op(op),
               ctx.t("`row_logsumexp` is a plain Python function, not an operator: torch.compile cannot trace "
                     "into the C++ call it makes. Make it an operator with torch.library.custom_op (or "
                     "torch.library.define and impl)"))

    # A single column: log(sum(exp(v))) is v, and returning x.squeeze(1) (a view of x) is tempting.
    # An operator returns fresh memory (custom_op refuses outputs that alias an input).
    rows = ctx.choice([4, 9])
    x1 = ctx.randn(rows, 1, scale=3.0)
    try:
        out1 = op(x1)
    except Exception as exc:  # noqa: BLE001 - reported to the learner
        if "alias" not in str(exc):
            ctx.fail(ctx.t("row_logsumexp(x) raised {error} for x of shape {shape}: {message}",
                           error=type(exc).__name__, shape=(rows, 1), message=_first_line(exc)))
        out1 = x1  # custom_op refused an output that aliases x
    ctx.expect(not (isinstance(out1, torch.Tensor) and out1.untyped_storage().data_ptr()
                    == x1.untyped_storage().data_ptr()),
               ctx.t("row_logsumexp(x) for x of shape {shape} returned a view of x (it shares x's memory): an "
                     "operator must return a new tensor, never its input or a view of it",
                     shape=(rows, 1)))
    ctx.expect_close(ctx.t("row_logsumexp(x) for x of shape {shape}", shape=(rows, 1)), out1,
                     torch.logsumexp(x1, dim=1))

    for i in ctx.trials(3, ctx.t("eager values, trial")):
        rows, cols = ctx.choice([1, 5, 64]), ctx.choice([1, 7, 300])
        x = ctx.randn(rows, cols, scale=ctx.choice([1.0, 30.0]))
        ctx.expect_close(ctx.t("row_logsumexp(x) for x of shape {shape}", shape=(rows, cols)), op(x),
                         torch.logsumexp(x, dim=1))

    # The schema states what the op writes to. This one writes to nothing; declaring a mutation
    # that never happens makes every caller (and torch.compile) treat x as changed.
    written = [a.name for a in _schema(op).arguments if a.alias_info is not None and a.alias_info.is_write]
    ctx.expect(not written,
               ctx.t("your op declares that it writes to its input {names} (its schema is `{schema}`), but "
                     "row_logsumexp only reads x: declare no mutated arguments (mutates_args=()), or "
                     "torch.compile copies x around every call and treats it as changed",
                     names=", ".join(written), schema=_schema(op)))

    ctx.phase(ctx.t("running your fake implementation on fake tensors"))
    from torch._subclasses.fake_tensor import FakeTensorMode

    rows, cols = ctx.choice([3, 8, 20]), ctx.choice([5, 11, 40])
    x = ctx.randn(rows, cols)
    real = op(x)
    try:
        with FakeTensorMode() as mode:
            fake = op(mode.from_tensor(x))
    except Exception as exc:  # noqa: BLE001 - reported to the learner
        if "no fake impl" in str(exc).lower() or "register_fake" in str(exc):
            ctx.fail(ctx.t("your op has no fake implementation, so torch.compile cannot trace it: add one with "
                           "register_fake that returns an empty tensor shaped like the real output"))
        ctx.fail(ctx.t("your fake implementation raised {error}: {message}. It receives fake tensors (shapes, no "
                       "data): build the output with x.new_empty(...), never call the C++ kernel",
                       error=type(exc).__name__, message=_first_line(exc).rstrip(".")))
    ctx.expect(isinstance(fake, torch.Tensor),
               ctx.t("your fake implementation returned a {kind}, expected a tensor", kind=type(fake).__name__))
    ctx.expect(tuple(fake.shape) == tuple(real.shape),
               ctx.t("your fake implementation says the output has shape {fake}, but the real op returns shape "
                     "{real} for an input of shape {shape}: one value per row",
                     fake=tuple(fake.shape), real=tuple(real.shape), shape=tuple(x.shape)))
    ctx.expect(fake.dtype == real.dtype and fake.device.type == real.device.type,
               ctx.t("your fake implementation returns {fake_dtype} on {fake_device}, the real op returns "
                     "{real_dtype} on {real_device}", fake_dtype=fake.dtype, fake_device=fake.device.type,
                     real_dtype=real.dtype, real_device=real.device.type))

    # The fake must take its dtype and device from the input, never from torch's defaults: under
    # torch.set_default_dtype(torch.float64), and on a `meta` input (register_fake is the op's Meta
    # kernel too), torch.empty(rows) says float64 / cpu while the op's output follows x.
    meta = torch.empty(rows, cols, device="meta")
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        with FakeTensorMode() as mode:
            fake64 = op(mode.from_tensor(x))
        on_meta = op(meta)
    except Exception as exc:  # noqa: BLE001 - reported to the learner
        ctx.fail(ctx.t("your fake implementation raised {error}: {message}. It receives fake tensors (shapes, no "
                       "data): build the output with x.new_empty(...), never call the C++ kernel",
                       error=type(exc).__name__, message=_first_line(exc).rstrip(".")))
    finally:
        torch.set_default_dtype(previous)
    for what, got, want_device in ((ctx.t("a float32 fake x while torch's default dtype is float64"), fake64, "cpu"),
                                   (ctx.t("a float32 x on the `meta` device"), on_meta, "meta")):
        ok = isinstance(got, torch.Tensor) and got.dtype == torch.float32 and got.device.type == want_device \
            and tuple(got.shape) == (rows,)
        ctx.expect(ok, ctx.t("for {what} your fake implementation returns {got}, but the op's output is float32 "
                             "on {device} with shape {shape}: build it from x (x.new_empty(...)), so it takes x's "
                             "dtype and device, not torch's defaults",
                             what=what, device=want_device, shape=(rows,),
                             got=(f"{str(got.dtype).removeprefix('torch.')} on {got.device.type} with shape "
                                  f"{tuple(got.shape)}" if isinstance(got, torch.Tensor) else type(got).__name__)))

    ctx.phase(ctx.t("torch.library.opcheck"))
    try:
        torch.library.opcheck(op, (ctx.randn(rows + 1, cols),))
    except Exception as exc:  # noqa: BLE001
        ctx.fail(ctx.t("torch.library.opcheck found a problem with your op: {message}", message=_first_line(exc)))

    graphs = []

    def recording_backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward  # run the captured graph as it is

    def log_softmax(t):
        return t - op(t).unsqueeze(1)

    compiled = torch.compile(log_softmax, fullgraph=True, backend=recording_backend, dynamic=True)
    with ctx.build(ctx.t("compiling x - row_logsumexp(x)[:, None] with torch.compile(fullgraph=True)"),
                   figure="compile_s", label=ctx.t("compiling with torch.compile")):
        try:
            out = compiled(x)
        except Exception as exc:  # noqa: BLE001
            text = str(exc)
            if "no fake impl" in text.lower():
                ctx.fail(ctx.t("torch.compile needs a fake implementation of your op: add one with register_fake"))
            if "marked as skipped" in text or "does not know how to trace" in text:
                ctx.fail(ctx.t("torch.compile(fullgraph=True) hit a graph break: it cannot trace the pybind11 C++ "
                               "function; call it only from inside your custom op"))
            ctx.fail(ctx.t("torch.compile(fullgraph=True) failed: {error}: {message}",
                           error=type(exc).__name__, message=_first_line(exc)),
                     [line for line in text.splitlines()[1:6] if line.strip()])
    ctx.expect_close(ctx.t("compiled x - row_logsumexp(x)[:, None]"), out, torch.log_softmax(x, dim=1))

    targets = [n.target for g in graphs for n in g.graph.nodes if n.op == "call_function"]
    custom = [t for t in targets if _is_learners_op(t)]
    ctx.expect(bool(custom), ctx.t("the compiled graph does not contain your op as one node (it has {calls}): "
                                   "torch.compile must call the C++ kernel through the custom op",
                                   calls=", ".join(sorted({str(t) for t in targets})) or "-"))

    for i in ctx.trials(2, ctx.t("compiled, new shapes, trial")):
        x2 = ctx.randn(ctx.choice([2, 17, 33]), ctx.choice([3, 64, 129]), scale=10.0)
        ctx.expect_close(ctx.t("compiled x - row_logsumexp(x)[:, None] for x of shape {shape}",
                               shape=tuple(x2.shape)),
                         compiled(x2), torch.log_softmax(x2, dim=1))
    ctx.figure("graphs_compiled", len(graphs), label=ctx.t("graphs compiled"))
    # dynamic=True: one graph serves every row count, as long as the fake computes the output's
    # shape with x's (symbolic) sizes; int(x.shape[0]) pins the size and recompiles per row count.
    ctx.expect(len(graphs) == 1,
               ctx.t("torch.compile(dynamic=True) captured {n} graphs for 3 different row counts, where one "
                     "graph serves them all: something turns a symbolic size into a plain Python int (int(x.shape[0]) "
                     "in your fake implementation, for example), which pins it and recompiles for every new "
                     "shape. Build the output with the sizes as they come, x.new_empty(x.shape[:-1])", n=len(graphs)))

    # Autograd is not part of the task, but an op that offers a gradient must give the right one:
    # d logsumexp(x) / dx = softmax(x). (Without register_autograd, backward raises: that passes.)
    xg = ctx.randn(ctx.choice([3, 6]), ctx.choice([4, 9]), scale=2.0).requires_grad_()
    w = ctx.randn(xg.shape[0])
    try:
        (op(xg) * w).sum().backward()
        grad = xg.grad
    except Exception:  # noqa: BLE001 - no autograd formula registered: fine
        grad = None
    if grad is not None:
        want = torch.softmax(xg.detach(), dim=1) * w[:, None]
        ok = grad.shape == want.shape and torch.allclose(grad, want, rtol=1e-4, atol=1e-5)
    else:
        ok = True
    ctx.expect(ok, ctx.t("your op has an autograd formula, but the gradient of row_logsumexp(x) it gives is not "
                         "d logsumexp / dx = softmax(x) = exp(x - row_logsumexp(x)[:, None]) (times the incoming "
                         "gradient): fix the backward you registered, or register none"))

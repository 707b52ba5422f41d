"""Check: script_model(TwoHeads()) returns a scripted (not traced) module whose forward takes
`flag: bool` and `temperature: Optional[float]`, and which equals the eager model on both
branches, with and without a temperature, for several batch shapes."""

import warnings

import torch

from _common import expect_modes_kept, first_lines, process_modes


def _if_nodes(block) -> int:
    """How many `prim::If` nodes a TorchScript graph (or block) holds, nested ones included."""
    return sum((node.kind() == "prim::If") + sum(_if_nodes(b) for b in node.blocks()) for node in block.nodes())


class _FlagTrue(torch.nn.Module):
    """forward(x) = model(x, True, None): what torch.jit.trace can take (tensors only)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x, True, None)


def check(ctx):
    mine = ctx.learner
    torch.manual_seed(ctx.seed)
    model = mine.TwoHeads()

    ctx.phase(ctx.t("scripting your model"))
    modes = process_modes()
    try:
        scripted = mine.script_model(model)
    except NotImplementedError:
        raise
    except Exception as exc:  # a TorchScript compile error: show where it points
        first, rest = first_lines(exc, 12)
        if "default value of type" in first:
            ctx.fail(ctx.t("script_model failed: {error} (a None default needs Optional[...], e.g. "
                           "Optional[float] = None)", error=first), rest)
        ctx.fail(ctx.t("script_model failed: {error}", error=first), rest)
    expect_modes_kept(ctx, modes, "script_model(model)")
    ctx.expect(isinstance(scripted, torch.jit.ScriptModule),
               ctx.t("script_model returned a {type}, expected the ScriptModule that torch.jit.script(model) "
                     "returns", type=type(scripted).__name__))
    ctx.expect(not isinstance(scripted, torch.jit.TracedModule),
               ctx.t("script_model returned a traced module: a trace records one path through forward; "
                     "use torch.jit.script to keep the `if flag:`"))

    args = scripted.forward.schema.arguments[1:]  # [0] is self
    ctx.expect(len(args) == 3, ctx.t("forward should take (x, flag, temperature=None), your scripted forward "
                                     "takes {n} argument(s)", n=len(args)))
    flag_type, temp_type = str(args[1].type), str(args[2].type)
    ctx.expect(flag_type == "bool",
               ctx.t("your scripted forward takes `{name}` as {type}: TorchScript assumes an unannotated "
                     "argument is a Tensor; annotate it `flag: bool`", name=args[1].name, type=flag_type))
    ctx.expect(temp_type == "Optional[float]",
               ctx.t("your scripted forward takes `{name}` as {type}: it is either None or a float, so "
                     "annotate it `temperature: Optional[float] = None`", name=args[2].name, type=temp_type))

    # The ground truth: the reference's eager TwoHeads with the same weights.
    eager = ctx.reference.TwoHeads()
    try:
        eager.load_state_dict(model.state_dict())
    except RuntimeError as exc:
        ctx.fail(ctx.t("TwoHeads' layers differ from the given ones: change only the annotations"),
                 first_lines(exc, 4)[1])

    shapes = [(8, 16), (1, 16), (5, 16), (2, 3, 16)]
    for trial in ctx.trials(len(shapes)):
        x = ctx.randn(*shapes[trial])
        temperature = round(0.5 + 2.5 * float(ctx.rand(1)), 3)
        for flag, temp in ((True, None), (True, temperature), (False, None)):
            where = f"flag={flag}" + (f", temperature={temp}" if temp is not None else "")
            try:
                out = scripted(x, flag, temp)
            except Exception as exc:
                first, rest = first_lines(exc, 12)
                ctx.fail(ctx.t("calling your scripted module with {where} failed: {error}", where=where,
                               error=first), rest)
            with torch.no_grad():
                expected = eager(x, flag, temp)
            ctx.expect_close(f"scripted output with {where}, input shape {tuple(x.shape)}", out, expected)

    # What scripting keeps and tracing loses, as a count: the `if` nodes in the compiled graph.
    # Yours holds the `if flag:` and the `if temperature is not None:`; a trace of the same model
    # records only the path its example took, with no `if` left.
    ctx.figure("if_nodes_scripted", _if_nodes(scripted.inlined_graph),
               label=ctx.t("`if` nodes in your scripted forward's graph"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's warnings about the Python branches
        traced = torch.jit.trace(_FlagTrue(eager), (ctx.randn(2, 16),))
    ctx.figure("if_nodes_traced", _if_nodes(traced.inlined_graph),
               label=ctx.t("`if` nodes in a trace of the same model with flag=True ({call})",
                           call="torch.jit.trace"))

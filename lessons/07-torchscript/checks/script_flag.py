"""Check: script_model(TwoHeads()) returns a scripted (not traced) module whose forward takes
`flag: bool` and `temperature: Optional[float]`, and which equals the eager model on both
branches, with and without a temperature, for several batch shapes."""

import torch

from _common import first_lines


def check(ctx):
    mine = ctx.learner
    torch.manual_seed(ctx.seed)
    model = mine.TwoHeads()

    ctx.phase("scripting your model")
    try:
        scripted = mine.script_model(model)
    except NotImplementedError:
        raise
    except Exception as exc:  # a TorchScript compile error: show where it points
        first, rest = first_lines(exc, 12)
        if "default value of type" in first:
            first += " (a None default needs Optional[...], e.g. Optional[float] = None)"
        ctx.fail(f"script_model failed: {first}", rest)
    ctx.expect(isinstance(scripted, torch.jit.ScriptModule),
               f"script_model returned a {type(scripted).__name__}, expected the ScriptModule "
               "that torch.jit.script(model) returns")
    ctx.expect(not isinstance(scripted, torch.jit.TracedModule),
               "script_model returned a traced module: a trace records one path through forward; "
               "use torch.jit.script to keep the `if flag:`")

    args = scripted.forward.schema.arguments[1:]  # [0] is self
    ctx.expect(len(args) == 3, "forward should take (x, flag, temperature=None), "
                               f"your scripted forward takes {len(args)} argument(s)")
    flag_type, temp_type = str(args[1].type), str(args[2].type)
    ctx.expect(flag_type == "bool",
               f"your scripted forward takes `{args[1].name}` as {flag_type}: TorchScript assumes an "
               "unannotated argument is a Tensor; annotate it `flag: bool`")
    ctx.expect(temp_type == "Optional[float]",
               f"your scripted forward takes `{args[2].name}` as {temp_type}: it is either None or a "
               "float, so annotate it `temperature: Optional[float] = None`")

    # The ground truth: the reference's eager TwoHeads with the same weights.
    eager = ctx.reference.TwoHeads()
    try:
        eager.load_state_dict(model.state_dict())
    except RuntimeError as exc:
        ctx.fail("TwoHeads' layers differ from the given ones: change only the annotations",
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
                ctx.fail(f"calling your scripted module with {where} failed: {first}", rest)
            with torch.no_grad():
                expected = eager(x, flag, temp)
            ctx.expect_close(f"scripted output with {where}, input shape {tuple(x.shape)}", out, expected)

"""Check: save_for writes a 'finetune' file that stays trainable (all weights, the training-only
aux head, training mode) and a 'serve' file that is frozen in eval mode, keeps labels(), loads
with plain torch.jit.load and is at most half the finetune file's size; load_for_serving
returns a CPU-optimized module with the eager model's eval outputs. Reports both file sizes and
the serve module's time against the finetune module's."""

import zipfile

import torch
from torch import nn

from _common import expect_modes_kept, first_lines, process_modes

SIZE_TARGET = 0.5  # serve file <= half the finetune file; frozen, it is ~8% (the aux head is gone)


def _trained_model(ctx):
    torch.manual_seed(ctx.seed)
    model = ctx.reference.ServeNet()
    # As if it had been trained: non-trivial BatchNorm statistics, and still in training mode.
    with torch.no_grad():
        for layer in model.modules():
            if isinstance(layer, nn.BatchNorm2d):
                layer.running_mean.normal_(0.0, 0.5)
                layer.running_var.uniform_(0.5, 2.0)
                layer.weight.normal_(1.0, 0.2)
                layer.bias.normal_(0.0, 0.2)
    return model.train()


def _bn_frozen(model):
    """The model with its BatchNorm layers deliberately in eval mode (frozen statistics, as when
    fine-tuning on small batches) and everything else in training mode."""
    for layer in model.modules():
        if isinstance(layer, nn.BatchNorm2d):
            layer.eval()
    return model


def _modes(module):
    return {name: sub.training for name, sub in module.named_modules()}


def _as_if_saved_on_gpu(src, dst):
    """Rewrite a TorchScript archive so that its tensors say they were saved from cuda:0, as a
    file written on a GPU machine does (the device is a string in the archive's pickles).
    Returns how many device tags were rewritten."""
    cpu, cuda = b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0"  # pickle BINUNICODE strings
    count = 0
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename.endswith(".pkl"):
                count += data.count(cpu)
                data = data.replace(cpu, cuda)
            zout.writestr(info.filename, data)
    return count


def _save(ctx, mine, model, state, path, purpose):
    ctx.phase(ctx.t("saving with your save_for(..., {purpose!r})", purpose=purpose))
    modes = process_modes()
    mine.save_for(model, str(path), purpose)
    expect_modes_kept(ctx, modes, f"save_for(model, path, {purpose!r})")
    ctx.expect(model.training, ctx.t("save_for(..., {purpose!r}) switched the caller's model to eval mode (.eval() "
                                     "changes the module in place): switch the scripted copy instead",
                                     purpose=purpose))
    ctx.expect_close(f"the caller's model's parameters and buffers after save_for(..., {purpose!r}) (it must "
                     f"not change them)", dict(model.state_dict()), state)
    ctx.expect(path.is_file(), ctx.t("save_for(..., {purpose!r}) did not create the file {file}", purpose=purpose,
                                     file=path.name))


def _load(ctx, path, purpose):
    try:
        return torch.jit.load(str(path), map_location="cpu")
    except Exception as exc:  # noqa: BLE001  (whatever the file is, the learner reads why)
        first, rest = first_lines(exc, 6)
        if "required keyword attribute" in str(exc):
            ctx.fail(ctx.t("torch.jit.load cannot read your {purpose!r} file: it holds an optimize_for_inference "
                           "graph, which saves without complaint and then fails to load. Save the frozen module "
                           "and optimize after loading (that is load_for_serving's job)", purpose=purpose), [first])
        ctx.fail(ctx.t("torch.jit.load cannot read the {purpose!r} file save_for wrote: save the scripted module "
                       "with torch.jit.save (torch.save pickles Python objects, which torch.jit.load and C++ "
                       "cannot read)", purpose=purpose), [first, *rest])


def check(ctx):
    mine = ctx.learner
    model = _trained_model(ctx)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    names = list(model.class_names)

    # 1. The finetune file: everything training needs.
    ft_path = ctx.tmpdir / "finetune.pt"
    _save(ctx, mine, model, state, ft_path, "finetune")
    ft = _load(ctx, ft_path, "finetune")
    ctx.expect(len(list(ft.parameters())) == len(list(model.parameters())),
               ctx.t("your 'finetune' file has {got} parameters, the model {want}: it was frozen, and freezing "
                     "turns weights into constants and drops the training-only aux head. A file to keep training "
                     "from is saved unfrozen", got=len(list(ft.parameters())), want=len(list(model.parameters()))))
    ctx.expect_close("parameters and buffers in your 'finetune' file", dict(ft.state_dict()), state)
    ctx.expect(ft.training, ctx.t("your 'finetune' file loads in eval mode: the device resumes training, so save "
                                  "the module in the mode the model was in (training)"))
    x = ctx.randn(3, 3, 20, 20)
    ft.zero_grad()
    ft(x).square().mean().backward()
    missing = [k for k, p in ft.named_parameters() if p.grad is None]
    ctx.expect(not missing, ctx.t("training the 'finetune' module gives no gradient to {names}: its "
                                  "training-mode forward must still use the aux head", names=missing[:3]))
    ft.eval()

    # 2. The serve file: frozen in eval mode, labels kept, small.
    serve_path = ctx.tmpdir / "serve.pt"
    _save(ctx, mine, model, state, serve_path, "serve")
    served = _load(ctx, serve_path, "serve")
    ctx.expect(not list(served.parameters()),
               ctx.t("your 'serve' module still has parameters: it is not frozen. torch.jit.freeze (in eval mode) "
                     "turns them into constants and drops what inference never runs"))
    graph = str(served.graph)
    ctx.expect("aten::batch_norm" not in graph and "aten::dropout" not in graph,
               ctx.t("your 'serve' graph still has BatchNorm or Dropout: freeze it in eval mode"))
    try:
        got_labels = served.labels()
    except (AttributeError, RuntimeError):
        ctx.fail(ctx.t("the server calls labels(), and your 'serve' module has no labels method: freezing keeps "
                       "only forward unless you name what else to keep (torch.jit.freeze(..., "
                       "preserved_attrs=[...]))"), [])
    ctx.expect_equal("labels() of your loaded 'serve' module", list(got_labels), names)
    serve_kb, ft_kb = serve_path.stat().st_size / 1024, ft_path.stat().st_size / 1024
    ctx.figure("file_kb", {"serve": round(serve_kb, 1), "finetune": round(ft_kb, 1),
                           "serve/finetune": round(serve_kb / ft_kb, 3)},
               label=ctx.t("file sizes: 'serve' {serve:.1f} KB, 'finetune' {finetune:.1f} KB ({share:.0%} of it)",
                           serve=serve_kb, finetune=ft_kb, share=serve_kb / ft_kb))
    ctx.expect(serve_kb <= SIZE_TARGET * ft_kb,
               ctx.t("your 'serve' file is {serve:.0f} KB and the 'finetune' file {finetune:.0f} KB: the target is "
                     "at most {target:.0%} of it. Freezing in eval mode removes what inference never runs",
                     serve=serve_kb, finetune=ft_kb, target=SIZE_TARGET))
    # Any other purpose raises ValueError: not a KeyError from a lookup table, and not a purpose
    # that only looks like one once stripped or lower-cased.
    # (Uncontracted: the reference's call raises and so reports no contract observation; a call
    # that returns fails here with its own reason.)
    for bad in ("mobile", "FINETUNE", " serve "):
        try:
            with ctx.uncontracted():
                mine.save_for(model, str(ctx.tmpdir / "unknown.pt"), bad)
            raised = None
        except ValueError:
            raised = ValueError
        except Exception as exc:  # noqa: BLE001  (the learner reads which one)
            raised = exc
        ctx.expect(raised is not None,
                   ctx.t("save_for(model, path, {purpose!r}) saved a file: the purposes are exactly 'serve' and "
                         "'finetune', and any other purpose raises ValueError", purpose=bad))
        ctx.expect(raised is ValueError,
                   ctx.t("save_for(model, path, {purpose!r}) raised {error}, not ValueError: any purpose but "
                         "'serve' and 'finetune' must raise ValueError (check it before dispatching)",
                         purpose=bad, error=getattr(raised, "__name__", type(raised).__name__)))

    # 2b. A model whose BatchNorm layers the caller put in eval mode on purpose: saving either file
    # leaves every submodule's own mode as it was (model.train() afterwards would switch them all
    # to training). What modes the finetune file itself carries is not judged: the task names
    # only training mode.
    mixed = _bn_frozen(_trained_model(ctx))
    mixed_modes, mixed_state = _modes(mixed), {k: v.clone() for k, v in mixed.state_dict().items()}
    for purpose in ("finetune", "serve"):
        path = ctx.tmpdir / f"bn-frozen-{purpose}.pt"
        modes = process_modes()
        mine.save_for(mixed, str(path), purpose)
        expect_modes_kept(ctx, modes, f"save_for(model, path, {purpose!r})")
        flipped = [name for name, was in mixed_modes.items() if _modes(mixed).get(name) != was]
        ctx.expect(not flipped,
                   ctx.t("save_for(..., {purpose!r}) changed the mode of {names} in a caller's model whose "
                         "BatchNorm layers were in eval mode and the rest in training mode: model.train() "
                         "switches every submodule to training. Leave the caller's model alone (switch the "
                         "scripted copy), or restore each submodule's own mode", purpose=purpose,
                         names=", ".join(flipped[:3])))
        ctx.expect_close(f"the caller's model's parameters and buffers after save_for(..., {purpose!r}) (BatchNorm "
                         f"layers in eval mode)", dict(mixed.state_dict()), mixed_state)
    model.eval()
    with torch.no_grad():
        ctx.expect_close("output of your loaded 'serve' module vs the model in eval mode", served(x), model(x),
                         atol=1e-4, rtol=1e-4)

    # 3. Loaded for serving: optimized for this CPU.
    ctx.phase(ctx.t("loading with your load_for_serving"))
    modes = process_modes()
    fast = mine.load_for_serving(str(serve_path))
    expect_modes_kept(ctx, modes, "load_for_serving(path)")
    ctx.expect(isinstance(fast, torch.jit.ScriptModule),
               ctx.t("load_for_serving returned a {type}, expected a ScriptModule", type=type(fast).__name__))
    if torch.backends.mkldnn.is_available():
        ctx.expect("mkldnn" in str(fast.graph), ctx.t("load_for_serving returns the module as it was saved: pass "
                                                      "it to torch.jit.optimize_for_inference after loading"))
    ctx.expect_equal("labels() of the module load_for_serving returns", list(fast.labels()), names)
    cases = [(1, 16, 16), (3, 21, 21), (8, 32, 32), (2, 17, 29)]
    for trial in ctx.trials(len(cases)):
        n, h, w = cases[trial]
        x = ctx.randn(n, 3, h, w)
        with torch.no_grad():
            # BatchNorm folded into the convolutions rounds differently: float32 tolerances, loosened.
            ctx.expect_close(f"load_for_serving output for {n} image(s) of {h}x{w}", fast(x), model(x),
                             atol=1e-4, rtol=1e-4)

    # A serve file written on a GPU machine: its tensors say cuda:0. The CPU server loads it all the
    # same (a CPU-only machine cannot even create them on CUDA; a GPU machine would put them there).
    ours = ctx.tmpdir / "serve-ours.pt"
    torch.jit.save(torch.jit.freeze(torch.jit.script(model).eval(), preserved_attrs=["labels"]), str(ours))
    from_gpu = ctx.tmpdir / "serve-saved-on-gpu.pt"
    if _as_if_saved_on_gpu(ours, from_gpu):
        x = ctx.randn(2, 3, 16, 16)
        try:
            loaded = mine.load_for_serving(str(from_gpu))
            with torch.no_grad():
                out = loaded(x)
        except Exception as exc:  # noqa: BLE001  (the learner reads why)
            first, rest = first_lines(exc, 3)
            ctx.fail(ctx.t("load_for_serving cannot serve a file saved from a GPU on this CPU: {error}. torch.jit.load "
                           "puts every tensor back on the device it was saved from unless you pass "
                           "map_location=\"cpu\"", error=first), rest)
        with torch.no_grad():
            ctx.expect_close("load_for_serving output for a serve file saved from a GPU", out, model(x),
                             atol=1e-4, rtol=1e-4)

    x = ctx.randn(8, 3, 32, 32)
    with torch.no_grad():
        ctx.time(lambda: fast(x), lambda: ft(x), name="serve vs finetune", label=ctx.t("serve vs finetune"),
                 compares=ctx.t("your served module (frozen, optimized) vs your finetune file in eval mode, "
                                "8 images"),
                 sides=(ctx.t("serve"), ctx.t("finetune")))

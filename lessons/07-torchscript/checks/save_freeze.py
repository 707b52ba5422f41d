"""Check: save_scripted writes a TorchScript file (into the run's temp dir) that torch.jit.load
reads back with the same weights and outputs; load_for_inference returns a frozen, optimized
module that matches the eager model in eval mode. Reports file size and optimized vs eager time."""

import torch
from torch import nn

from _common import first_lines


def check(ctx):
    mine = ctx.learner
    torch.manual_seed(ctx.seed)
    model = ctx.reference.SmallConvNet()
    # As if it had been trained: non-trivial BatchNorm statistics, and still in training mode.
    with torch.no_grad():
        for layer in model.modules():
            if isinstance(layer, nn.BatchNorm2d):
                layer.running_mean.normal_(0.0, 0.5)
                layer.running_var.uniform_(0.5, 2.0)
                layer.weight.normal_(1.0, 0.2)
                layer.bias.normal_(0.0, 0.2)
    model.train()
    state = {k: v.clone() for k, v in model.state_dict().items()}

    # 1. Save, and load back with the checker's own torch.jit.load.
    path = ctx.tmpdir / "convnet.pt"
    ctx.phase("saving with your save_scripted")
    mine.save_scripted(model, str(path))
    ctx.expect(model.training, "save_scripted switched the caller's model to eval mode (.eval() changes "
                               "the module in place): save it as it is; evaluation mode belongs in "
                               "load_for_inference")
    ctx.expect_close("the caller's model's parameters and buffers after save_scripted (it must not change "
                     "them)", dict(model.state_dict()), state)
    ctx.expect(path.is_file(), f"save_scripted did not create the file {path.name}")
    ctx.figure("file_bytes", path.stat().st_size)
    try:
        loaded = torch.jit.load(str(path), map_location="cpu")
    except Exception as exc:
        first, rest = first_lines(exc, 6)
        ctx.fail("torch.jit.load cannot read the file save_scripted wrote: save the scripted module "
                 "with torch.jit.save (torch.save pickles Python objects, which torch.jit.load and C++ "
                 "cannot read)", [first] + rest)
    ctx.expect_close("parameters and buffers loaded back from the file",
                     dict(loaded.state_dict()), state)
    model.eval()
    loaded.eval()
    x = ctx.randn(4, 3, 24, 24)
    with torch.no_grad():
        ctx.expect_close("output of the module loaded back from the file (eval mode)", loaded(x), model(x))

    # 2. Load for inference: eval mode, frozen, optimized.
    ctx.phase("loading with your load_for_inference")
    try:
        fast = mine.load_for_inference(str(path))
    except RuntimeError as exc:
        first, rest = first_lines(exc, 6)
        if "eval mode" in first:
            ctx.fail("torch.jit.freeze refused a module in training mode: the file was saved from a "
                     "model in training mode, so it loads in training mode; call .eval() before freezing",
                     [first])
        raise
    ctx.expect(isinstance(fast, torch.jit.ScriptModule),
               f"load_for_inference returned a {type(fast).__name__}, expected a ScriptModule")
    graph = str(fast.graph)
    ctx.expect(not list(fast.parameters()) and "aten::batch_norm" not in graph,
               "the module load_for_inference returns is not frozen (it still has parameters or "
               "BatchNorm): call torch.jit.freeze on the loaded module in eval mode")
    ctx.expect("aten::dropout" not in graph, "the optimized graph still contains dropout: "
                                             "freeze the module in eval mode")
    if torch.backends.mkldnn.is_available():
        ctx.expect("mkldnn" in graph, "the module is frozen but not optimized: pass it to "
                                      "torch.jit.optimize_for_inference")

    cases = [(1, 16, 16), (3, 21, 21), (8, 32, 32), (2, 17, 29)]
    for trial in ctx.trials(len(cases)):
        n, h, w = cases[trial]
        x = ctx.randn(n, 3, h, w)
        with torch.no_grad():
            # BatchNorm folded into the convolutions rounds differently: float32 tolerances, loosened.
            ctx.expect_close(f"optimized output for {n} image(s) of {h}x{w}", fast(x), model(x),
                             atol=1e-4, rtol=1e-4)

    x = ctx.randn(8, 3, 32, 32)
    with torch.no_grad():
        # "learner" is your optimized module, "reference" the eager model in eval mode.
        ctx.time(lambda: fast(x), lambda: model(x), name="optimized vs eager",
                 compares="your loaded, frozen and optimized module vs the eager model in eval mode")

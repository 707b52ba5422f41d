"""Check: find_bottleneck profiles exactly `iters` forward passes under torch.no_grad() (after its
warm-up), names the op with the most self CPU time in ITS OWN profile, and reports that op's share
of the self CPU time of all rows exactly as its own profile gives it. The checker's own profiles
of the same model are reported beside it.

Profiles differ from run to run, so the share is compared with the learner's own profile, which
the checker sees by watching the profiler object the learner stops: that comparison is exact, and
a share computed against wall-clock time or total times cannot slip through a loose tolerance."""

from collections import defaultdict

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile

from _common import watch_profilers


class WideMLP(nn.Module):
    def __init__(self, d: int, hidden: int) -> None:
        super().__init__()
        self.up, self.act, self.down = nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, d)

    def forward(self, x):
        return self.down(self.act(self.up(x)))


class RankFeatures(nn.Module):
    """A small Linear followed by a sort: the sort, not the Linear, dominates."""

    def __init__(self, d: int, width: int) -> None:
        super().__init__()
        self.proj = nn.Linear(d, width)

    def forward(self, x):
        return self.proj(x).sort(dim=-1).values


class ConvBlock(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.head = nn.Linear(cout, 10)

    def forward(self, x):
        return self.head(torch.relu(self.conv(x)).mean((2, 3)))


def _make(ctx, kind):
    if kind == "WideMLP":
        d, hidden, batch = ctx.choice([192, 256]), ctx.choice([1536, 2048]), ctx.choice([48, 64])
        return WideMLP(d, hidden), ctx.randn(batch, d), f"WideMLP(d={d}, hidden={hidden}), batch {batch}"
    if kind == "RankFeatures":
        width, batch = ctx.choice([768, 1024]), ctx.choice([48, 64])
        return RankFeatures(64, width), ctx.randn(batch, 64), f"RankFeatures(width={width}), batch {batch}"
    cout, size = ctx.choice([24, 32]), ctx.choice([40, 48])
    return ConvBlock(8, cout), ctx.randn(6, 8, size, size), f"ConvBlock(8->{cout}), input 6x8x{size}x{size}"


def _own_profile(model, x, iters=10):
    """Self CPU time (us) and total CPU time per op key, over `iters` forward passes."""
    with torch.no_grad():
        for _ in range(2):
            model(x)
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(iters):
                model(x)
    self_t, total_t = defaultdict(float), defaultdict(float)
    for e in prof.key_averages():
        self_t[e.key] += e.self_cpu_time_total
        total_t[e.key] += e.cpu_time_total
    return self_t, total_t


def _per_key(prof):
    self_t, total_t = defaultdict(float), defaultdict(float)
    for e in prof.key_averages():
        self_t[e.key] += e.self_cpu_time_total
        total_t[e.key] += e.cpu_time_total
    return self_t, total_t


def _top(self_t, n=4):
    grand = sum(self_t.values()) or 1.0
    ranked = sorted(self_t, key=self_t.get, reverse=True)
    return ", ".join(f"{k} {self_t[k] / grand:.0%}" for k in ranked[:n])


def check(ctx):
    mine = ctx.learner
    torch.set_num_threads(1)  # fewer moving parts: profiles of the same model agree better
    kinds = ["WideMLP", "RankFeatures", "ConvBlock"]
    order = torch.randperm(3, generator=ctx.generator).tolist()
    for trial in ctx.trials(3):
        kind = kinds[order[trial]]
        model, x, desc = _make(ctx, kind)
        model.eval()
        iters = ctx.choice([5, 7, 12])  # never the default 10: the argument must be used
        ctx.phase(f"trial {trial + 1}/3: profiling {desc} (checker)")
        self_a, total_a = _own_profile(model, x)

        ctx.phase(f"trial {trial + 1}/3: your find_bottleneck on {desc}, iters={iters}")
        calls = []
        hook = model.register_forward_pre_hook(
            lambda *_, calls=calls: calls.append((torch._C._autograd._profiler_enabled(), torch.is_grad_enabled())))
        try:
            result, profs = watch_profilers(lambda m=model, x=x, n=iters: mine.find_bottleneck(m, x, iters=n))
        finally:
            hook.remove()
        ctx.phase(f"trial {trial + 1}/3: profiling {desc} again (checker)")
        self_b, total_b = _own_profile(model, x)

        ctx.expect(isinstance(result, (tuple, list)) and len(result) == 2,
                   f"find_bottleneck returned {type(result).__name__}, expected a tuple (op_name, share)")
        name, share = result
        ctx.expect(isinstance(name, str), f"the op name should be a string like 'aten::addmm', got {name!r}")
        ctx.expect(isinstance(share, (int, float)) and not isinstance(share, bool),
                   f"the share should be a float, got {type(share).__name__}")
        share = float(share)

        # How the profile was taken: exactly `iters` forward passes, all under no_grad.
        profiled = [grad for on, grad in calls if on]
        ctx.expect(profiled, f"{desc}: none of the model's forward passes ran while a profiler was "
                             f"recording: call model(x) inside the `with profile(...)` block")
        if len(profiled) != iters:
            why = ""
            if len(profiled) > iters and len(calls) == len(profiled):
                why = (" and none before it: warm-up passes belong before the `with profile(...)` block, "
                       "not inside it")
            elif len(profiled) == 10:
                why = " (10 is the default: use the iters argument)"
            ctx.fail(f"{desc}: find_bottleneck(model, x, iters={iters}) profiled {len(profiled)} forward "
                     f"passes, expected {iters}{why}")
        ctx.expect(len(calls) > len(profiled),
                   f"{desc}: no warm-up: every forward pass was profiled. Run the model a few times "
                   f"before entering `profile(...)` so first-call costs stay out of the profile")
        ctx.expect(not any(profiled),
                   f"{desc}: the profiled forward passes ran with autograd on: this is an inference "
                   f"profile, run them under torch.no_grad() (autograd's bookkeeping adds ops and time)")

        # The learner's own profile: the last profiler it stopped.
        ctx.expect(profs, f"{desc}: find_bottleneck did not use torch.profiler.profile (as a `with` block "
                          f"or with start()/stop())")
        prof = profs[-1]
        ctx.expect(not getattr(prof, "with_stack", False),
                   f"{desc}: profile without with_stack=True: stacks add rows for Python frames to "
                   f"key_averages(), and the share is defined over the ops of the plain table")
        mine_self, mine_total = _per_key(prof)
        mine_grand = sum(mine_self.values())
        ctx.expect(name in mine_self, f"{desc}: {name!r} does not appear in your own profile; its ops with the "
                                      f"most self CPU time are {_top(mine_self)}")
        mine_top = max(mine_self.values())
        if mine_self[name] < mine_top:
            if mine_total[name] >= max(mine_total.values()) * 0.999:
                ctx.fail(f"{desc}: {name} has the largest *total* CPU time in your profile, but only "
                         f"{mine_self[name] / mine_grand:.1%} of the self CPU time: most of its time is "
                         f"spent in the ops it calls. Rank ops by self_cpu_time_total; your profile gives "
                         f"{_top(mine_self)}")
            ctx.fail(f"{desc}: {name} is not the op with the most self CPU time in your own profile, "
                     f"which gives {_top(mine_self)}")

        # The checker's own profiles are reported beside yours, not judged: on a busy machine one
        # preempted call can reorder a profile, and the learner's own profile is what the task asks
        # about (that it really profiled this model, warmed up and under no_grad, is checked above).
        self_t = {k: self_a.get(k, 0.0) + self_b.get(k, 0.0) for k in set(self_a) | set(self_b)}
        grand = sum(self_t.values())
        ranked = sorted(self_t, key=self_t.get, reverse=True)

        ctx.expect(0.0 < share <= 1.0,
                   f"{desc}: share {share:g} is not a fraction between 0 and 1"
                   + (" (it looks like a percentage: divide by 100)" if 1.0 < share <= 100.0 else ""))
        expected = mine_self[name] / mine_grand
        if abs(share - expected) > 1e-6 + 1e-6 * expected:
            how = ""
            summed_total = sum(mine_total.values())
            if summed_total and abs(share - mine_self[name] / summed_total) <= 1e-6:
                how = (" You divided by the sum of *total* times, which counts nested ops once per "
                       "level (aten::linear and the aten::addmm inside it).")
            elif share < expected:
                how = (" Yours is smaller: a denominator larger than the profile's self time, such as "
                       "wall-clock time, which also counts Python and profiler overhead.")
            ctx.fail(f"{desc}: you report a share of {share:.2%} for {name}; your own profile gives "
                     f"{expected:.2%} (its self CPU time divided by the self CPU time of every row of "
                     f"key_averages(), the table's \"Self CPU %\").{how}")
        ctx.figure(f"share_{kind}", {"learner": share, "checker": self_t.get(name, 0.0) / grand,
                                     "checker_top": self_t[ranked[0]] / grand})

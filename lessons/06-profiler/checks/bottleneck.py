"""Check: find_bottleneck names an op that is (one of) the largest by self CPU time in the checker's
own profiles of the same model, with a share close to the checker's."""

from collections import defaultdict

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile


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


def check(ctx):
    mine = ctx.learner
    torch.set_num_threads(1)  # fewer moving parts: profiles of the same model agree better
    kinds = ["WideMLP", "RankFeatures", "ConvBlock"]
    order = torch.randperm(3, generator=ctx.generator).tolist()
    for trial in ctx.trials(3):
        kind = kinds[order[trial]]
        model, x, desc = _make(ctx, kind)
        model.eval()
        ctx.phase(f"trial {trial + 1}/3: profiling {desc} (checker)")
        self_a, total_a = _own_profile(model, x)
        ctx.phase(f"trial {trial + 1}/3: your find_bottleneck on {desc}")
        result = mine.find_bottleneck(model, x)
        ctx.phase(f"trial {trial + 1}/3: profiling {desc} again (checker)")
        self_b, total_b = _own_profile(model, x)

        ctx.expect(isinstance(result, (tuple, list)) and len(result) == 2,
                   f"find_bottleneck returned {type(result).__name__}, expected a tuple (op_name, share)")
        name, share = result
        ctx.expect(isinstance(name, str), f"the op name should be a string like 'aten::addmm', got {name!r}")
        ctx.expect(isinstance(share, (int, float)) and not isinstance(share, bool),
                   f"the share should be a float, got {type(share).__name__}")
        share = float(share)

        self_t = {k: self_a.get(k, 0.0) + self_b.get(k, 0.0) for k in set(self_a) | set(self_b)}
        total_t = {k: total_a.get(k, 0.0) + total_b.get(k, 0.0) for k in self_t}
        grand = sum(self_t.values())
        ranked = sorted(self_t, key=self_t.get, reverse=True)
        top = ranked[0]
        top_list = ", ".join(f"{k} {self_t[k] / grand:.0%}" for k in ranked[:4])
        ctx.expect(name in self_t,
                   f"{desc}: {name!r} does not appear in the profile of this model; "
                   f"the ops with the most self CPU time are {top_list}")
        if self_t[name] < 0.5 * self_t[top]:
            if total_t[name] >= 0.5 * total_t.get(top, 0.0):
                ctx.fail(f"{desc}: {name} has a large *total* CPU time but only "
                         f"{self_t[name] / grand:.1%} of the self CPU time: most of its time is spent in "
                         f"the ops it calls. Rank ops by self_cpu_time_total; the checker's profile "
                         f"gives {top_list}")
            ctx.fail(f"{desc}: {name} has {self_t[name] / grand:.1%} of the self CPU time in the "
                     f"checker's profile, far below the top op; the checker found {top_list}")
        ctx.expect(0.0 < share <= 1.0,
                   f"{desc}: share {share:g} is not a fraction between 0 and 1"
                   + (" (it looks like a percentage: divide by 100)" if 1.0 < share <= 100.0 else ""))
        expected = self_t[name] / grand
        ctx.expect(abs(share - expected) <= 0.25,
                   f"{desc}: you report a share of {share:.1%} for {name}, the checker's profile gives "
                   f"{expected:.1%}: divide its self CPU time by the self CPU time of all ops together")
        ctx.figure(f"share_{kind}", {"learner": share, "checker": expected,
                                     "checker_top": self_t[top] / grand})

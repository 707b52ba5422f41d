"""Probes: one call sweeps a tensor function over the inputs its task promises to handle.

    ctx.probe("sigmoid", lambda shape, dtype: (ctx.randn(*shape, dtype=dtype),),
              dtypes=(torch.float64, torch.bfloat16), shapes=((1,), (2, 3, 4)),
              noncontiguous=True, extremes=True, grad=True, double_backward=True)

Each probe calls the learner's function and the reference's (or `truth`, e.g. torch's own op)
on equal copies of the same drawn inputs and judges the two with `ctx.expect_close`, so the
expected side comes from the reference run, untouched by learner code. A probe that makes the
learner's function raise fails the check, naming the probe. Probes run in a fixed order and
draw from the run's generator, so both runs draw the same inputs; every one runs on every check
(no probe depends on the seed drawn, only the values do).

What each option promises (the checker opts into what its task says):
- dtypes: for each dtype, an input of that dtype gives an output of that dtype, equal values.
- shapes: other shapes than the example (size-1, 1-D, N-D).
- noncontiguous: inputs with a non-unit last stride (a transposed copy).
- expanded: inputs with stride 0 along their first dim (an `expand`), which in-place writes
  cannot touch without an error.
- extremes: +-inf, NaN, +-1e30 and 0 written into the first input (NaN must propagate).
- grad: gradients of every floating input, for a random incoming gradient.
- nonleaf: the input is the result of an op on a leaf; the gradient must reach the leaf.
- expanded_grad: the incoming gradient is expanded (stride 0), as `sum().backward()` gives.
- double_backward: the gradient of the gradient (float64), as Hessians and penalties need.
- vmap_dims: torch.func.vmap over the function with these in_dims, against a loop.
- repeat: called twice on the same inputs, and two calls before one backward (interleaved).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, Protocol

import torch

from tutor.i18n import _


class Context(Protocol):
    """What the probes use of the checker's `ctx` (tutor.runner.checker_api.Context), typed
    here so that the API can call the probes without an import circle."""

    @property
    def learner(self) -> ModuleType: ...

    @property
    def reference(self) -> ModuleType: ...

    def fail(self, reason: str, details: Sequence[str] = ()) -> None: ...

    def phase(self, text: str) -> None: ...

    def randn(self, *shape: int, dtype: torch.dtype = ...) -> torch.Tensor: ...

    def expect_close(
        self, name: str, actual: Any, expected: Any, *, atol: float | None = None, rtol: float | None = None
    ) -> None: ...


Make = Callable[[tuple[int, ...], torch.dtype], tuple[Any, ...]]
EXTREMES = (float("inf"), float("-inf"), float("nan"), 1e30, -1e30, 0.0)
VMAP_SIZE = 3


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _floating(args: Sequence[Any]) -> list[int]:
    return [i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.is_floating_point()]


def _copy(args: Sequence[Any], grad: bool = False) -> tuple[Any, ...]:
    """Equal, independent copies of the tensor arguments (leaves needing grad if `grad`)."""
    out = []
    for a in args:
        if isinstance(a, torch.Tensor):
            c = a.detach().clone(memory_format=torch.preserve_format)
            if 0 in a.stride():  # an expanded input: a view of a compact copy, stride 0 kept
                c = c.contiguous().as_strided(a.size(), a.stride())
            elif c.stride() != a.stride():  # clone keeps dense layouts only: rebuild the gaps
                c = torch.empty_strided(a.size(), a.stride(), dtype=a.dtype, device=a.device).copy_(a)
            out.append(c.requires_grad_(grad and c.is_floating_point()))
        else:
            out.append(a)
    return tuple(out)


def _noncontiguous(t: torch.Tensor) -> torch.Tensor:
    """The same values laid out transposed (2-D and up: `view(-1)` fails on it), or every other
    element of a wider buffer (1-D)."""
    if t.dim() >= 2 and t.shape[-2] > 1:
        return t.transpose(-1, -2).contiguous().transpose(-1, -2)
    if t.dim() == 0:
        return t
    wide = torch.zeros(*t.shape[:-1], 2 * t.shape[-1], dtype=t.dtype, device=t.device)
    view = wide[..., ::2]
    view.copy_(t)
    return view


def _expanded(t: torch.Tensor) -> torch.Tensor:
    """Stride 0 along the first dim: the first row repeated, as `expand` gives."""
    if t.dim() == 0 or t.shape[0] < 2:
        return t
    return t[:1].expand_as(t)


def _said(exc: BaseException) -> str:
    """The first line of an error's message ("" when it has none)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


def _second(
    grads: Sequence[torch.Tensor | None], inputs: Sequence[torch.Tensor], v: Sequence[torch.Tensor]
) -> list[torch.Tensor]:
    """d<grads, v>/d inputs (zeros where nothing depends on an input)."""
    terms = [(gr * w).sum() for gr, w in zip(grads, v) if gr is not None]
    if not terms:
        return [torch.zeros_like(x) for x in inputs]
    out = torch.autograd.grad(torch.stack(terms).sum(), list(inputs), allow_unused=True)
    return [torch.zeros_like(x) if h is None else h for x, h in zip(inputs, out)]


class Prober:
    def __init__(
        self,
        ctx: Context,
        name: str,
        fn: Callable[..., Any],
        truth: Callable[..., Any],
        make: Make,
        shape: tuple[int, ...],
        tol: dict[torch.dtype, dict[str, float]],
    ) -> None:
        self.ctx, self.name, self.fn, self.truth, self.make = ctx, name, fn, truth, make
        self.shape, self.tol = shape, tol

    def label(self, what: str) -> str:
        return _("{name} {probe}", name=f"{self.name}(...)", probe=what)

    def call(self, fn: Callable[..., Any], args: Sequence[Any], what: str, mine: bool) -> Any:
        try:
            return fn(*args)
        except Exception as exc:
            if mine:
                self.ctx.fail(
                    _(
                        "{call} raised {kind} {probe}: {message}",
                        call=f"{self.name}(...)",
                        kind=type(exc).__name__,
                        probe=what,
                        message=_said(exc),
                    )
                )
            raise

    def both(
        self, args: Sequence[Any], what: str, grad: bool = False
    ) -> tuple[Any, Any, tuple[Any, ...], tuple[Any, ...]]:
        a, b = _copy(args, grad), _copy(args, grad)
        return self.call(self.fn, a, what, True), self.call(self.truth, b, what, False), a, b

    def backward(self, run: Callable[[], None], what: str) -> None:
        """The learner's backward: an error there names the probe too."""
        try:
            run()
        except Exception as exc:
            self.ctx.fail(
                _(
                    "the backward of {call} raised {kind} {probe}: {message}",
                    call=f"{self.name}(...)",
                    kind=type(exc).__name__,
                    probe=what,
                    message=_said(exc),
                )
            )

    def need_graph(self, what: str, *outs: Any) -> None:
        """Every output of the learner's call is in the autograd graph, or the check fails."""
        if not all(isinstance(o, torch.Tensor) and o.requires_grad for o in outs):
            self.ctx.fail(
                _(
                    "{call} returned a result with no gradient {probe}: keep it in the autograd graph",
                    call=f"{self.name}(...)",
                    probe=what,
                )
            )

    def close(self, what: str, actual: Any, expected: Any, dtype: torch.dtype) -> None:
        tol = self.tol.get(dtype, {})
        self.ctx.expect_close(self.label(what), actual, expected, atol=tol.get("atol"), rtol=tol.get("rtol"))

    def grads(self, what: str, mine: Any, ref: Any, a: Sequence[Any], b: Sequence[Any], g: Any) -> None:
        self.need_graph(what, mine)
        self.backward(lambda: mine.backward(g), what)
        ref.backward(g.detach().clone() if isinstance(g, torch.Tensor) else g)
        for i in _floating(a):
            got = a[i].grad if a[i].grad is not None else torch.zeros_like(a[i])
            self.close(_("gradient of input #{n} {probe}", n=i + 1, probe=what), got, b[i].grad, a[i].dtype)

    # -- the probes ----------------------------------------------------------------------------

    def values(self, shape: tuple[int, ...], dtype: torch.dtype, what: str) -> None:
        args = self.make(shape, dtype)
        mine, ref, _a, _b = self.both(args, what)
        self.close(what, mine, ref, dtype)

    def transformed(self, transform: Callable[[torch.Tensor], torch.Tensor], what: str) -> None:
        args = tuple(transform(a) if isinstance(a, torch.Tensor) else a for a in self.make(self.shape, torch.float32))
        mine, ref, _a, _b = self.both(args, what)
        self.close(what, mine, ref, torch.float32)

    def extremes(self) -> None:
        what = _("for inputs holding inf, -inf, NaN, 1e30 and -1e30")
        args = list(self.make(self.shape, torch.float32))
        first = _floating(args)[0]
        x = args[first].detach().clone()
        flat = x.view(-1)
        for k, value in enumerate(EXTREMES[: flat.numel()]):
            flat[(k * 7919) % flat.numel()] = value
        args[first] = x
        mine, ref, _a, _b = self.both(args, what)
        self.close(what, mine, ref, torch.float32)

    def gradient(self, what: str, expanded_grad: bool = False, nonleaf: bool = False) -> None:
        args = self.make(self.shape, torch.float32)
        if nonleaf:
            leaves_a, leaves_b = _copy(args, True), _copy(args, True)
            a = tuple(x * 1.0 if isinstance(x, torch.Tensor) and x.requires_grad else x for x in leaves_a)
            b = tuple(x * 1.0 if isinstance(x, torch.Tensor) and x.requires_grad else x for x in leaves_b)
            mine, ref = self.call(self.fn, a, what, True), self.call(self.truth, b, what, False)
            a, b = leaves_a, leaves_b
        else:
            mine, ref, a, b = self.both(args, what, grad=True)
        if not isinstance(ref, torch.Tensor):
            return
        if expanded_grad and ref.dim() > 0:
            g = (
                self.ctx.randn(*ref.shape[1:], dtype=ref.dtype).expand(ref.shape)
                if ref.dim() > 1
                else (self.ctx.randn(1, dtype=ref.dtype).expand(ref.shape))
            )
        else:
            g = self.ctx.randn(*ref.shape, dtype=ref.dtype)
        self.grads(what, mine, ref, a, b, g)

    def double_backward(self) -> None:
        what = _("(second derivative, float64)")
        args = self.make(self.shape, torch.float64)
        mine, ref, a, b = self.both(args, what, grad=True)
        if not isinstance(ref, torch.Tensor):
            return
        g = self.ctx.randn(*ref.shape, dtype=torch.float64)
        inputs_a, inputs_b = [a[i] for i in _floating(a)], [b[i] for i in _floating(b)]
        v = [self.ctx.randn(*x.shape, dtype=torch.float64) for x in inputs_b]
        gb = torch.autograd.grad(ref, inputs_b, g, create_graph=True, allow_unused=True)
        hb = _second(gb, inputs_b, v)
        try:
            ga = torch.autograd.grad(mine, inputs_a, g.clone(), create_graph=True, allow_unused=True)
            if any(x is not None and not x.requires_grad for x in ga):
                raise RuntimeError(_("the gradient your backward returns has no graph behind it"))
            ha = _second(ga, inputs_a, v)
        except RuntimeError as exc:
            self.ctx.fail(
                _(
                    "differentiating the gradient of {call} failed {probe}: its backward must be made of "
                    "differentiable torch ops (no .detach(), no @once_differentiable)",
                    call=f"{self.name}(...)",
                    probe=what,
                ),
                [_said(exc) or type(exc).__name__],
            )
        for i, (x, y) in enumerate(zip(ha, hb)):
            self.close(_("second derivative of input #{n}", n=i + 1), x, y, torch.float64)

    def vmapped(self, dim: int) -> None:
        what = _("under torch.func.vmap(in_dims={dim})", dim=dim)
        slices = [self.make(self.shape, torch.float32) for _k in range(VMAP_SIZE)]
        stacked = tuple(
            torch.stack([s[i] for s in slices], dim=dim) if isinstance(slices[0][i], torch.Tensor) else slices[0][i]
            for i in range(len(slices[0]))
        )
        dims = tuple(dim if isinstance(a, torch.Tensor) else None for a in stacked)
        mine = self.call(torch.func.vmap(self.fn, in_dims=dims), _copy(stacked), what, True)
        ref = torch.stack([self.truth(*_copy(s)) for s in slices])
        self.close(what, mine, ref, torch.float32)

    def repeated(self) -> None:
        what = _("called twice on the same input")
        args = self.make(self.shape, torch.float32)
        first, ref, a, _b = self.both(args, what)
        second = self.call(self.fn, a, what, True)
        self.close(_("{probe} (first call)", probe=what), first, ref, torch.float32)
        self.close(_("{probe} (second call)", probe=what), second, ref, torch.float32)
        # Two forwards before one backward: each call's saved state must be its own.
        what = _("for two calls before one backward")
        one, two = self.make(self.shape, torch.float32), self.make(self.shape, torch.float32)
        one_a, one_b, two_a, two_b = _copy(one, True), _copy(one, True), _copy(two, True), _copy(two, True)
        m1, m2 = self.call(self.fn, one_a, what, True), self.call(self.fn, two_a, what, True)
        r1, r2 = self.truth(*one_b), self.truth(*two_b)
        if not isinstance(r1, torch.Tensor):
            return
        g1, g2 = self.ctx.randn(*r1.shape), self.ctx.randn(*r2.shape)
        self.need_graph(what, m1, m2)
        self.backward(lambda: torch.autograd.backward([m1, m2], [g1, g2]), what)
        torch.autograd.backward([r1, r2], [g1.clone(), g2.clone()])
        for k, (xa, xb) in enumerate(((one_a, one_b), (two_a, two_b))):
            for i in _floating(xa):
                got = xa[i].grad if xa[i].grad is not None else torch.zeros_like(xa[i])
                self.close(
                    _("gradient of input #{n} of call {k} {probe}", n=i + 1, k=k + 1, probe=what),
                    got,
                    xb[i].grad,
                    torch.float32,
                )


def probe(
    ctx: Context,
    name: str,
    make: Make,
    *,
    truth: Callable[..., Any] | None = None,
    shape: Sequence[int] = (5, 7),
    dtypes: Sequence[torch.dtype] = (),
    shapes: Sequence[Sequence[int]] = (),
    noncontiguous: bool = False,
    expanded: bool = False,
    extremes: bool = False,
    grad: bool = False,
    nonleaf: bool = False,
    expanded_grad: bool = False,
    double_backward: bool = False,
    vmap_dims: Sequence[int] = (),
    repeat: bool = False,
    tol: dict[torch.dtype, dict[str, float]] | None = None,
) -> None:
    """Run the probes the task promises (see the module's docstring) on `ctx.learner.<name>`."""
    fn = getattr(ctx.learner, name, None)
    if not callable(fn):
        ctx.fail(_("your file has no function `{name}`", name=name))
        return
    reference = truth if truth is not None else getattr(ctx.reference, name)
    p = Prober(ctx, name, fn, reference, make, tuple(shape), dict(tol or {}))
    ctx.phase(_("probing {call} with other inputs", call=f"{name}(...)"))
    for dtype in dtypes:
        p.values(p.shape, dtype, _("for a {dtype} input", dtype=_dtype_name(dtype)))
    for s in shapes:
        p.values(tuple(s), torch.float32, _("for an input of shape {shape}", shape=tuple(s)))
    if noncontiguous:
        p.transformed(_noncontiguous, _("for a non-contiguous input"))
    if expanded:
        p.transformed(_expanded, _("for an expanded input (stride 0)"))
    if extremes:
        p.extremes()
    if grad:
        p.gradient(_("(gradients)"))
    if nonleaf:
        p.gradient(_("for an input computed from a leaf (the gradient must reach it)"), nonleaf=True)
    if expanded_grad:
        p.gradient(_("for an expanded incoming gradient (stride 0)"), expanded_grad=True)
    if double_backward:
        p.double_backward()
    for dim in vmap_dims:
        p.vmapped(dim)
    if repeat:
        p.repeated()

"""The contract of every call a checker makes into learner code (runner processes only).

A call may compute, return and (where its task says so) change what it was given; it must not
leave behind anything else: the caller's tensors changed in place, a model switched to eval,
`requires_grad` flipped, grad mode off, the global RNG reseeded, a compile or backend flag set,
an environment variable, the working directory or files changed. The checker never lists
these: `Context.learner` hands out the learner's module with its functions wrapped, and each
call is snapshotted before and after.

Judged twin-style, like every observation: both runs report what their call changed, by key
(`"1:values"`, `"grad-mode"`), and the learner's run fails on a key the reference run's same
call did not change. What the reference does is allowed by construction (a training step
changes the parameters); what the task allows beyond that is declared per exercise
(`allows = [...]` in lesson.toml, from CATEGORIES).
"""

from __future__ import annotations

import functools
import inspect
import os
import random
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import torch

from tutor.i18n import _
from tutor.runner import wire
from tutor.runner.protocol import CONTRACT_CATEGORIES as CATEGORIES  # noqa: F401 - re-exported

# What an exercise may declare its task allows to change: CATEGORIES (in tutor.runner.protocol,
# which the course loader reads without torch). The keys of changes are "<argument>:<category>"
# or a global category.
CLONE_BUDGET = 1 << 22  # elements per call whose values are kept for an exact comparison
_MAX_ITEMS = 64  # items of a list/dict argument looked into
_MAX_DEPTH = 3


# -- global state ------------------------------------------------------------------------------


_SEED_CALLS = {"random": 0, "numpy": 0}


def _count_seeds(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def seed(*args: Any, **kwargs: Any) -> Any:
        _SEED_CALLS[name] += 1
        return original(*args, **kwargs)

    seed.__tutor_counts_seeds__ = True  # type: ignore[attr-defined]
    return seed


def _watch_seeding() -> None:
    """Count reseeds of `random` and NumPy (torch's own shows in `torch.initial_seed()`)."""
    if not getattr(random.seed, "__tutor_counts_seeds__", False):
        random.seed = _count_seeds("random", random.seed)
    np = sys.modules.get("numpy")
    if np is not None and not getattr(np.random.seed, "__tutor_counts_seeds__", False):
        np.random.seed = _count_seeds("numpy", np.random.seed)


def _config_overrides(module_name: str) -> dict[str, Any] | None:
    """The entries of a torch config module that differ from their defaults (None: not loaded)."""
    cfg = sys.modules.get(module_name)
    entries = getattr(cfg, "_config", None)
    if not isinstance(entries, dict):
        return None
    out: dict[str, Any] = {}
    for key, entry in entries.items():
        if getattr(entry, "deprecated", False) or getattr(entry, "alias", None):
            continue  # reading one warns, and it does nothing
        try:
            value = getattr(cfg, key)
            default = entry.default
            if value is not default and value != default:
                out[key] = _hashable(value)
        except Exception:
            continue
    return out


def _hashable(value: Any) -> Any:
    try:
        hash(value)
        return value
    except TypeError:
        return repr(value)


def _flags() -> dict[str, Any]:
    b = torch.backends
    flags: dict[str, Any] = {
        "torch.are_deterministic_algorithms_enabled()": torch.are_deterministic_algorithms_enabled(),
        "torch.is_deterministic_algorithms_warn_only_enabled()": torch.is_deterministic_algorithms_warn_only_enabled(),
        "torch.is_anomaly_enabled()": torch.is_anomaly_enabled(),
        "torch.get_float32_matmul_precision()": torch.get_float32_matmul_precision(),
        "torch.backends.cudnn.enabled": b.cudnn.enabled,
        "torch.backends.cudnn.benchmark": b.cudnn.benchmark,
        "torch.backends.cudnn.deterministic": b.cudnn.deterministic,
        "torch.backends.cudnn.allow_tf32": b.cudnn.allow_tf32,
        "torch.backends.mkldnn.enabled": b.mkldnn.enabled,
    }
    try:
        flags["torch.backends.cuda.matmul.allow_tf32"] = b.cuda.matmul.allow_tf32
        flags["torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction"] = (
            b.cuda.matmul.allow_fp16_reduced_precision_reduction
        )
        flags["torch.backends.cuda.flash_sdp_enabled()"] = b.cuda.flash_sdp_enabled()  # type: ignore[no-untyped-call]
        flags["torch.backends.cuda.math_sdp_enabled()"] = b.cuda.math_sdp_enabled()  # type: ignore[no-untyped-call]
    except Exception:
        pass
    return flags


@dataclass
class GlobalState:
    values: dict[str, dict[str, Any]] = field(default_factory=dict)  # category -> what -> value


# Config entries torch sets itself from a public call already watched under another category
# (torch.use_deterministic_algorithms sets Inductor's `deterministic`).
_MIRRORED = {("torch._inductor.config", "deterministic")}


def global_state(root: Path | None = None) -> GlobalState:
    """What any code in this process can change for everyone after it. With `root` (the run's
    folder), also the environment, the working directory and the files under `root`."""
    _watch_seeding()
    v: dict[str, dict[str, Any]] = {
        "grad-mode": {
            "torch.is_grad_enabled()": torch.is_grad_enabled(),
            "torch.is_inference_mode_enabled()": torch.is_inference_mode_enabled(),
        },
        "autocast": {
            f"autocast({d})": (torch.is_autocast_enabled(d), str(torch.get_autocast_dtype(d))) for d in ("cpu", "cuda")
        },
        "default-dtype": {
            "torch.get_default_dtype()": str(torch.get_default_dtype()),
            "torch.get_default_device()": str(torch.get_default_device()),
        },
        "rng": {
            "torch.manual_seed": torch.initial_seed(),
            "random.seed": _SEED_CALLS["random"],
            "numpy.random.seed": _SEED_CALLS["numpy"],
        },
        "threads": {
            "torch.get_num_threads()": torch.get_num_threads(),
            "torch.get_num_interop_threads()": torch.get_num_interop_threads(),
        },
        "flags": _flags(),
        "compile-config": {},
    }
    for module in ("torch._dynamo.config", "torch._inductor.config", "torch._functorch.config"):
        overrides = _config_overrides(module)
        for key, value in (overrides or {}).items():
            if (module, key) not in _MIRRORED:
                v["compile-config"][f"{module}.{key}"] = value
    if root is not None:
        v["env"] = _environment()
        try:
            v["cwd"] = {"os.getcwd()": os.getcwd()}
        except OSError:
            v["cwd"] = {"os.getcwd()": None}
        v["files"] = _files(root)
    return GlobalState(v)


def _environment() -> dict[str, Any]:
    """os.environ as a plain dict; the raw (bytes) mapping where there is one, which copies
    in C instead of decoding every key on every call."""
    raw = getattr(os.environ, "_data", None)
    if isinstance(raw, dict):
        return dict(raw)
    return dict(os.environ)


def _name(key: Any) -> str:
    return key.decode("utf-8", "replace") if isinstance(key, bytes) else str(key)


def _files(root: Path, limit: int = 2000) -> dict[str, Any]:
    """The run folder's files (but the shared build caches), by path: (size, mtime)."""
    out: dict[str, Any] = {}
    try:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in ("cache", "__pycache__", "torch_extensions")]
            for name in filenames:
                p = os.path.join(dirpath, name)
                try:
                    st = os.stat(p)
                except OSError:
                    continue
                out[os.path.relpath(p, root)] = (st.st_size, st.st_mtime_ns)
                if len(out) >= limit:
                    return out
    except OSError:
        pass
    return out


def global_changes(before: GlobalState, after: GlobalState) -> list[tuple[str, str]]:
    """(key, what changed, in words) for every global setting that differs."""
    changes: list[tuple[str, str]] = []
    for category, was in before.values.items():
        now = after.values.get(category, {})
        if category == "files":
            removed = [p for p in was if p not in now]
            modified = [p for p in was if p in now and now[p] != was[p]]
            if removed:
                changes.append((category, _("it removed {path}", path=_listing(removed))))
            elif modified:
                changes.append((category, _("it rewrote {path}", path=_listing(modified))))
            continue
        if was == now:
            continue
        for what in sorted(was.keys() | now.keys()):
            a, b = was.get(what, _MISSING), now.get(what, _MISSING)
            if a == b:
                continue
            changes.append((category, _describe_global(category, what, a, b)))
            break  # one line per category is enough to say what to fix
    return changes


_MISSING = object()


def _listing(paths: list[str]) -> str:
    shown = ", ".join(sorted(paths)[:3])
    return shown + (_(" and {n} more", n=len(paths) - 3) if len(paths) > 3 else "")


def _describe_global(category: str, what: str, before: Any, after: Any) -> str:
    if category == "rng":
        return _("it reseeded the global random number generator ({what})", what=what)
    if category == "env":
        if after is _MISSING:
            return _("it removed the environment variable {name}", name=_name(what))
        return _("it set the environment variable {name}", name=_name(what))
    if category == "compile-config":
        return _("it set {what} = {value}", what=what, value="(default)" if after is _MISSING else repr(after))
    return _("it changed {what} from {before} to {after}", what=what, before=_show(before), after=_show(after))


def _show(value: Any) -> str:
    return "(unset)" if value is _MISSING else repr(value)


# -- what the caller owns ----------------------------------------------------------------------


class _Snapshot:
    """One argument's state before the call, to compare after it."""

    def __init__(self, label: str, key: str, obj: Any, budget: list[int], values: bool) -> None:
        self.label, self.key, self.obj = label, key, obj
        self.state = _state_of(obj, budget, values)

    def changes(self) -> list[tuple[str, str]]:
        now = _state_of(self.obj, [0], False)
        live = _live(self.obj)
        out: list[tuple[str, str]] = []
        for category, was in self.state.items():
            detail = _compare(category, was, now.get(category), live, self.label)
            if detail:
                out.append((f"{self.key}:{category}", detail))
        return out


def _version(t: torch.Tensor) -> int | None:
    try:
        return int(t._version)
    except Exception:  # inference tensors keep no version counter
        return None


def _plain(t: torch.Tensor) -> bool:
    """A tensor whose values can be compared here without running collectives or subclass code."""
    return type(t) in (torch.Tensor, torch.nn.Parameter) and t.layout == torch.strided and t.device.type != "meta"


def _tensor_state(t: torch.Tensor, budget: list[int], values: bool) -> dict[str, Any]:
    keep = None
    if values and _plain(t) and t.numel() <= budget[0]:
        budget[0] -= t.numel()
        try:
            keep = t.detach().clone()
        except Exception:
            keep = None
    grad = t.grad if t.is_leaf else None
    return {
        "values": (_version(t), tuple(t.shape), tuple(t.stride()) if t.layout == torch.strided else None, keep),
        "requires-grad": t.requires_grad,
        "grads": None if grad is None else (id(grad), _version(grad)),
    }


def _module_state(m: torch.nn.Module, budget: list[int], values: bool) -> dict[str, Any]:
    params = dict(m.named_parameters())
    buffers = dict(m.named_buffers())
    hooks: dict[str, Any] = {}
    for name, sub in m.named_modules():
        counts = tuple(
            len(getattr(sub, attr, None) or ())
            for attr in ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")
        )
        if any(counts):
            hooks[name] = counts
    for name, p in params.items():
        tensor_hooks = len(getattr(p, "_post_accumulate_grad_hooks", None) or ()) + len(p._backward_hooks or ())
        if tensor_hooks:
            hooks[name] = tensor_hooks
    return {
        "training": {name: sub.training for name, sub in m.named_modules()},
        "structure": tuple((name, type(sub).__qualname__) for name, sub in m.named_modules()),
        "requires-grad": {name: p.requires_grad for name, p in params.items()},
        "parameters": {
            name: (id(t), _tensor_state(t, budget, values)["values"]) for name, t in {**params, **buffers}.items()
        },
        "grads": {name: None if p.grad is None else (id(p.grad), _version(p.grad)) for name, p in params.items()},
        "hooks": hooks,
    }


def _optimizer_state(o: torch.optim.Optimizer) -> dict[str, Any]:
    groups = tuple(tuple(sorted((k, _hashable(v)) for k, v in g.items() if k != "params")) for g in o.param_groups)
    return {"optimizer": groups}


def _state_of(obj: Any, budget: list[int], values: bool) -> dict[str, Any]:
    if isinstance(obj, torch.Tensor):
        s = _tensor_state(obj, budget, values)
        return {"inputs": s["values"], "requires-grad": s["requires-grad"], "grads": s["grads"]}
    if isinstance(obj, torch.nn.Module):
        return _module_state(obj, budget, values)
    if isinstance(obj, torch.optim.Optimizer):
        return _optimizer_state(obj)
    if isinstance(obj, (list, dict)):
        return {"inputs": _contents(obj)}
    return {}


def _contents(obj: list[Any] | dict[Any, Any]) -> tuple[Any, ...]:
    """A mutable container's items by identity: an item added, removed or replaced shows."""
    items = obj.items() if isinstance(obj, dict) else enumerate(obj)
    return ("container", tuple((_hashable(k), id(v)) for k, v in items))


def _same_values(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return True
    if a.shape != b.shape or a.dtype != b.dtype:  # a cast keeps the values, not the tensor
        return False
    try:
        if a.is_floating_point() or a.is_complex():
            return bool(((a == b) | (a.isnan() & b.isnan())).all())
        return bool(torch.equal(a, b))
    except Exception:
        return True


def _compare(category: str, was: Any, now: Any, live: dict[str, torch.Tensor], arg: str) -> str | None:
    """In words, how one category of an argument's state changed (None: it did not)."""
    if category == "inputs" and was and was[0] == "container":
        return (
            _("the contents of {arg} were changed (items added, removed or replaced)", arg=arg) if was != now else None
        )
    if category == "inputs":
        v0, shape0, stride0, keep = was
        v1, shape1, stride1, _keep = now
        if shape0 != shape1 or stride0 != stride1:
            return _("the shape or strides of {arg} were changed", arg=arg)
        if keep is not None and not _same_values(keep, live.get("")):
            return _("{arg} was changed in place", arg=arg)
        if v0 is not None and v1 is not None and v0 != v1:
            return _("{arg} was written in place (its version counter went from {a} to {b})", arg=arg, a=v0, b=v1)
        return None
    if category == "requires-grad":
        if isinstance(was, dict):
            flipped = [k for k in was if k in now and was[k] != now[k]]
            if not flipped:
                return None
            return _("requires_grad of {names} in {arg} was changed", names=_listing(flipped), arg=arg)
        return _("{arg}.requires_grad went from {a} to {b}", arg=arg, a=was, b=now) if was != now else None
    if category == "grads":
        if isinstance(was, dict):
            changed = [k for k in was if was[k] != now.get(k)]
            return _("the .grad of {names} in {arg} was changed", names=_listing(changed), arg=arg) if changed else None
        return _("{arg}.grad was changed", arg=arg) if was != now else None
    if category == "training":
        flipped = [k for k in was if k in now and was[k] != now[k]]
        if not flipped:
            return None
        mode = "train" if now[flipped[0]] else "eval"
        names = _listing([k or _("the module itself") for k in flipped])
        return _("{names} in {arg} switched to {mode} mode", names=names, arg=arg, mode=mode)
    if category == "structure":
        return _("submodules of {arg} were replaced or added", arg=arg) if was != now else None
    if category == "hooks":
        return _("hooks were added to or removed from {arg}", arg=arg) if was != now else None
    if category == "parameters":
        changed = []
        for name, (ident, (v0, shape0, _stride0, keep)) in was.items():
            if name not in now:
                changed.append(name)
                continue
            ident1, (v1, shape1, _stride1, _k) = now[name]
            if ident1 != ident or shape1 != shape0 or (v0 is not None and v1 is not None and v0 != v1):
                changed.append(name)
            elif keep is not None and not _same_values(keep, live.get(name)):
                changed.append(name)
        if not changed:
            return None
        # A cast (model.to(torch.bfloat16)) is the commonest such change: say so, with the dtype.
        dtypes = {
            str(live[name].dtype).removeprefix("torch.")
            for name in changed
            if isinstance(live.get(name), torch.Tensor)
            and isinstance(was[name][1][3], torch.Tensor)
            and live[name].dtype != was[name][1][3].dtype
        }
        if len(dtypes) == 1:
            return _(
                "the parameters or buffers {names} of {arg} were cast to {dtype}",
                names=_listing(changed),
                arg=arg,
                dtype=dtypes.pop(),
            )
        return _("the parameters or buffers {names} of {arg} were changed", names=_listing(changed), arg=arg)
    if category == "optimizer":
        return _("the settings of {arg} (lr, betas, ...) were changed", arg=arg) if was != now else None
    return None


# -- the call ----------------------------------------------------------------------------------


def _transforms_active() -> bool:
    """Inside torch.compile, torch.jit tracing or a torch.func transform the call is part of
    what is being traced: snapshots there would change the program, so calls pass straight on."""
    try:
        jit: Any = torch.jit
        if torch.compiler.is_compiling() or jit.is_tracing() or jit.is_scripting():
            return True
        return torch._C._functorch.peek_interpreter_stack() is not None
    except Exception:
        return False


def _profiling() -> bool:
    try:
        return bool(torch.autograd.profiler._is_profiler_enabled)
    except Exception:
        return False


def _owned(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """(label in words, key, object) for every tensor, module and optimizer the call was given."""
    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        names = []
    found: list[tuple[str, str, Any]] = []
    seen: set[int] = set()

    def visit(obj: Any, label: str, key: str, depth: int) -> None:
        if id(obj) in seen or depth > _MAX_DEPTH:
            return
        if isinstance(obj, (torch.Tensor, torch.nn.Module, torch.optim.Optimizer)):
            seen.add(id(obj))
            found.append((label, key, obj))
        elif isinstance(obj, (list, tuple)):
            if isinstance(obj, list):
                seen.add(id(obj))
                found.append((label, key, obj))
            for i, item in enumerate(obj[:_MAX_ITEMS]):
                visit(item, f"{label}[{i}]", f"{key}[{i}]", depth + 1)
        elif isinstance(obj, dict):
            seen.add(id(obj))
            found.append((label, key, obj))
            for i, (k, item) in enumerate(list(obj.items())[:_MAX_ITEMS]):
                visit(item, f"{label}[{k!r}]", f"{key}[{i}]", depth + 1)

    for i, a in enumerate(args):
        name = names[i] if i < len(names) else f"#{i + 1}"
        visit(a, f"`{name}`", str(i), 0)
    for k, a in kwargs.items():
        visit(a, f"`{k}`", k, 0)
    return found


def _tensors_in(value: Any, depth: int = 0) -> Iterable[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)) and depth < _MAX_DEPTH:
        for item in value[:_MAX_ITEMS]:
            yield from _tensors_in(item, depth + 1)
    elif isinstance(value, dict) and depth < _MAX_DEPTH:
        for item in list(value.values())[:_MAX_ITEMS]:
            yield from _tensors_in(item, depth + 1)


class Contract:
    """Wraps the learner module's functions; reports each call's changes through `observe`."""

    def __init__(self, observe: Callable[[str, list[tuple[str, str]]], None], allows: Iterable[str] = ()) -> None:
        self.observe = observe
        self.allows = frozenset(allows)
        self.paused = 0
        self._depth = 0
        self._pending_grads: list[tuple[str, torch.Tensor, torch.Tensor | None, int | None]] = []
        self._wrapped: dict[tuple[int, str], Callable[..., Any]] = {}
        self.root = Path.cwd()  # the run's folder (the runner made it the working directory)
        self.start = global_state()

    # -- the module ----------------------------------------------------------------------------

    def module(self, module: types.ModuleType) -> types.ModuleType:
        """A view of `module` whose functions keep the contract; everything else is the module's own."""
        return _ContractModule(module, self)

    def wrap(self, module: types.ModuleType, name: str, value: Any) -> Any:
        if not _own_function(module, value):
            return value
        key = (id(value), name)
        if key not in self._wrapped:
            self._wrapped[key] = self._wrapper(name, value)
        return self._wrapped[key]

    def _wrapper(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            if self.paused or self._depth or _transforms_active():
                return fn(*args, **kwargs)
            return self.call(name, fn, args, kwargs)

        return call

    # -- one call ------------------------------------------------------------------------------

    def call(self, name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        values = not _profiling()
        before = global_state(self.root)
        budget = [CLONE_BUDGET]
        snaps = [_Snapshot(label, key, obj, budget, values) for label, key, obj in _owned(fn, args, kwargs)]
        self._depth += 1
        try:
            result = fn(*args, **kwargs)
        except BaseException:
            # Observed all the same: a call that raises in one run and returns in the other keeps
            # the two runs paired, so the checker's own reason ("expected an error") is the verdict.
            self._depth -= 1
            self._report(name, before, snaps, None)
            raise
        self._depth -= 1
        result = wire.plain(result)  # judged by its data, whatever its class answers
        self._report(name, before, snaps, result)
        return result

    def _report(self, name: str, before: GlobalState, snaps: list[_Snapshot], result: Any) -> None:
        changes = self._drain_grads()
        changes += global_changes(before, global_state(self.root))
        for snap in snaps:
            changes += snap.changes()
        changes += self._returned_inputs(snaps, result)
        self._watch_grads(name, result)
        self.observe(f"`{name}(...)`", self._reportable(changes))  # code: the same in every language

    def finish(self) -> None:
        """At the end of the check: what is still changed for everyone since it began (a flag
        set when the learner's file was imported, a mode left on by a method)."""
        changes = self._drain_grads()
        changes += [c for c in global_changes(self.start, global_state()) if c[0] not in ("rng",)]
        self.observe(_("your code (by the end of the check)"), self._reportable(changes))

    def _reportable(self, changes: list[tuple[str, str]]) -> list[tuple[str, str]]:
        return [(k, text) for k, text in changes if k.rsplit(":", 1)[-1] not in self.allows]

    def _returned_inputs(self, snaps: list[_Snapshot], result: Any) -> list[tuple[str, str]]:
        inputs = [(s, s.obj) for s in snaps if isinstance(s.obj, torch.Tensor)]
        out: list[tuple[str, str]] = []
        for t in _tensors_in(result):
            for snap, x in inputs:
                if t is x:
                    out.append(
                        (
                            f"{snap.key}:returns-input",
                            _("it returned {arg} itself where a new tensor is due", arg=snap.label),
                        )
                    )
        return out

    # -- the incoming gradient -----------------------------------------------------------------

    def _watch_grads(self, name: str, result: Any) -> None:
        """Keep a copy of the gradient that reaches each output, to see whether the call's
        backward writes into it (that tensor is the caller's)."""
        for t in _tensors_in(result):
            if not (t.requires_grad and t.grad_fn is not None) or _transforms_active():
                continue

            def hook(g: torch.Tensor, name: str = name) -> None:
                if self.paused or not isinstance(g, torch.Tensor) or not _plain(g):
                    return
                try:
                    keep = g.detach().clone() if g.numel() <= CLONE_BUDGET else None
                except Exception:
                    keep = None
                self._pending_grads.append((name, g, keep, _version(g)))

            try:
                t.register_hook(hook)  # type: ignore[no-untyped-call]
            except RuntimeError:
                pass

    def _drain_grads(self) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        for name, g, keep, version in self._pending_grads:
            changed = (version is not None and _version(g) != version) or (
                keep is not None and not _same_values(keep, g.detach())
            )
            if changed and not any(k == "grad-output" for k, _t in out):
                out.append(
                    (
                        "grad-output",
                        _("the backward of `{name}(...)` wrote into the incoming gradient (grad_output)", name=name),
                    )
                )
        self._pending_grads.clear()
        return out


def _own_function(module: types.ModuleType, value: Any) -> bool:
    """A function the learner's module defines: a plain one, or one wrapped by a decorator that
    keeps `__wrapped__` (functools.lru_cache, functools.wraps). Classes and objects stay as they
    are (isinstance checks, nn.Module instances)."""
    if isinstance(value, (type, types.ModuleType, torch.nn.Module)):
        return False
    if isinstance(value, types.FunctionType):
        return value.__module__ == module.__name__
    inner = getattr(value, "__wrapped__", None)
    return callable(value) and isinstance(inner, types.FunctionType) and inner.__module__ == module.__name__


def _live(obj: Any) -> dict[str, torch.Tensor]:
    if isinstance(obj, torch.Tensor):
        return {"": obj.detach()}
    if isinstance(obj, torch.nn.Module):
        return {name: t.detach() for name, t in [*obj.named_parameters(), *obj.named_buffers()]}
    return {}


class _ContractModule(types.ModuleType):
    """The learner's module as checkers see it: attribute reads and writes go to the module,
    with its own functions wrapped by the contract."""

    def __init__(self, module: types.ModuleType, contract: Contract) -> None:
        super().__init__(module.__name__, module.__doc__)
        object.__setattr__(self, "_tutor_module", module)
        object.__setattr__(self, "_tutor_contract", contract)
        for attr in ("__file__", "__spec__", "__loader__", "__package__"):
            if hasattr(module, attr):
                object.__setattr__(self, attr, getattr(module, attr))

    def __getattr__(self, name: str) -> Any:
        module = object.__getattribute__(self, "_tutor_module")
        value = getattr(module, name)
        return object.__getattribute__(self, "_tutor_contract").wrap(module, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(object.__getattribute__(self, "_tutor_module"), name, value)

    def __dir__(self) -> list[str]:
        return dir(object.__getattribute__(self, "_tutor_module"))


def unwrap(module: types.ModuleType) -> types.ModuleType:
    """The module behind a contract view (itself when it is not one)."""
    inner = module.__dict__.get("_tutor_module")
    return inner if isinstance(inner, types.ModuleType) else module

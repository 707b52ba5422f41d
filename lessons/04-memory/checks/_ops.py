"""Shared by this chapter's checkers: which ATen ops run during a backward pass."""

from collections import Counter

from torch.utils._python_dispatch import TorchDispatchMode


class CountOps(TorchDispatchMode):
    """Counts the ATen ops that reach it, by name (overloads merged): 'aten.addmm' -> 3. Inside a
    selective checkpoint, an op served from what forward kept never gets this far."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: Counter[str] = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops[str(func.overloadpacket)] += 1
        return func(*args, **(kwargs or {}))


def backward_ops(forward, stack, x, g):
    """The ATen ops that run during backward of forward(stack, x) (forward itself not counted)."""
    stack.zero_grad(set_to_none=True)
    out = forward(stack, x)
    with CountOps() as counter:
        out.backward(g)
    stack.zero_grad(set_to_none=True)
    return counter.ops


def extra(ops, plain, names):
    """How many more of `names` ran than in the plain stack's backward, per name (only > 0)."""
    return {name: ops[name] - plain[name] for name in names if ops[name] > plain[name]}

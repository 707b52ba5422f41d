"""Shared by this chapter's checkers."""


def first_lines(exc, n):
    """An exception's first non-blank line (its type's name when it has none) and the next n - 1
    lines, such as where a TorchScript compile error points."""
    lines = [line for line in str(exc).splitlines() if line.strip()]
    return (lines[0] if lines else type(exc).__name__), lines[1:n]

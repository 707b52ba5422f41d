from pathlib import Path


def double(x):
    Path("saved.txt").write_text(repr((x * 2).tolist()))
    return x * 2

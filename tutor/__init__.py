"""tutor: learn advanced PyTorch by doing, in the terminal."""

__version__ = "0.1.0"

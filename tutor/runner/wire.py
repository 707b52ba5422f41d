"""The data-only format of the channel between a checked process and the judge.

A message is one frame: a 4-byte length, a JSON header, and the raw bytes of every tensor the
header refers to. Decoding builds only plain values (None, bool, int, float, str, list, tuple,
dict, tensors, dtypes): unlike pickle, a frame cannot run code in the judge, whatever bytes the
learner's process writes.
"""

from __future__ import annotations

import json
import math
import struct
from typing import Any

import torch

HEADER = struct.Struct("!II")  # JSON length, total tensor bytes
MAX_FRAME = 256 * 1024 * 1024  # one observation larger than this is refused


class WireError(Exception):
    """A frame that does not decode: the message is refused and the run fails."""


_DTYPES = {
    str(d).removeprefix("torch."): d
    for d in (
        torch.float16,
        torch.bfloat16,
        torch.float32,
        torch.float64,
        torch.complex64,
        torch.complex128,
        torch.uint8,
        torch.int8,
        torch.int16,
        torch.int32,
        torch.int64,
        torch.bool,
        torch.uint16,
        torch.uint32,
        torch.uint64,
        torch.float8_e4m3fn,
        torch.float8_e5m2,
    )
    if isinstance(d, torch.dtype)
}


def _dtype_name(d: torch.dtype) -> str:
    return str(d).removeprefix("torch.")


_PLAIN = (torch.Tensor, torch.nn.Parameter)
_NO_DISPATCH = torch.Tensor.__torch_dispatch__


def plain(value: Any) -> Any:
    """`value` with every tensor subclass that has no dispatch of its own (it can only
    override `__torch_function__`) read as the plain tensor it is, in tuples and lists too:
    what learner code returns is judged by its data, never by what its class answers when
    the checker looks. Autograd history is kept; wrapper subclasses (DTensor, quantized
    tensors) are left as they are."""
    if isinstance(value, torch.Tensor):
        if type(value) in _PLAIN or getattr(type(value), "__torch_dispatch__", None) is not _NO_DISPATCH:
            return value
        with torch._C.DisableTorchFunctionSubclass():
            return torch.Tensor.as_subclass(value, torch.Tensor)
    if type(value) in (tuple, list):
        read = [plain(v) for v in value]
        if all(a is b for a, b in zip(read, value)):
            return value  # the caller's own container, identity kept ("returned items itself")
        return type(value)(read)
    return value


def encode(message: Any) -> bytes:
    """One frame holding `message` (tuples, lists, dicts, numbers, strings, tensors)."""
    blobs: list[bytes] = []

    def enc(v: Any) -> Any:
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, int):
            return v if abs(v) < 2**53 else {"int": str(v)}
        if isinstance(v, float):
            return v if math.isfinite(v) else {"float": repr(v)}
        if isinstance(v, torch.Tensor):
            with torch._C.DisableTorchFunctionSubclass():
                return tensor(v)
        return other(v)

    def tensor(v: torch.Tensor) -> Any:
        # Read without a subclass's __torch_function__: one that looks into the caller's frame
        # could hand over the expected value instead of its own data.
        t = plain(v).detach()
        if t.device.type != "cpu":
            t = t.cpu() if t.device.type != "meta" else t
        info: dict[str, Any] = {"dtype": _dtype_name(t.dtype), "shape": list(t.shape)}
        if t.device.type == "meta":
            info["meta"] = True
            return {"tensor": info}
        if t.is_sparse or t.layout != torch.strided or t.dtype not in _DTYPES.values():
            return {"repr": f"tensor({_dtype_name(t.dtype)}, layout={t.layout})"}
        data = t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
        info["blob"] = len(blobs)
        blobs.append(data)
        return {"tensor": info}

    def other(v: Any) -> Any:
        if isinstance(v, torch.dtype):
            return {"dtype": _dtype_name(v)}
        if isinstance(v, torch.Size):
            return {"tuple": [enc(x) for x in v]}
        if isinstance(v, tuple):
            return {"tuple": [enc(x) for x in v]}
        if isinstance(v, list):
            return [enc(x) for x in v]
        if isinstance(v, dict):
            return {"dict": [[enc(k), enc(x)] for k, x in v.items()]}
        if isinstance(v, torch.device):
            return str(v)
        return {"repr": _short_repr(v)}

    header = json.dumps(enc(message), separators=(",", ":")).encode()
    body = b"".join(blobs)
    return HEADER.pack(len(header), len(body)) + header + _blob_table(blobs) + body


def _blob_table(blobs: list[bytes]) -> bytes:
    return struct.pack(f"!I{len(blobs)}Q", len(blobs), *(len(b) for b in blobs))


def _short_repr(v: Any) -> str:
    try:
        text = repr(v)
    except Exception:
        text = f"<{type(v).__name__}>"
    return text if len(text) <= 200 else text[:199] + "…"


class Reader:
    """Incremental frame reader with a size cap (feed bytes, take complete messages)."""

    def __init__(self, max_frame: int = MAX_FRAME) -> None:
        self.buf = bytearray()
        self.max_frame = max_frame

    def feed(self, data: bytes) -> list[Any]:
        self.buf += data
        out: list[Any] = []
        while len(self.buf) >= HEADER.size:
            n_json, n_body = HEADER.unpack_from(self.buf)
            if n_json + n_body > self.max_frame:
                raise WireError(
                    f"a message of {n_json + n_body} bytes is larger than the "
                    f"{self.max_frame // (1024 * 1024)} MiB the judge accepts"
                )
            if len(self.buf) < HEADER.size + n_json + 4:
                break
            (count,) = struct.unpack_from("!I", self.buf, HEADER.size + n_json)
            table_size = 4 + 8 * count
            total = HEADER.size + n_json + table_size + n_body
            if count > 100_000:
                raise WireError("a message with too many tensors")
            if len(self.buf) < total:
                break
            frame = bytes(self.buf[:total])
            del self.buf[:total]
            out.append(decode(frame))
        return out

    @property
    def pending(self) -> int:
        return len(self.buf)


def decode(frame: bytes) -> Any:
    """The message in one complete frame (as written by `encode`)."""
    try:
        n_json, n_body = HEADER.unpack_from(frame)
        header = json.loads(frame[HEADER.size : HEADER.size + n_json])
        pos = HEADER.size + n_json
        (count,) = struct.unpack_from("!I", frame, pos)
        sizes = struct.unpack_from(f"!{count}Q", frame, pos + 4)
        pos += 4 + 8 * count
        if sum(sizes) != n_body or pos + n_body != len(frame):
            raise WireError("the tensor sizes do not add up")
        blobs: list[bytes] = []
        for size in sizes:
            blobs.append(frame[pos : pos + size])
            pos += size
        return _dec(header, blobs)
    except WireError:
        raise
    except Exception as exc:
        raise WireError(f"a message that does not decode ({type(exc).__name__})") from None


def _dec(v: Any, blobs: list[bytes]) -> Any:
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, list):
        return [_dec(x, blobs) for x in v]
    if not isinstance(v, dict) or len(v) != 1:
        raise WireError("unknown value")
    ((tag, body),) = v.items()
    if tag == "tuple":
        return tuple(_dec(x, blobs) for x in body)
    if tag == "dict":
        return {_hashable(_dec(k, blobs)): _dec(x, blobs) for k, x in body}
    if tag == "int":
        return int(body)
    if tag == "float":
        return float(body)
    if tag == "dtype":
        return _DTYPES[body]
    if tag == "repr":
        return Opaque(str(body))
    if tag == "tensor":
        dtype = _DTYPES[body["dtype"]]
        shape = [int(s) for s in body["shape"]]
        if body.get("meta"):
            return torch.empty(shape, dtype=dtype, device="meta")
        data = blobs[int(body["blob"])]
        flat = torch.frombuffer(bytearray(data), dtype=torch.uint8) if data else torch.empty(0, dtype=torch.uint8)
        return flat.view(dtype).reshape(shape)
    raise WireError(f"unknown tag {tag!r}")


def _hashable(k: Any) -> Any:
    if isinstance(k, list):
        return tuple(_hashable(x) for x in k)
    if isinstance(k, torch.Tensor):
        raise WireError("a tensor as a dict key")
    return k


class Opaque:
    """A value the format cannot carry (an object): compared by its repr."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Opaque) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return self.text

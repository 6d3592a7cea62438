"""The one place text from a model file is made fit to show: names and prose escaped (a file's
names and doc strings are untrusted), types and shapes written the same way everywhere."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import TypeProto

QUOTED_CHARS = 80  # of a name quoted in a problem's message
SHOWN_DIMS = 8  # of a shape written in a sentence: the first and last few, and how many


DIM_SEP = "\u00d7"  # the multiplication sign: "x" could be part of a dimension's name
PLACEHOLDER = re.compile(r"unk__\d+")  # the names shape inference makes up for dimensions it cannot tell


LABEL_CHARS = 44  # an edge label's shape text, where cutting its named dimensions (to MIN_DIM) can make it fit
MIN_DIM = 10
SHORT_DIM = 28  # characters of an expression dimension in a short text (a label); the tooltip has it whole
_EXPRESSION = re.compile(r"[\s+*/%()-]")


def join_dims(dims: Sequence[str]) -> str:
    """Dimensions joined with \u00d7: ``1\u00d73\u00d7224``, or spaced when a name is among them
    (``batch \u00d7 sequence \u00d7 64``), so the separator never reads as part of a name; an expression
    among several is bracketed (``batch \u00d7 16 \u00d7 (floor(height/2 - 1/2) + 1)``)."""
    named = any(not (d.lstrip("-").isdigit() or d in ("?", "...")) for d in dims)
    if named and len(dims) > 1:
        dims = [f"({d})" if _EXPRESSION.search(d.lstrip("-")) and not _bracketed(d) else d for d in dims]
    return (f" {DIM_SEP} " if named else DIM_SEP).join(dims)


def _bracketed(d: str) -> bool:
    """Whether ``d`` is one bracketed whole: ``(a + 1)``, not ``(a) + (b)``."""
    if not (d.startswith("(") and d.endswith(")")):
        return False
    depth = 0
    for k, c in enumerate(d):
        depth += (c == "(") - (c == ")")
        if depth == 0 and k < len(d) - 1:
            return False
    return True


def short_dim(d: str, limit: int = SHORT_DIM) -> str:
    """A long expression dimension cut to ``limit`` characters with an ellipsis."""
    return d if len(d) <= limit else d[:limit - 1].rstrip() + "\u2026"


def label_shape_text(t: TypeProto | None) -> str:
    """:func:`shape_text` for an edge's label: at most :data:`LABEL_CHARS` characters where it can, its longest
    dimension names cut shorter first, one at a time (a detector's labels ran to 90 characters and piled over
    each other; the tooltip has them whole)."""
    text = shape_text(t)
    dims = dim_texts(t) if len(text) > LABEL_CHARS and t is not None and t.HasField("tensor_type") else None
    if not dims or len(dims) > SHOWN_DIMS:
        return text
    while len(join_dims(dims)) > LABEL_CHARS:
        longest = max(range(len(dims)), key=lambda k: len(dims[k]))
        if len(dims[longest]) <= MIN_DIM:
            break
        dims[longest] = short_dim(dims[longest], len(dims[longest]) - 2)
    return join_dims(dims)


def dims_text(dims: list[str]) -> str:
    """Dimensions joined as ``1\u00d73\u00d7224\u00d7224``; a shape of more than :data:`SHOWN_DIMS` dimensions (a file
    may declare thousands) as its first and last few and their count: ``1\u00d73\u00d78\u00d78\u00d7...\u00d70\u00d764 (300 dimensions)``."""
    if len(dims) <= SHOWN_DIMS:
        return join_dims(dims)
    half = SHOWN_DIMS // 2
    return f"{join_dims([*dims[:half], '...', *dims[-half:]])} ({len(dims)} dimensions)"


def dim_texts(t: TypeProto, names: bool = False) -> list[str] | None:
    """A tensor type's dimensions as texts (None when the rank is unknown): numbers, names, ``?`` for an
    unknown one and for a shape-inference placeholder (``unk__54``; kept when ``names``); a long expression
    shortened (:func:`short_dim`) unless ``names``."""
    tt: Any = getattr(t, t.WhichOneof("value") or "tensor_type")
    if not tt.HasField("shape"):
        return None
    out = []
    for d in tt.shape.dim:
        if d.HasField("dim_value"):
            out.append(str(d.dim_value))
            continue
        name = _text(d.dim_param)
        if not name or not names and PLACEHOLDER.fullmatch(name):
            out.append("?")
        else:
            out.append(name if names else short_dim(name))
    return out


def shape_text(t: TypeProto | None, names: bool = False) -> str:
    """Short text of a type's shape: ``1\u00d73\u00d7224\u00d7224``, ``batch \u00d7 ? \u00d7 768``,
    ``unknown rank``, ``scalar``. Shape-inference placeholders (``unk__54``) read ``?`` and long expressions
    are shortened unless ``names`` (tooltips give them whole)."""
    if t is None:
        return ""
    which = t.WhichOneof("value")
    if which == "tensor_type" or which == "sparse_tensor_type":
        dims = dim_texts(t, names)
        if dims is None:
            return "unknown rank"
        return dims_text(dims) if dims else "scalar"
    if which == "sequence_type":
        return f"seq({shape_text(t.sequence_type.elem_type, names)})"
    if which == "optional_type":
        return f"opt({shape_text(t.optional_type.elem_type, names)})"
    if which == "map_type":
        return "map"
    return ""


def dtype_text(t: TypeProto | None) -> str:
    """Element type name such as ``float32``, ``int64``; '' when unknown."""
    if t is None:
        return ""
    which = t.WhichOneof("value")
    if which in ("tensor_type", "sparse_tensor_type"):
        elem = getattr(t, which).elem_type
        return tensor_dtype_name(elem)
    if which == "sequence_type":
        return f"seq({dtype_text(t.sequence_type.elem_type)})"
    if which == "optional_type":
        return f"optional({dtype_text(t.optional_type.elem_type)})"
    if which == "map_type":
        return f"map({tensor_dtype_name(t.map_type.key_type)}, {dtype_text(t.map_type.value_type)})"
    return ""


def tensor_dtype_name(elem_type: int) -> str:
    try:
        name = onnx.TensorProto.DataType.Name(elem_type)
    except ValueError:
        return f"unknown({elem_type})"
    return {"FLOAT": "float32", "DOUBLE": "float64", "FLOAT16": "float16"}.get(name, name.lower())


def tensor_type_text(data_type: int, dims: list[int] | tuple[int, ...]) -> str:
    """A tensor's element type and dimensions as one short text: ``float32[3\u00d73]``, ``int64[scalar]``."""
    return f"{tensor_dtype_name(data_type)}[{join_dims([str(d) for d in dims]) or 'scalar'}]"


def shape_list(t: TypeProto | None) -> list[int | str | None] | None:
    """Shape as a JSON-friendly list (ints, dim_param strings, None for unknown); None if rank unknown."""
    if t is None or t.WhichOneof("value") not in ("tensor_type", "sparse_tensor_type"):
        return None
    tt: Any = getattr(t, t.WhichOneof("value"))
    if not tt.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else (_text(d.dim_param) or None) for d in tt.shape.dim]


def all_text(strings: Iterable[str | bytes]) -> bool:
    """False if protobuf handed back one of ``strings`` as bytes (it is not valid UTF-8); one pass in C."""
    try:
        "".join(strings)  # type: ignore[arg-type]  # bytes among them is what this finds
    except TypeError:
        return False
    return True


def _text(value: str | bytes) -> str:
    """A string field as text: protobuf hands back bytes when the file's bytes are not UTF-8."""
    return value.decode("utf-8", "backslashreplace") if isinstance(value, bytes) else value


def display_name(name: str | bytes, limit: int | None = 200) -> str:
    """``name`` made safe to show: invisible, control and bidi-override characters escaped
    (``\\u202e``), invalid UTF-8 shown as ``\\xff``, and at most ``limit`` characters kept."""
    if isinstance(name, bytes):
        name = name.decode("utf-8", "backslashreplace")
    if limit is not None and len(name) > limit:
        name = f"{name[:limit]}... (+{len(name) - limit:,} characters)"
    if name.isprintable():
        return name
    return "".join(c if c.isprintable() else _escape_char(c) for c in name)


# What hides in prose: characters that change how the text around them is shown, or hide it, while being
# invisible themselves. Bidi controls (U+202A-U+202E, U+2066-U+2069, U+200E/U+200F, U+061C: an override
# makes 'exe.txt' read 'txt.exe'), zero-width and other format characters (U+200B, U+2060-U+2064, U+FEFF,
# the interlinear annotations, the invisible tag characters U+E0000-U+E007F) and control characters.
# Line breaks and tabs are prose, and the joiners U+200C/U+200D shape Persian, Indic scripts and emoji.
_HIDDEN_IN_PROSE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b\u200e\u200f"
                              "\u202a-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]")


def display_prose(text: str | bytes) -> str:
    """Prose from the file (a doc_string) made safe to show: its bidi controls, zero-width and control
    characters escaped like :func:`display_name` escapes them in names (``\\u202e``); line breaks,
    tabs and every visible character kept, nothing cut."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "backslashreplace")
    return _HIDDEN_IN_PROSE.sub(lambda m: _escape_char(m.group()), text)


def display_lines(text: str | bytes, limit: int = 1000, max_lines: int = 40) -> str:
    """Text from the file that is written in lines (a metadata value: torch's stack traces, a graph
    signature) made safe to show like :func:`display_prose` (its line breaks kept, ``\r\n`` as one),
    cut at ``limit`` characters and ``max_lines`` lines, with what was cut counted."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "backslashreplace")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    kept = "\n".join(text[:limit].split("\n")[:max_lines])
    more = len(text) - len(kept)
    return display_prose(kept) + (f"... (+{more:,} characters)" if more > 0 else "")


def hidden_in_prose(text: str) -> Iterator[tuple[int, str]]:
    """(position, character) of each character :func:`display_prose` escapes in ``text``, for views that
    escape them in text they have already parsed (Markdown decodes ``&#x202e;`` into the character)."""
    for m in _HIDDEN_IN_PROSE.finditer(text):
        yield m.start(), m.group()


def quoted_name(name: str) -> str:
    """A name quoted in a message (a problem, a refused edit): escaped and cut at :data:`QUOTED_CHARS` (the
    problem's ``value`` or ``node``, the edit's arguments, have it whole)."""
    return display_name(name, QUOTED_CHARS)


def first_names(names: Sequence[str], shown: int = 8) -> str:
    """``a, b, c and 4 more``: the first ``shown`` names, each quoted cut (:func:`quoted_name`)."""
    listed = ", ".join(quoted_name(n) for n in names[:shown])
    more = len(names) - shown
    return listed + (f" and {more} more" if more > 0 else "")


def _escape_char(c: str) -> str:
    code = ord(c)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


# -- numbers: the shortest text that reads back to the stored value ---------------------------
def duration_text(us: float) -> str:
    """Microseconds as people read them: "120 us", "3.4 ms", "0.92 s"."""
    if abs(us) >= 5e5:
        return f"{us / 1e6:.3g} s"
    if abs(us) >= 999.5:  # rounds to 1000 us: "1 ms"
        return f"{us / 1e3:.3g} ms"
    return f"{us:.3g} us"


def float_text(x: float) -> str:
    """The shortest text that reads back as the same float32: ``0.2``, ``1e-07``, ``3.0``, ``inf``."""
    return str(np.float32(x))


def array_values_text(array: np.ndarray, short: bool = False) -> str:
    """The values of a small array, flat: ``3`` for a scalar, ``[0.2, 1.5]`` otherwise; floats at the
    array's own precision, shortest; strings quoted as Python would (editors read the text back).
    ``short`` (for a box on the canvas): floats cut to :data:`SHORT_DIGITS` significant digits when
    longer, strings escaped like names and cut at :data:`VALUE_STRING_CHARS`."""
    flat = array.reshape(-1)
    items = [_item_text(v, short) for v in flat]
    return items[0] if array.ndim == 0 and items else "[" + ", ".join(items) + "]"


SHORT_DIGITS = 4
SHORT_FLOAT_CHARS = 8  # a float's shortest text longer than this is cut to SHORT_DIGITS digits
VALUE_STRING_CHARS = 40


def _item_text(v: Any, short: bool = False) -> str:
    if isinstance(v, np.floating):
        text = str(v)  # numpy prints a float16/32/64 with the fewest digits that read back to it
        return f"{float(v):.{SHORT_DIGITS}g}" if short and len(text) > SHORT_FLOAT_CHARS else text
    if isinstance(v, np.bool_):
        return str(bool(v))
    if isinstance(v, np.integer):
        return str(int(v))
    text = v.decode("utf-8", "replace") if isinstance(v, bytes) else v
    return f"'{display_name(text, VALUE_STRING_CHARS)}'" if short and isinstance(text, str) else repr(text)

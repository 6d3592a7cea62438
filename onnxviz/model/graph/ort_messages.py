"""onnxruntime's error messages made readable, for the runner and for validation."""

from __future__ import annotations

import re

MESSAGE_LIMIT = 300  # characters of an engine's error kept in a one-sentence message (details keep it all)


def engine_message(exc: BaseException) -> str:
    """The readable part of an engine's error: no C++ file names or signatures."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    text = re.sub(r"^\[ONNXRuntimeError\] : \d+ : \w+ : ", "", text)
    located = re.search(r"/onnxruntime_src/\S+:\d+ (.*)", text)
    if located:
        text = located.group(1)
        pieces = text.split(") ")
        for k in range(1, len(pieces)):
            if "::" not in ") ".join(pieces[k:]):
                text = ") ".join(pieces[k:])
                break
    text = text.rstrip(". ")
    if len(text) > MESSAGE_LIMIT:  # cut at a word, never inside one
        text = text[:MESSAGE_LIMIT].rsplit(" ", 1)[0].rstrip(",;:. ") + "\u2026"
    return text


KERNEL_FAILURE = re.compile(r"while running \S+ node\. Name:'(.*?)' Status Message:")
_ORT_NODE_PATTERNS = (KERNEL_FAILURE,  # a failed kernel
                      re.compile(r"Node \((.*?)\) Op \(\S+?\)"),  # shape inference at session creation
                      re.compile(r'In Node, \("(.*?)", \S+?,'),  # an invalid model
                      re.compile(r"\) in node \((.*?)\)\.?$"))  # a type error


def ort_node_name(text: str) -> str | None:
    """The name of the node onnxruntime's error message says failed (None when it names none)."""
    for pattern in _ORT_NODE_PATTERNS:
        found = pattern.search(text.strip())
        if found:
            return found.group(1)
    return None

"""A model whose every string field is markup that loads a file: ``<img src="FOLDER/fifo-FIELD">``, a FIFO of its
own per field, so a widget that takes text from the file as rich text opens that FIFO, and the trap
(:class:`FifoTraps`) names the field. Names, dim_params, denotations, domains, doc strings, metadata, string
tensors, string attributes: on the model, its graph, inputs, outputs, value infos, nodes, an If's body and a
local function. The model opens, is drawn, checked and run (every dialog and view can be reached); its one
problem (a dimension of -1) quotes a name.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import TracebackType

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# The watcher is a process of its own: a GUI thread blocked opening a FIFO inside Qt holds the GIL, so a thread
# of the test's process could never let it go. It tries each FIFO for writing without blocking (which succeeds
# only while someone waits to read it, and lets that reader go with an empty file) and writes each success down,
# until the stop file exists (the log itself is removed only once the watcher is gone, so it is never recreated).
WATCHER = """
import errno, os, sys, time
folder, log, stop = sys.argv[1], sys.argv[2], sys.argv[3]
while not os.path.exists(stop):
    for name in sorted(os.listdir(folder)):
        if not name.startswith("fifo-"):
            continue
        try:
            fd = os.open(os.path.join(folder, name), os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno in (errno.ENXIO, errno.ENOENT):
                continue
            raise
        os.close(fd)
        with open(log, "a") as f:
            f.write(name + "\\n")
    time.sleep(0.003)
"""


class FifoTraps:
    """A FIFO per field in ``folder``; a watcher process lets go at once whatever opens one for reading (it then
    reads an empty file) and counts it: :meth:`take` says which fields' FIFOs were opened since it was last called."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.paths: dict[str, Path] = {}
        self._log = folder / "opened.log"
        self._stop = folder / "stop"
        self._read = 0
        self._watcher: subprocess.Popen[bytes] | None = None

    def tag(self, field: str) -> str:
        """The markup for ``field``: an image whose source is the field's own FIFO."""
        path = self.paths.get(field)
        if path is None:
            path = self.paths[field] = self.folder / f"fifo-{len(self.paths)}"
            os.mkfifo(path)
        return f'<img src="{path}">'

    def take(self) -> list[str]:
        """The fields whose FIFO something opened since the last call."""
        lines = self._log.read_text().splitlines()
        fresh, self._read = lines[self._read:], len(lines)
        fields = {path.name: field for field, path in self.paths.items()}
        return sorted({fields[name] for name in fresh})

    def __enter__(self) -> FifoTraps:
        self._log.write_text("")
        self._watcher = subprocess.Popen([sys.executable, "-c", WATCHER, str(self.folder), str(self._log),
                                          str(self._stop)])
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.touch()
        if self._watcher is not None:
            self._watcher.wait(10)
        self._log.unlink()
        self._stop.unlink()


def markup_model(traps: FifoTraps) -> onnx.ModelProto:
    t = traps.tag
    dim = onnx.TensorShapeProto.Dimension(dim_param=t("dim_param"), denotation=t("dim_denotation"))
    x = helper.make_tensor_value_info(t("input"), TensorProto.FLOAT, None, doc_string=t("input_doc"))
    x.type.tensor_type.shape.dim.extend([dim, onnx.TensorShapeProto.Dimension(dim_value=3)])
    x.type.denotation = t("type_denotation")
    words = helper.make_tensor_value_info(t("string_input"), TensorProto.STRING, [2])
    weight = numpy_helper.from_array(np.ones(3, np.float32), t("initializer"))
    weight.doc_string = t("initializer_doc")
    strings = helper.make_tensor(t("string_initializer"), TensorProto.STRING, [2],
                                 [t("string_value_0").encode(), t("string_value_1").encode()])
    then = helper.make_graph([helper.make_node("Identity", [t("added")], [t("then_out")], name=t("body_node"))],
                             t("body_graph"), [], [helper.make_tensor_value_info(t("then_out"), TensorProto.FLOAT, [None, 3])])
    other = helper.make_graph([helper.make_node("Neg", [t("added")], [t("else_out")])], "else", [],
                              [helper.make_tensor_value_info(t("else_out"), TensorProto.FLOAT, [None, 3])])
    nodes = [
        helper.make_node("Add", [t("input"), t("initializer")], [t("added")], name=t("node"), doc_string=t("node_doc")),
        helper.make_node("Constant", [], [t("constant_out")], name=t("constant"), value_string=t("string_attribute")),
        helper.make_node("Constant", [], [t("cond")], value=numpy_helper.from_array(np.array(True), "c")),
        helper.make_node("If", [t("cond")], [t("if_out")], name=t("if_node"), then_branch=then, else_branch=other),
        helper.make_node("Concat", [t("string_initializer"), t("string_input")], [t("words")], axis=0,
                         name=t("concat")),
        helper.make_node(t("function"), [t("if_out")], [t("called")], name=t("call"), domain=t("domain")),
    ]
    nodes[-1].attribute.append(helper.make_attribute(t("attribute_name"), t("attribute_value")))
    nodes[0].metadata_props.append(onnx.StringStringEntryProto(key=t("node_meta_key"), value=t("node_meta_value")))
    fn = helper.make_function(t("domain"), t("function"), ["a"], ["b"], [helper.make_node("Relu", ["a"], ["b"])],
                              [helper.make_opsetid("", 18)], attributes=[t("attribute_name")])
    fn.doc_string = t("function_doc")
    outputs = [helper.make_tensor_value_info(t("called"), TensorProto.FLOAT, [None, 3]),
               helper.make_tensor_value_info(t("words"), TensorProto.STRING, [4]),
               helper.make_tensor_value_info(t("constant_out"), TensorProto.STRING, [])]
    graph = helper.make_graph(nodes, t("graph"), [x, words], outputs, [weight, strings], doc_string=t("graph_doc"),
                              value_info=[helper.make_tensor_value_info(t("added"), TensorProto.FLOAT, [None, 3],
                                                                        doc_string=t("value_info_doc")),
                                          helper.make_tensor_value_info(t("if_out"), TensorProto.FLOAT, [-1, 3])])
    graph.metadata_props.append(onnx.StringStringEntryProto(key=t("graph_meta_key"), value=t("graph_meta_value")))
    model = helper.make_model(graph, functions=[fn], doc_string=t("model_doc"), producer_name=t("producer"),
                              producer_version=t("producer_version"), domain=t("model_domain"),
                              opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid(t("domain"), 1)])
    model.ir_version = 9
    model.metadata_props.append(onnx.StringStringEntryProto(key=t("meta_key"), value=t("meta_value")))
    return model

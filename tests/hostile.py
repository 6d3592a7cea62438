"""Builds every hostile, broken or extreme test file into a folder (nothing big is committed).

Each :class:`Case` either must be *refused* with a specific one-sentence
message, or must *open* and show a specific problem. ``build_all(folder)``
writes them all and returns ``{name: (case, path)}``.
"""

from __future__ import annotations

import gzip
import json
import os
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import onnx
from google.protobuf import json_format
from onnx import AttributeProto, TensorProto, helper

Build = Callable[[Path], Path]


@dataclass(frozen=True)
class Case:
    name: str
    build: Build
    refused: str = ""   # a fragment of the LoadError message (lower case)
    problem: str = ""   # a fragment of a Problem message of the opened model (lower case)
    text_format: bool = False  # refused, but can be opened as text


# -- building blocks ------------------------------------------------------------------------

def vi(name: str, elem: int = TensorProto.FLOAT, shape: list[int | str] | None = None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, [1] if shape is None else shape)


def model_of(nodes: list[onnx.NodeProto], inputs: list[str] | None = None, outputs: list[str] | None = None,
             initializers: list[TensorProto] | None = None, opset: int = 18, shape: list[int] | None = None,
             **kw: object) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", [vi(n, shape=shape) for n in (inputs or ["x"])],
                              [vi(n, shape=shape) for n in (outputs or ["y"])], initializer=initializers or [])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], **kw)  # type: ignore[arg-type]
    model.ir_version = 8
    return model


def valid_model() -> onnx.ModelProto:
    """x -> Add(w) -> Relu -> y with a 4 KB initializer: a small model with weights."""
    w = helper.make_tensor("w", TensorProto.FLOAT, [1024], [0.5] * 1024, raw=False)
    w = onnx.numpy_helper.from_array(onnx.numpy_helper.to_array(w), "w")
    nodes = [helper.make_node("Add", ["x", "w"], ["a"], name="add"), helper.make_node("Relu", ["a"], ["y"], name="relu")]
    return model_of(nodes, outputs=["y"], initializers=[w], shape=[1024])


def _write(data: bytes, name: str) -> Build:
    def build(folder: Path) -> Path:
        path = folder / name
        path.write_bytes(data)
        return path
    return build


def _write_model(make: Callable[[], onnx.ModelProto], name: str) -> Build:
    def build(folder: Path) -> Path:
        path = folder / name
        path.write_bytes(make().SerializeToString())
        return path
    return build


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes | int) -> bytes:
    """One protobuf field: length-delimited for bytes, varint for int."""
    if isinstance(payload, int):
        return _varint(number << 3) + _varint(payload)
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def nested_if_bytes(depth: int) -> bytes:
    """A model whose If nodes nest ``depth`` deep, encoded by hand (protobuf refuses to build it)."""
    out_vi = vi("y").SerializeToString()
    leaf = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "leaf", [], [vi("y")])
    graph = leaf_bytes = leaf.SerializeToString()
    for level in range(depth):
        attr = _field(1, b"then_branch") + _field(20, AttributeProto.GRAPH) + _field(6, graph)
        attr_else = _field(1, b"else_branch") + _field(20, AttributeProto.GRAPH) + _field(6, leaf_bytes)
        node = _field(1, b"c") + _field(2, b"y") + _field(3, f"if{level}".encode()) + _field(4, b"If") \
            + _field(5, attr) + _field(5, attr_else)
        graph = _field(1, node) + _field(2, f"g{level}".encode()) + _field(12, out_vi)
    graph += _field(11, vi("c", TensorProto.BOOL, []).SerializeToString()) + _field(11, vi("x").SerializeToString())
    opset = _field(1, b"") + _field(2, 18)
    return _field(1, 8) + _field(7, graph) + _field(8, opset)


def _ort_header() -> bytes:
    """The first bytes of an onnxruntime .ort file: a flatbuffer root offset, then 'ORTM'."""
    return (16).to_bytes(4, "little") + b"ORTM" + bytes(8) + bytes(range(64))


# -- not a model at all --------------------------------------------------------------------------

def _truncated_in_tensor(folder: Path) -> Path:
    data = valid_model().SerializeToString()
    cut = data.index(b"\x00\x00\x00\x3f" * 8) + 100  # well inside the raw data of 'w'
    return _write(data[:cut], "truncated_tensor.onnx")(folder)


def _huge_sparse(folder: Path) -> Path:
    path = folder / "huge.onnx"
    with open(path, "wb") as f:
        f.truncate(2**31 + 10)  # a sparse file: takes no disk space
    return path


def _fifo(folder: Path) -> Path:
    path = folder / "fifo.onnx"
    os.mkfifo(path)
    return path


def _folder(folder: Path) -> Path:
    path = folder / "folder.onnx"
    path.mkdir()
    return path


def _no_graph() -> onnx.ModelProto:
    m = onnx.ModelProto(ir_version=8, producer_name="x")
    m.opset_import.add(domain="", version=18)
    return m


NOT_A_MODEL = [
    Case("empty", _write(b"", "empty.onnx"), refused="empty file"),
    Case("random", _write(random.Random(7).randbytes(4096), "random.onnx"), refused="not a valid onnx model"),
    Case("truncated_tensor", _truncated_in_tensor, refused="truncated: the file ends inside graph"),
    Case("truncated_head", lambda d: _write(valid_model().SerializeToString()[:7], "head.onnx")(d),
         refused="truncated"),
    Case("gzip", lambda d: _write(gzip.compress(valid_model().SerializeToString()), "gz.onnx")(d), refused="gzip"),
    Case("zip", _write(b"PK\x03\x04" + bytes(200), "zip.onnx"), refused="zip archive"),
    Case("json", lambda d: _write(json_format.MessageToJson(valid_model()).encode(), "json.onnx")(d),
         refused="json"),
    Case("onnx_text", lambda d: _write(onnx.printer.to_text(valid_model()).encode(), "text.onnx")(d),
         refused="onnx text syntax", text_format=True),
    Case("protobuf_text", lambda d: _write(str(valid_model()).encode(), "pbtext.onnx")(d),
         refused="protobuf text format", text_format=True),
    Case("ort", _write(_ort_header(), "model.ort.onnx"), refused=".ort flatbuffer"),
    Case("tensor_proto", lambda d: _write(valid_model().graph.initializer[0].SerializeToString(), "t.onnx")(d),
         refused="tensorproto"),
    Case("graph_proto", lambda d: _write(valid_model().graph.SerializeToString(), "graph.onnx")(d),
         refused="graphproto"),
    Case("node_proto", lambda d: _write(valid_model().graph.node[0].SerializeToString(), "node.onnx")(d),
         refused="nodeproto"),
    Case("no_graph", _write_model(_no_graph, "nograph.onnx"), refused="without a graph"),
    Case("if_nested_200", lambda d: _write(nested_if_bytes(200), "deep.onnx")(d), refused="100 levels"),
    Case("if_nested_32", lambda d: _write(nested_if_bytes(32), "deep32.onnx")(d), refused="100 levels"),
    Case("huge_sparse", _huge_sparse, refused="is 2,147,483,658 bytes, more than the 2,147,483,647 bytes a single protobuf can hold"),
    Case("fifo", _fifo, refused="is a named pipe (fifo), not a model file"),
    Case("folder", _folder, refused="is a folder"),
    Case("missing", lambda d: d / "does_not_exist.onnx", refused="no such file"),
]


# -- broken graphs that must open --------------------------------------------------------------

def _cycle() -> onnx.ModelProto:
    return model_of([helper.make_node("Add", ["x", "b"], ["a"], name="n1"),
                     helper.make_node("Relu", ["a"], ["b"], name="n2"),
                     helper.make_node("Relu", ["a"], ["y"], name="n3")])


def _unsorted() -> onnx.ModelProto:
    return model_of([helper.make_node("Relu", ["a"], ["y"], name="second"),
                     helper.make_node("Relu", ["x"], ["a"], name="first")])


def _dup_producer() -> onnx.ModelProto:
    return model_of([helper.make_node("Relu", ["x"], ["y"], name="p1"),
                     helper.make_node("Sigmoid", ["x"], ["y"], name="p2")])


def _dup_graph_io() -> onnx.ModelProto:
    m = model_of([helper.make_node("Relu", ["x"], ["y"])], inputs=["x", "x"], outputs=["y", "y"])
    t = onnx.numpy_helper.from_array(onnx.numpy_helper.to_array(helper.make_tensor("k", 1, [1], [1.0])), "k")
    m.graph.initializer.extend([t, t])
    return m


def _subgraph_reads_later() -> onnx.ModelProto:
    body = helper.make_graph([helper.make_node("Identity", ["late"], ["o"])], "then", [], [vi("o")])
    other = helper.make_graph([helper.make_node("Identity", ["x"], ["o2"])], "else", [], [vi("o2")])
    return model_of([helper.make_node("If", ["c"], ["y"], name="cond", then_branch=body, else_branch=other),
                     helper.make_node("Relu", ["x"], ["late"], name="later")], inputs=["x", "c"])


def _unknown_op() -> onnx.ModelProto:
    return model_of([helper.make_node("FrobnicateTensor", ["x"], ["y"], name="frob")])


def _domain_without_import() -> onnx.ModelProto:
    return model_of([helper.make_node("Foo", ["x"], ["y"], name="custom", domain="com.example")])


def _wrong_attr_type() -> onnx.ModelProto:
    node = helper.make_node("Softmax", ["x"], ["y"], name="soft")
    node.attribute.append(helper.make_attribute("axis", "minus one"))
    return model_of([node])


def _ref_attr_outside_function() -> onnx.ModelProto:
    node = helper.make_node("Softmax", ["x"], ["y"], name="soft")
    node.attribute.append(helper.make_attribute_ref("axis", AttributeProto.INT))
    return model_of([node])


def _recursive_functions() -> onnx.ModelProto:
    f = helper.make_function("local", "F", ["a"], ["b"], [helper.make_node("G", ["a"], ["b"], domain="local")],
                             [helper.make_opsetid("", 18), helper.make_opsetid("local", 1)])
    g = helper.make_function("local", "G", ["a"], ["b"], [helper.make_node("F", ["a"], ["b"], domain="local")],
                             [helper.make_opsetid("", 18), helper.make_opsetid("local", 1)])
    m = model_of([helper.make_node("F", ["x"], ["y"], name="call", domain="local")])
    m.opset_import.append(helper.make_opsetid("local", 1))
    m.functions.extend([f, g])
    return m


def _too_new() -> onnx.ModelProto:
    m = model_of([helper.make_node("Relu", ["x"], ["y"])], opset=999)
    m.ir_version = 99
    return m


BROKEN_GRAPHS = [
    Case("cycle", _write_model(_cycle, "cycle.onnx"), problem="part of a cycle"),
    Case("unsorted", _write_model(_unsorted, "unsorted.onnx"), problem="not in topological order"),
    Case("undefined_input", _write_model(lambda: model_of([helper.make_node("Relu", ["ghost"], ["y"])]),
                                         "undef.onnx"), problem="'ghost' of relu#0 is not defined"),
    Case("duplicate_producer", _write_model(_dup_producer, "dup.onnx"), problem="defined more than once"),
    Case("duplicate_graph_io", _write_model(_dup_graph_io, "dupio.onnx"), problem="graph input 'x' is declared 2"),
    Case("output_not_produced", _write_model(lambda: model_of([helper.make_node("Relu", ["x"], ["z"])]),
                                             "noout.onnx"), problem="graph output 'y' is not produced"),
    Case("subgraph_reads_later", _write_model(_subgraph_reads_later, "later.onnx"), problem="defined later"),
    Case("unknown_op", _write_model(_unknown_op, "unknown.onnx"), problem="unknown operator 'frobnicatetensor'"),
    Case("domain_without_import", _write_model(_domain_without_import, "domain.onnx"),
         problem="does not import"),
    Case("wrong_attr_type", _write_model(_wrong_attr_type, "attr.onnx"),
         problem="attribute 'axis' is string, but softmax expects int"),
    Case("ref_attr_outside_function", _write_model(_ref_attr_outside_function, "ref.onnx"),
         problem="outside a function"),
    Case("recursive_functions", _write_model(_recursive_functions, "rec.onnx"), problem="calls itself"),
    Case("ir_opset_too_new", _write_model(_too_new, "new.onnx"), problem="ir version 99 is newer"),
    # 31 nested Ifs are the deepest protobuf parses (3 message levels each, limit 100)
    Case("if_nested_31", lambda d: _write(nested_if_bytes(31), "deep31.onnx")(d), problem=""),
]


# -- hostile tensors and names --------------------------------------------------------------------

def _with_tensor(edit: Callable[[TensorProto], None]) -> Callable[[], onnx.ModelProto]:
    def make() -> onnx.ModelProto:
        m = valid_model()
        edit(m.graph.initializer[0])
        return m
    return make


def _set_dims(*dims: int) -> Callable[[TensorProto], None]:
    def edit(t: TensorProto) -> None:
        del t.dims[:]
        t.dims.extend(dims)
    return edit


def _invalid_utf8(folder: Path) -> Path:
    data = _renamed("a", "hostile")().SerializeToString().replace(b"hostile", b"host\xffle")
    return _write(data, "utf8.onnx")(folder)


def _invalid_utf8_strings(folder: Path) -> Path:
    m = valid_model()
    m.producer_name = "PRODUCER"
    helper.set_model_props(m, {"author": "METAVALUE"})
    m.graph.value_info.append(vi("a", shape=["DIMPARAM"]))
    data = m.SerializeToString()
    for token in (b"PRODUCER", b"METAVALUE", b"DIMPARAM"):
        data = data.replace(token, token[:3] + b"\xff" + token[4:])
    return _write(data, "utf8meta.onnx")(folder)


def _renamed(old: str, new: str) -> Callable[[], onnx.ModelProto]:
    def make() -> onnx.ModelProto:
        m = valid_model()
        for n in m.graph.node:
            n.input[:] = [new if x == old else x for x in n.input]
            n.output[:] = [new if x == old else x for x in n.output]
            n.name = new if n.name == "relu" else n.name
        return m
    return make


def _many_inputs() -> onnx.ModelProto:
    return model_of([helper.make_node("Sum", ["x"] * 100_000, ["y"], name="wide")])


HOSTILE_TENSORS = [
    Case("raw_data_short", _write_model(_with_tensor(lambda t: setattr(t, "raw_data", t.raw_data[:100])),
                                        "short.onnx"), problem="has 100 bytes of raw_data"),
    Case("dims_2_40", _write_model(_with_tensor(_set_dims(1 << 20, 1 << 20)), "big.onnx"),
         problem="needs 4,398,046,511,104"),
    Case("negative_dims", _write_model(_with_tensor(_set_dims(-4, 256)), "neg.onnx"), problem="negative dimension"),
    Case("unknown_dtype", _write_model(_with_tensor(lambda t: setattr(t, "data_type", 999)), "dtype.onnx"),
         problem="unknown data type 999"),
    Case("raw_and_typed", _write_model(_with_tensor(lambda t: t.float_data.extend([1.0] * 1024)), "both.onnx"),
         problem="sets both raw_data and float_data"),
    Case("invalid_utf8_name", _invalid_utf8, problem="not valid utf-8"),
    Case("invalid_utf8_metadata_and_dims", _invalid_utf8_strings, problem="not valid utf-8"),
    Case("invalid_utf8_op_and_node", _write(valid_model().SerializeToString().replace(b"Relu", b"Re\xffu")
                                            .replace(b"add", b"a\xfed"), "utf8op.onnx"), problem="not valid utf-8"),
    Case("bidi_name", _write_model(_renamed("a", "evil\u202etxt.exe"), "bidi.onnx"), problem=""),
    Case("long_name", _write_model(_renamed("a", "n" * 100_000), "long.onnx"), problem=""),
    Case("node_100k_inputs", _write_model(_many_inputs, "wide.onnx"), problem=""),
]


# -- external data -----------------------------------------------------------------------------------

SECRET = b"TOP-SECRET-OUTSIDE-THE-MODEL-FOLDER" * 64


def _external(location: str, name: str, offset: int = 0, length: int | None = 4096,
              prepare: Callable[[Path], None] | None = None) -> Build:
    def build(folder: Path) -> Path:
        model_dir = folder / f"ext_{name}"
        model_dir.mkdir()
        if prepare is not None:
            prepare(model_dir)
        m = valid_model()
        t = m.graph.initializer[0]
        t.ClearField("raw_data")
        t.data_location = TensorProto.EXTERNAL
        entries = {"location": location, "offset": str(offset)}
        if length is not None:
            entries["length"] = str(length)
        for k, v in entries.items():
            t.external_data.add(key=k, value=v)
        path = model_dir / "model.onnx"
        path.write_bytes(m.SerializeToString())
        return path
    return build


def _outside_secret(model_dir: Path) -> Path:
    secret = model_dir.parent / "secret.bin"
    secret.write_bytes(SECRET)
    return secret


def _secret_beside(model_dir: Path) -> None:
    _outside_secret(model_dir)


def _symlink_out(model_dir: Path) -> None:
    (model_dir / "weights.bin").symlink_to(_outside_secret(model_dir))


def _short_file(model_dir: Path) -> None:
    (model_dir / "weights.bin").write_bytes(bytes(1000))


EXTERNAL = [
    Case("external_dotdot", _external("../secret.bin", "dotdot", prepare=_secret_beside),
         problem="outside the model's folder"),
    Case("external_absolute", _external("/etc/passwd", "absolute"), problem="absolute path"),
    Case("external_symlink_out", _external("weights.bin", "symlink", prepare=_symlink_out),
         problem="link that leads outside"),
    Case("external_missing", _external("weights.bin", "missing"), problem="does not exist"),
    Case("external_beyond_eof", _external("weights.bin", "eof", offset=512, prepare=_short_file),
         problem="which has only 1000 bytes"),
]

ALL_CASES: list[Case] = NOT_A_MODEL + BROKEN_GRAPHS + HOSTILE_TENSORS + EXTERNAL
REFUSED = [c for c in ALL_CASES if c.refused]
OPENS = [c for c in ALL_CASES if not c.refused]


def build_all(folder: Path) -> dict[str, tuple[Case, Path]]:
    folder.mkdir(parents=True, exist_ok=True)
    return {c.name: (c, c.build(folder)) for c in ALL_CASES}


def write_json_index(folder: Path) -> Path:
    """Build everything and write ``cases.json`` (name, path, expectation) for scripts."""
    built = build_all(folder)
    index = {name: {"path": str(p), "refused": c.refused, "problem": c.problem} for name, (c, p) in built.items()}
    out = folder / "cases.json"
    out.write_text(json.dumps(index, indent=1))
    return out


# -- fuzzing: seeds, mutations and the pipeline every mutant goes through ----------------------------

def seed_models() -> list[onnx.ModelProto]:
    """Small valid models covering weights, subgraphs, functions and attributes."""
    from onnx import parser

    with_if = parser.parse_model("""
        <ir_version: 8, opset_import: ["" : 18]>
        g (bool c, float[2] x) => (float[2] y) {
            y = If(c) <then_branch = t () => (float[2] a) { a = Relu(x) },
                       else_branch = e () => (float[2] b) { b = Neg(x) }>
        }""")
    with_function = parser.parse_model("""
        <ir_version: 8, opset_import: ["" : 18, "local" : 1]>
        g (float[3] x) => (float[3] y) { y = local.Twice(x) }
        <domain: "local", opset_import: ["" : 18]>
        Twice (a) => (b) { s = Add(a, a)  b = Softmax <axis = -1> (s) }""")
    example = onnx.load(Path(__file__).resolve().parents[1] / "resources" / "examples" / "example.onnx")
    return [valid_model(), with_if, with_function, example]


def flip_bits(data: bytes, flips: list[tuple[float, int]]) -> bytes:
    """Flip bit ``bit`` of the byte at fraction ``where`` of the data, for each pair."""
    buf = bytearray(data)
    for where, bit in flips:
        if buf:
            buf[min(int(where * len(buf)), len(buf) - 1)] ^= 1 << (bit % 8)
    return bytes(buf)


def mutate_proto(model: onnx.ModelProto, choice: int, value: int, text: str) -> onnx.ModelProto:
    """One structural change on a parsed copy: a renamed value, a changed op, dims, type or attribute."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    nodes = m.graph.node
    node = nodes[value % len(nodes)] if nodes else None
    kind = choice % 9
    if kind == 0 and node is not None and node.input:
        node.input[value % len(node.input)] = text
    elif kind == 1 and node is not None:
        node.op_type = text
    elif kind == 2 and node is not None:
        node.domain = text
    elif kind == 3 and m.graph.initializer:
        t = m.graph.initializer[value % len(m.graph.initializer)]
        t.dims.append(value - 2**31)
    elif kind == 4 and m.graph.initializer:
        m.graph.initializer[value % len(m.graph.initializer)].data_type = value % 40
    elif kind == 5 and node is not None:
        attr = node.attribute.add(name=text or "axis")
        attr.type = value % 15
        attr.i = value
    elif kind == 6 and node is not None:
        node.output.append(m.graph.input[0].name if m.graph.input else text)
    elif kind == 7:
        m.opset_import[0].version = value % 64
        m.ir_version = value % 20
    elif kind == 8 and len(nodes) > 1:
        nodes[0].input.append(nodes[-1].output[0] if nodes[-1].output else text)  # a cycle
    return m


def exercise(path: Path) -> str:
    """Everything the tool does with a file on open: load, index, info, layout of each scope, check.

    Returns "refused: ..." or "opened"; any exception other than OnnxvizError propagates.
    """
    from onnxviz.model.document import Document
    from onnxviz.model.errors import OnnxvizError
    from onnxviz.model.graph.summary import model_info
    from onnxviz.model.graph.validation import check_model
    from onnxviz.model.layout.engine import GraphLayout

    try:
        doc = Document.open(path)
    except OnnxvizError as exc:
        assert "\n" not in exc.message, exc.message
        return f"refused: {exc.message}"
    index = doc.index
    _ = doc.problems
    model_info(doc.model, index)
    for scope in list(index.graphs)[:8]:
        try:
            GraphLayout(index, scope).build()
        except OnnxvizError:
            pass
    check_model(doc.model, index)
    return "opened"

"""The values string attributes that name a choice ("enum-like") accept, per operator and opset.

``onnx.defs`` gives such an attribute's type (STRING) but not its values; these come from the
attribute descriptions of the ONNX operator specification (onnx 1.23, up to opset 28). Each entry
lists, per operator version that changed them, the values accepted from that version on; a node
uses the newest entry not newer than its schema's version. Exceptions, where runtimes accept more
than the text lists: Resize keeps ``tf_half_pixel_for_nn`` after opset 13 deprecated it, and the
recurrent operators' activation names are compared ignoring case (onnxruntime does both).
Attributes that hold free text (Einsum's equation, a locale, string lists of data) are not here.
"""

from __future__ import annotations

from onnx import AttributeProto, NodeProto

from onnxviz.model.text import display_name

Versions = tuple[tuple[int, tuple[str, ...]], ...]  # (since version, values), oldest first

AUTO_PAD: Versions = ((1, ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")),)
RNN_DIRECTION: Versions = ((1, ("forward", "reverse", "bidirectional")),)
RNN_ACTIVATIONS: Versions = ((1, ("Relu", "Tanh", "Sigmoid", "Affine", "LeakyRelu", "ThresholdedRelu", "ScaledTanh",
                                  "HardSigmoid", "Elu", "Softsign", "Softplus")),)
SCATTER_REDUCTION: Versions = ((16, ("none", "add", "mul")), (18, ("none", "add", "mul", "max", "min")))
LOSS_REDUCTION: Versions = ((12, ("none", "sum", "mean")),)
ROUND_MODE: Versions = ((24, ("up", "down", "nearest")),)
BLOCK_ORDER: Versions = ((1, ("DCR", "CRD")),)
POST_TRANSFORM: Versions = ((1, ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT")),)
KERNEL_TYPE: Versions = ((1, ("LINEAR", "POLY", "RBF", "SIGMOID")),)
NODE_MODES: Versions = ((1, ("BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ",
                             "LEAF")),)
_RESIZE_COORDINATES = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn",
                       "tf_crop_and_resize")

_ML = "ai.onnx.ml"
# (domain, operator, attribute) -> accepted values by version
ENUM_ATTRIBUTES: dict[tuple[str, str, str], Versions] = {
    **{("", op, "auto_pad"): AUTO_PAD
       for op in ("AveragePool", "Conv", "ConvInteger", "ConvTranspose", "LpPool", "MaxPool", "QLinearConv")},
    **{("", op, "direction"): RNN_DIRECTION for op in ("RNN", "GRU", "LSTM")},
    **{("", op, "activations"): RNN_ACTIVATIONS for op in ("RNN", "GRU", "LSTM")},
    ("", "ScatterElements", "reduction"): SCATTER_REDUCTION,
    ("", "ScatterND", "reduction"): SCATTER_REDUCTION,
    ("", "NegativeLogLikelihoodLoss", "reduction"): LOSS_REDUCTION,
    ("", "SoftmaxCrossEntropyLoss", "reduction"): LOSS_REDUCTION,
    ("", "Cast", "round_mode"): ROUND_MODE,
    ("", "CastLike", "round_mode"): ROUND_MODE,
    ("", "DepthToSpace", "mode"): BLOCK_ORDER,
    ("", "SpaceToDepth", "mode"): BLOCK_ORDER,
    ("", "BitShift", "direction"): ((11, ("RIGHT", "LEFT")),),
    ("", "CausalConvWithState", "activation"): ((27, ("silu", "swish", "none")),),
    ("", "Gelu", "approximate"): ((20, ("none", "tanh")),),
    ("", "GridSample", "mode"): ((16, ("bilinear", "nearest", "bicubic")), (20, ("linear", "nearest", "cubic"))),
    ("", "GridSample", "padding_mode"): ((16, ("zeros", "border", "reflection")),),
    ("", "ImageDecoder", "pixel_format"): ((20, ("RGB", "BGR", "Grayscale")),),
    ("", "LinearAttention", "update_rule"): ((27, ("linear", "gated", "delta", "gated_delta")),),
    ("", "Pad", "mode"): ((1, ("constant", "reflect", "edge")), (19, ("constant", "reflect", "edge", "wrap"))),
    ("", "Resize", "mode"): ((10, ("nearest", "linear")), (11, ("nearest", "linear", "cubic"))),
    ("", "Resize", "coordinate_transformation_mode"): ((11, _RESIZE_COORDINATES),
                                                      (19, (*_RESIZE_COORDINATES, "half_pixel_symmetric"))),
    ("", "Resize", "nearest_mode"): ((11, ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")),),
    ("", "Resize", "keep_aspect_ratio_policy"): ((18, ("stretch", "not_larger", "not_smaller")),),
    ("", "RoiAlign", "mode"): ((10, ("avg", "max")),),
    ("", "RoiAlign", "coordinate_transformation_mode"): ((16, ("half_pixel", "output_half_pixel")),),
    ("", "StringNormalizer", "case_change_action"): ((10, ("LOWER", "UPPER", "NONE")),),
    ("", "TensorScatter", "mode"): ((24, ("linear", "circular")),),
    ("", "TfIdfVectorizer", "mode"): ((9, ("TF", "IDF", "TFIDF")),),
    ("", "Upsample", "mode"): ((1, ("nearest", "bilinear")), (7, ("nearest", "linear"))),
    ("ai.onnx.preview.training", "Momentum", "mode"): ((1, ("nesterov", "standard")),),
    (_ML, "CastMap", "cast_to"): ((1, ("TO_FLOAT", "TO_STRING", "TO_INT64")),),
    (_ML, "CastMap", "map_form"): ((1, ("DENSE", "SPARSE")),),
    (_ML, "Normalizer", "norm"): ((1, ("MAX", "L1", "L2")),),
    (_ML, "SVMClassifier", "kernel_type"): KERNEL_TYPE,
    (_ML, "SVMRegressor", "kernel_type"): KERNEL_TYPE,
    (_ML, "TreeEnsembleClassifier", "nodes_modes"): NODE_MODES,
    (_ML, "TreeEnsembleRegressor", "nodes_modes"): NODE_MODES,
    (_ML, "TreeEnsembleRegressor", "aggregate_function"): ((1, ("AVERAGE", "SUM", "MIN", "MAX")),),
    **{(_ML, op, "post_transform"): POST_TRANSFORM
       for op in ("LinearClassifier", "LinearRegressor", "SVMClassifier", "SVMRegressor", "TreeEnsembleClassifier",
                  "TreeEnsembleRegressor")},
}
IGNORING_CASE = frozenset({"activations"})  # onnxruntime lower-cases recurrent activation names


def allowed_values(domain: str, op_type: str, attribute: str, version: int) -> tuple[str, ...]:
    """The values ``attribute`` of ``op_type`` accepts in the operator version ``version``
    (of its schema); () when any value goes (free text, or an attribute not listed)."""
    versions = ENUM_ATTRIBUTES.get((domain, op_type, attribute), ())
    found: tuple[str, ...] = ()
    for since, values in versions:
        if since <= version:
            found = values
    return found


def enum_problem(node: NodeProto, attr: AttributeProto, domain: str, version: int) -> str:
    """Why the value of ``attr`` is not one the operator accepts ('' when it is), as one clause."""

    allowed = allowed_values(domain, node.op_type, attr.name, version)
    if not allowed:
        return ""
    given = [attr.s] if attr.type == AttributeProto.STRING else list(attr.strings)
    fold = attr.name in IGNORING_CASE
    accepted = {v.lower() for v in allowed} if fold else set(allowed)
    for raw in given:
        text = raw.decode("utf-8", "backslashreplace")
        if (text.lower() if fold else text) not in accepted:
            choices = ", ".join(allowed[:-1]) + f" or {allowed[-1]}"
            return f"attribute '{attr.name}' is '{display_name(text, 60)}', but {node.op_type} accepts {choices}"
    return ""

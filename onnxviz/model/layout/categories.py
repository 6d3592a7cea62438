"""Operator type -> header colour class (:class:`~onnxviz.model.layout.scene.Category`), as data."""

from __future__ import annotations

from onnxviz.model.layout.scene import Category

_GROUPS: dict[Category, tuple[str, ...]] = {
    Category.CONV: (
        "Conv", "ConvTranspose", "ConvInteger", "QLinearConv", "DeformConv", "Gemm", "MatMul",
        "MatMulInteger", "QLinearMatMul", "Einsum", "FusedConv", "FusedGemm", "FusedMatMul",
        "MatMulNBits", "LinearClassifier", "LinearRegressor",
    ),
    Category.ACTIVATION: (
        "Relu", "LeakyRelu", "PRelu", "Sigmoid", "HardSigmoid", "Tanh", "Elu", "Selu", "Celu",
        "Gelu", "FastGelu", "BiasGelu", "QuickGelu", "Softplus", "Softsign", "HardSwish", "Mish",
        "ThresholdedRelu", "Softmax", "LogSoftmax", "Hardmax", "Shrink", "Swish",
    ),
    Category.NORMALIZATION: (
        "BatchNormalization", "InstanceNormalization", "LayerNormalization", "GroupNormalization",
        "LpNormalization", "MeanVarianceNormalization", "LRN", "SkipLayerNormalization",
        "SimplifiedLayerNormalization", "RMSNormalization", "SkipSimplifiedLayerNormalization",
        "Dropout", "Normalizer",
    ),
    Category.POOLING: (
        "MaxPool", "AveragePool", "GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool", "LpPool",
        "MaxRoiPool", "RoiAlign", "MaxUnpool", "Resize", "Upsample", "GridSample", "AffineGrid",
        "Col2Im", "CenterCropPad",
    ),
    Category.TENSOR: (
        "Reshape", "Transpose", "Flatten", "Squeeze", "Unsqueeze", "Concat", "Split", "Slice",
        "Gather", "GatherElements", "GatherND", "Scatter", "ScatterElements", "ScatterND",
        "Expand", "Tile", "Pad", "Shape", "Size", "Identity", "Cast", "CastLike", "DepthToSpace",
        "SpaceToDepth", "Compress", "OneHot", "NonZero", "Where", "Range", "ConstantOfShape",
        "EyeLike", "Trilu", "ReverseSequence", "Unique", "TopK", "SequenceAt", "SequenceConstruct",
        "SequenceEmpty", "SequenceErase", "SequenceInsert", "SequenceLength", "SequenceMap",
        "SplitToSequence", "ConcatFromSequence", "Optional", "OptionalGetElement",
        "OptionalHasElement", "Bernoulli", "RandomNormal", "RandomNormalLike", "RandomUniform",
        "RandomUniformLike", "Multinomial", "StringSplit", "StringConcat", "RegexFullMatch",
        "StringNormalizer", "TfIdfVectorizer", "ImageDecoder", "Det", "STFT", "DFT",
        "HammingWindow", "HannWindow", "BlackmanWindow", "MelWeightMatrix", "CumSum",
    ),
    Category.ELEMENTWISE: (
        "Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Exp", "Log", "Abs", "Neg", "Reciprocal",
        "Floor", "Ceil", "Round", "Sign", "Erf", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan",
        "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Max", "Min", "Mean", "Sum", "Mod", "Clip",
        "And", "Or", "Xor", "Not", "Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual",
        "IsNaN", "IsInf", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot",
        "Binarizer", "Scaler", "BiasAdd",
    ),
    Category.REDUCTION: (
        "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
        "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "ArgMax", "ArgMin",
        "NonMaxSuppression",
    ),
    Category.CONTROL: ("If", "Loop", "Scan"),
    Category.QUANTIZATION: (
        "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "DynamicQuantizeMatMul",
        "QLinearAdd", "QLinearMul", "QLinearSigmoid", "QLinearLeakyRelu", "QLinearAveragePool",
        "QLinearGlobalAveragePool", "QLinearConcat", "QLinearSoftmax",
    ),
    Category.ATTENTION: (
        "Attention", "MultiHeadAttention", "GroupQueryAttention", "PackedAttention",
        "RotaryEmbedding", "LSTM", "GRU", "RNN",
    ),
    Category.CONSTANT: ("Constant",),
}

OP_CATEGORY: dict[str, Category] = {op: cat for cat, ops in _GROUPS.items() for op in ops}
"""Category of each known operator type (any domain; custom domains are decided by :func:`category_of`)."""

STANDARD_DOMAINS = frozenset({"", "ai.onnx", "ai.onnx.ml", "com.microsoft", "ai.onnx.preview.training"})


def category_of(op_type: str, domain: str = "", local_function: bool = False) -> Category:
    """Header class of a node; calls of model-local functions count as control flow."""
    if local_function:
        return Category.CONTROL
    cat = OP_CATEGORY.get(op_type)
    if cat is not None:
        return cat
    return Category.OTHER if domain in STANDARD_DOMAINS else Category.CUSTOM

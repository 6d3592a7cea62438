"""Makes the real exported models of tests/data/exports/ (and a sample input of each in inputs/).

Not part of the app or the tests (they only read the committed files): it needs torch, onnxscript,
scikit-learn and skl2onnx, which the project does not depend on. Run it in a side environment:

    python3 -m venv /tmp/exportenv
    /tmp/exportenv/bin/pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
    /tmp/exportenv/bin/pip install onnx==1.23.2 onnxruntime==1.31.1 onnxscript==0.7.2 numpy scikit-learn skl2onnx
    /tmp/exportenv/bin/python scripts/make_exports.py [OUT_DIR [NAME ...]]

With NAMEs, only those models are made (e.g. `gpt2_dynamo whisper_legacy whisper_dynamo`), so adding a model
leaves the committed bytes of the others as they are.

Weights are random with fixed seeds; every model is tiny (well under 1.5 MB). Each model is checked with
onnx.checker and run with onnxruntime on its saved inputs before the script ends.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import torch
from torch import nn

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "exports"
OPSET = 17
Inputs = dict[str, np.ndarray]


# -- torch modules ---------------------------------------------------------------------------------
def gelu_erf(x: torch.Tensor) -> torch.Tensor:
    """GELU written out, as BERT's original code does (exports as Div, Erf, Add, Mul, Mul)."""
    return 0.5 * x * (1.0 + torch.erf(x / 1.414))


class SelfAttention(nn.Module):
    def __init__(self, hidden: int, heads: int) -> None:
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.query, self.key, self.value = nn.Linear(hidden, hidden), nn.Linear(hidden, hidden), nn.Linear(hidden, hidden)
        self.output = nn.Linear(hidden, hidden)

    def split(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq = x.shape[0], x.shape[1]
        return x.view(batch, seq, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim) + mask
        context = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2)
        return self.output(context.reshape(x.shape[0], x.shape[1], -1))


class EncoderLayer(nn.Module):
    """Post-LayerNorm, like BERT."""

    def __init__(self, hidden: int, heads: int, ffn: int) -> None:
        super().__init__()
        self.attention = SelfAttention(hidden, heads)
        self.attention_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.intermediate, self.output = nn.Linear(hidden, ffn), nn.Linear(ffn, hidden)
        self.output_norm = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = self.attention_norm(x + self.attention(x, mask))
        return self.output_norm(x + self.output(gelu_erf(self.intermediate(x))))


class TinyBert(nn.Module):
    """A BERT-like encoder with a masked-LM head tied to the word embedding."""

    def __init__(self, vocab: int = 120, hidden: int = 32, layers: int = 2, heads: int = 4, ffn: int = 64,
                 max_positions: int = 64) -> None:
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden)
        self.position_embeddings = nn.Embedding(max_positions, hidden)
        self.token_type_embeddings = nn.Embedding(2, hidden)
        self.embeddings_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList(EncoderLayer(hidden, heads, ffn) for _ in range(layers))
        self.lm_head = nn.Linear(hidden, vocab)
        self.lm_head.weight = self.word_embeddings.weight  # tied, as in BERT's masked-LM head

    def forward(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor,
                attention_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        positions = torch.arange(input_ids.shape[1], dtype=torch.long).unsqueeze(0)
        x = self.word_embeddings(input_ids) + self.position_embeddings(positions)
        x = self.embeddings_norm(x + self.token_type_embeddings(token_type_ids))
        mask = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        for layer in self.layers:
            x = layer(x, mask)
        return x, self.lm_head(x)


class GptBlock(nn.Module):
    """Pre-LayerNorm decoder block with a causal mask sliced from a buffer, like GPT-2."""

    def __init__(self, hidden: int, heads: int, max_positions: int) -> None:
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.ln_1, self.ln_2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.c_attn, self.c_proj = nn.Linear(hidden, 3 * hidden), nn.Linear(hidden, hidden)
        self.c_fc, self.mlp_proj = nn.Linear(hidden, 4 * hidden), nn.Linear(4 * hidden, hidden)
        causal = torch.tril(torch.ones(max_positions, max_positions, dtype=torch.bool))
        self.register_buffer("bias", causal.view(1, 1, max_positions, max_positions), persistent=False)

    def attend(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, hidden = x.shape
        q, k, v = self.c_attn(x).split(hidden, dim=2)
        q, k, v = (t.view(batch, seq, self.heads, self.head_dim).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)
        causal = self.bias[:, :, :seq, :seq]
        scores = torch.where(causal, scores, torch.tensor(torch.finfo(scores.dtype).min))
        context = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(batch, seq, hidden)
        return self.c_proj(context)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attend(self.ln_1(x))
        return x + self.mlp_proj(nn.functional.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class TinyGpt2(nn.Module):
    def __init__(self, vocab: int = 120, hidden: int = 32, layers: int = 2, heads: int = 4,
                 max_positions: int = 64) -> None:
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, hidden), nn.Embedding(max_positions, hidden)
        self.h = nn.ModuleList(GptBlock(hidden, heads, max_positions) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)
        self.lm_head.weight = self.wte.weight

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(input_ids.shape[1], dtype=torch.long).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(positions)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


class CrossAttention(nn.Module):
    """Attention of a query sequence over another (keys and values from `memory`), optionally causal."""

    def __init__(self, hidden: int, heads: int) -> None:
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.q_proj, self.k_proj = nn.Linear(hidden, hidden), nn.Linear(hidden, hidden, bias=False)
        self.v_proj, self.out_proj = nn.Linear(hidden, hidden), nn.Linear(hidden, hidden)

    def split(self, x: torch.Tensor) -> torch.Tensor:
        return x.view(x.shape[0], x.shape[1], self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x: torch.Tensor, memory: torch.Tensor, causal: bool = False) -> torch.Tensor:
        q, k, v = self.split(self.q_proj(x)), self.split(self.k_proj(memory)), self.split(self.v_proj(memory))
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)
        if causal:
            seq = x.shape[1]
            mask = torch.triu(torch.full((seq, seq), torch.finfo(scores.dtype).min), diagonal=1)
            scores = scores + mask
        context = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2)
        return self.out_proj(context.reshape(x.shape[0], x.shape[1], -1))


class WhisperEncoderLayer(nn.Module):
    def __init__(self, hidden: int, heads: int) -> None:
        super().__init__()
        self.self_attn_layer_norm, self.self_attn = nn.LayerNorm(hidden), CrossAttention(hidden, heads)
        self.final_layer_norm = nn.LayerNorm(hidden)
        self.fc1, self.fc2 = nn.Linear(hidden, 2 * hidden), nn.Linear(2 * hidden, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.self_attn_layer_norm(x)
        x = x + self.self_attn(h, h)
        return x + self.fc2(nn.functional.gelu(self.fc1(self.final_layer_norm(x))))


class WhisperDecoderLayer(nn.Module):
    def __init__(self, hidden: int, heads: int) -> None:
        super().__init__()
        self.self_attn_layer_norm, self.self_attn = nn.LayerNorm(hidden), CrossAttention(hidden, heads)
        self.encoder_attn_layer_norm, self.encoder_attn = nn.LayerNorm(hidden), CrossAttention(hidden, heads)
        self.final_layer_norm = nn.LayerNorm(hidden)
        self.fc1, self.fc2 = nn.Linear(hidden, 2 * hidden), nn.Linear(2 * hidden, hidden)

    def forward(self, x: torch.Tensor, memory: torch.Tensor) -> torch.Tensor:
        h = self.self_attn_layer_norm(x)
        x = x + self.self_attn(h, h, causal=True)
        x = x + self.encoder_attn(self.encoder_attn_layer_norm(x), memory)
        return x + self.fc2(nn.functional.gelu(self.fc1(self.final_layer_norm(x))))


class TinyWhisper(nn.Module):
    """Whisper-like encoder-decoder: a conv front end over log-mel frames (two Conv1d with GELU, the second
    with stride 2), sinusoid-free learned positions, pre-LN encoder and decoder layers (causal self-attention,
    cross-attention over the encoder's output), LM head tied to the token embedding."""

    def __init__(self, mels: int = 8, hidden: int = 24, heads: int = 4, layers: int = 1, vocab: int = 50,
                 frames: int = 32, max_tokens: int = 16) -> None:
        super().__init__()
        self.conv1 = nn.Conv1d(mels, hidden, kernel_size=3, padding=1)
        self.conv2 = nn.Conv1d(hidden, hidden, kernel_size=3, stride=2, padding=1)
        self.embed_positions = nn.Embedding(frames // 2, hidden)
        self.encoder_layers = nn.ModuleList(WhisperEncoderLayer(hidden, heads) for _ in range(layers))
        self.encoder_norm = nn.LayerNorm(hidden)
        self.embed_tokens, self.decoder_positions = nn.Embedding(vocab, hidden), nn.Embedding(max_tokens, hidden)
        self.decoder_layers = nn.ModuleList(WhisperDecoderLayer(hidden, heads) for _ in range(layers))
        self.decoder_norm = nn.LayerNorm(hidden)

    def encode(self, features: torch.Tensor) -> torch.Tensor:
        x = nn.functional.gelu(self.conv2(nn.functional.gelu(self.conv1(features)))).permute(0, 2, 1)
        x = x + self.embed_positions.weight[: x.shape[1]]
        for layer in self.encoder_layers:
            x = layer(x)
        return self.encoder_norm(x)

    def forward(self, input_features: torch.Tensor, decoder_input_ids: torch.Tensor) -> torch.Tensor:
        memory = self.encode(input_features)
        positions = torch.arange(decoder_input_ids.shape[1], dtype=torch.long).unsqueeze(0)
        x = self.embed_tokens(decoder_input_ids) + self.decoder_positions(positions)
        for layer in self.decoder_layers:
            x = layer(x, memory)
        return self.decoder_norm(x) @ self.embed_tokens.weight.t()


class BasicBlock(nn.Module):
    def __init__(self, inp: int, out: int, stride: int) -> None:
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(inp, out, 3, stride, 1, bias=False), nn.BatchNorm2d(out)
        self.conv2, self.bn2 = nn.Conv2d(out, out, 3, 1, 1, bias=False), nn.BatchNorm2d(out)
        self.downsample = (nn.Sequential(nn.Conv2d(inp, out, 1, stride, bias=False), nn.BatchNorm2d(out))
                           if stride != 1 or inp != out else nn.Identity())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(y)) + self.downsample(x))


class TinyResNet(nn.Module):
    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        self.layer1, self.layer2 = BasicBlock(16, 16, 1), BasicBlock(16, 32, 2)
        self.pool, self.fc = nn.AdaptiveAvgPool2d(1), nn.Linear(32, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(self.pool(self.layer2(self.layer1(self.stem(x)))), 1))


class MlpBlock(nn.Module):
    """A transformer MLP block (LayerNorm, up, GELU, down, residual) over 3-D input, so Linear exports as MatMul."""

    def __init__(self, hidden: int = 128, ffn: int = 256) -> None:
        super().__init__()
        self.norm, self.up, self.down = nn.LayerNorm(hidden), nn.Linear(hidden, ffn), nn.Linear(ffn, hidden)
        self.head = nn.Linear(hidden, 64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.down(nn.functional.gelu(self.up(self.norm(x))))
        return self.head(x)


class Vad(nn.Module):
    """Voice-activity-like: a different front end per sample rate, chosen at run time (an If node)."""

    def __init__(self) -> None:
        super().__init__()
        self.front16k = nn.Conv1d(1, 16, kernel_size=64, stride=32)
        self.front8k = nn.Conv1d(1, 8, kernel_size=32, stride=16)
        self.proj16k, self.proj8k = nn.Linear(16, 12), nn.Linear(8, 12)
        self.decoder = nn.Linear(12, 1)

    def forward(self, x: torch.Tensor, sr: torch.Tensor) -> torch.Tensor:
        audio = x.unsqueeze(1)
        if bool(sr == 16000):
            features = self.proj16k(torch.relu(self.front16k(audio)).mean(dim=2))
        else:
            features = self.proj8k(torch.relu(self.front8k(audio)).mean(dim=2))
        return torch.sigmoid(self.decoder(torch.tanh(features)))


class LstmTagger(nn.Module):
    def __init__(self, vocab: int = 60, embed: int = 16, hidden: int = 24, tags: int = 5) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, batch_first=True)
        self.classifier = nn.Linear(hidden, tags)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        states, _ = self.lstm(self.embedding(tokens))
        return self.classifier(states)


# -- exporting -------------------------------------------------------------------------------------
def seeded(make: Callable[[], nn.Module], seed: int) -> nn.Module:
    """A freshly initialised module (fixed seed) in eval mode. Its LayerNorms are all ones and zeros, as in
    a fresh Hugging Face model, so the legacy exporter's deduplication of equal initializers writes the
    later copies as Identity nodes (bert_legacy, gpt2_legacy)."""
    torch.manual_seed(seed)
    return make().eval()


def bn_stats(module: nn.Module) -> nn.Module:
    for m in module.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.1, 0.1)
            m.running_var.uniform_(0.5, 1.5)
    return module


def legacy(module: nn.Module, feeds: Inputs, path: Path, outputs: list[str], dynamic: dict[str, dict[int, str]],
           opset: int = OPSET) -> None:
    args = tuple(torch.from_numpy(v) for v in feeds.values())
    torch.onnx.export(module, args, str(path), dynamo=False, opset_version=opset, input_names=list(feeds),
                      output_names=outputs, dynamic_axes=dynamic or None)


def dynamo(module: nn.Module, feeds: Inputs, path: Path, outputs: list[str], dynamic: dict[str, Any]) -> None:
    args = tuple(torch.from_numpy(v) for v in feeds.values())
    program = torch.onnx.export(module, args, dynamo=True, input_names=list(feeds), output_names=outputs,
                                dynamic_shapes=dynamic)
    assert program is not None
    program.save(str(path))


def bert_inputs() -> Inputs:
    rng = np.random.default_rng(1)
    mask = np.ones((2, 8), dtype=np.int64)
    mask[1, 5:] = 0
    types = np.zeros((2, 8), dtype=np.int64)
    types[:, 4:] = 1
    return {"input_ids": rng.integers(0, 120, (2, 8), dtype=np.int64), "token_type_ids": types,
            "attention_mask": mask}


BERT_AXES = {n: {0: "batch", 1: "sequence"} for n in ("input_ids", "token_type_ids", "attention_mask",
                                                        "last_hidden_state", "logits")}


def make_bert_legacy(out: Path) -> Inputs:
    feeds = bert_inputs()
    legacy(seeded(TinyBert, 0), feeds, out / "bert_legacy.onnx", ["last_hidden_state", "logits"], BERT_AXES)
    return feeds


def make_bert_dynamo(out: Path) -> Inputs:
    feeds = bert_inputs()
    batch, seq = torch.export.Dim("batch", max=64), torch.export.Dim("sequence", max=64)
    shapes = {n: {0: batch, 1: seq} for n in feeds}
    dynamo(seeded(TinyBert, 0), feeds, out / "bert_dynamo.onnx", ["last_hidden_state", "logits"], shapes)
    return feeds


def make_gpt2_legacy(out: Path) -> Inputs:
    feeds = {"input_ids": np.random.default_rng(2).integers(0, 120, (2, 7), dtype=np.int64)}
    axes = {"input_ids": {0: "batch", 1: "sequence"}, "logits": {0: "batch", 1: "sequence"}}
    legacy(seeded(TinyGpt2, 1), feeds, out / "gpt2_legacy.onnx", ["logits"], axes)
    return feeds


def make_gpt2_dynamo(out: Path) -> Inputs:
    """The same module, weights and input as gpt2_legacy, exported by torch.export + onnxscript."""
    feeds = {"input_ids": np.random.default_rng(2).integers(0, 120, (2, 7), dtype=np.int64)}
    shapes = {"input_ids": {0: torch.export.Dim("batch", max=64), 1: torch.export.Dim("sequence", max=64)}}
    dynamo(seeded(TinyGpt2, 1), feeds, out / "gpt2_dynamo.onnx", ["logits"], shapes)
    return feeds


def whisper_inputs() -> Inputs:
    rng = np.random.default_rng(9)
    return {"input_features": rng.standard_normal((1, 8, 32)).astype(np.float32),
            "decoder_input_ids": rng.integers(0, 50, (1, 5), dtype=np.int64)}


def make_whisper_legacy(out: Path) -> Inputs:
    feeds = whisper_inputs()
    axes = {"input_features": {0: "batch"}, "decoder_input_ids": {0: "batch", 1: "tokens"},
            "logits": {0: "batch", 1: "tokens"}}
    legacy(seeded(TinyWhisper, 6), feeds, out / "whisper_legacy.onnx", ["logits"], axes)
    return feeds


def make_whisper_dynamo(out: Path) -> Inputs:
    feeds = whisper_inputs()
    batch = torch.export.Dim("batch", max=64)
    shapes = {"input_features": {0: batch}, "decoder_input_ids": {0: batch, 1: torch.export.Dim("tokens", max=16)}}
    dynamo(seeded(TinyWhisper, 6), feeds, out / "whisper_dynamo.onnx", ["logits"], shapes)
    return feeds


def image() -> Inputs:
    return {"image": np.random.default_rng(3).standard_normal((1, 3, 32, 32)).astype(np.float32)}


def make_resnet_float(out: Path) -> Inputs:
    feeds = image()
    legacy(bn_stats(seeded(TinyResNet, 2)), feeds, out / "resnet_float.onnx", ["logits"], {})
    return feeds


def make_resnet_int8_qdq(out: Path) -> Inputs:
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            rng = np.random.default_rng(4)
            self.feeds = iter([{"image": rng.standard_normal((1, 3, 32, 32)).astype(np.float32)} for _ in range(8)])

        def get_next(self) -> Inputs | None:
            return next(self.feeds, None)

    quantize_static(str(out / "resnet_float.onnx"), str(out / "resnet_int8_qdq.onnx"), Reader(),
                    quant_format=QuantFormat.QDQ, activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    return image()


def make_mlp_int4(out: Path) -> Inputs:
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    feeds = {"x": np.random.default_rng(5).standard_normal((2, 4, 128)).astype(np.float32)}
    axes = {"x": {0: "batch", 1: "sequence"}, "y": {0: "batch", 1: "sequence"}}
    plain = out / "mlp_float.tmp.onnx"
    legacy(seeded(MlpBlock, 3), feeds, plain, ["y"], axes)
    quantizer = MatMulNBitsQuantizer(onnx.load(str(plain)), bits=4, block_size=32, is_symmetric=True)
    quantizer.process()
    quantizer.model.save_model_to_file(str(out / "mlp_int4_matmulnbits.onnx"))
    plain.unlink()
    return feeds


def make_vad_if(out: Path) -> Inputs:
    scripted = torch.jit.freeze(torch.jit.script(seeded(Vad, 4)))  # frozen: weights become constants
    feeds = {"x": np.random.default_rng(6).standard_normal((2, 512)).astype(np.float32),
             "sr": np.array(16000, dtype=np.int64)}
    legacy(scripted, feeds, out / "vad_if.onnx", ["speech_prob"], {"x": {0: "batch", 1: "samples"}})
    return feeds


def make_lstm_tagger(out: Path) -> Inputs:
    feeds = {"tokens": np.random.default_rng(7).integers(0, 60, (2, 9), dtype=np.int64)}
    axes = {"tokens": {0: "batch", 1: "sequence"}, "tag_logits": {0: "batch", 1: "sequence"}}
    legacy(seeded(LstmTagger, 5), feeds, out / "lstm_tagger.onnx", ["tag_logits"], axes)
    return feeds


def make_sklearn_zipmap(out: Path) -> Inputs:
    from skl2onnx import to_onnx
    from skl2onnx.common.data_types import StringTensorType
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.default_rng(8)
    colours, sizes = np.array(["red", "green", "blue", "black"]), np.array(["small", "medium", "large"])
    rows = np.stack([rng.choice(colours, 60), rng.choice(sizes, 60)], axis=1)
    labels = np.where(rows[:, 0] == "red", "stop", np.where(rows[:, 1] == "large", "slow", "go"))
    pipeline = make_pipeline(OneHotEncoder(handle_unknown="ignore"), LogisticRegression(max_iter=500))
    pipeline.fit(rows, labels)
    model = to_onnx(pipeline, initial_types=[("features", StringTensorType([None, 2]))],
                    target_opset={"": OPSET, "ai.onnx.ml": 3})
    onnx.save(model, out / "sklearn_text_zipmap.onnx")
    return {"features": rows[:3].astype("<U8")}


MAKERS: dict[str, Callable[[Path], Inputs]] = {
    "bert_legacy": make_bert_legacy, "bert_dynamo": make_bert_dynamo, "gpt2_legacy": make_gpt2_legacy,
    "gpt2_dynamo": make_gpt2_dynamo, "whisper_legacy": make_whisper_legacy, "whisper_dynamo": make_whisper_dynamo,
    "resnet_float": make_resnet_float, "resnet_int8_qdq": make_resnet_int8_qdq,
    "mlp_int4_matmulnbits": make_mlp_int4, "vad_if": make_vad_if, "lstm_tagger": make_lstm_tagger,
    "sklearn_text_zipmap": make_sklearn_zipmap,
}


def verify(path: Path, feeds: Inputs) -> str:
    onnx.checker.check_model(str(path), full_check=True)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    results = session.run(None, feeds)
    return ", ".join(f"{o.name}: {type(r).__name__}" for o, r in zip(session.get_outputs(), results, strict=True))


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else OUT
    only = set(argv[1:])
    (out / "inputs").mkdir(parents=True, exist_ok=True)
    for name, make in MAKERS.items():
        if only and name not in only:
            continue
        feeds = make(out)
        np.savez(out / "inputs" / f"{name}.npz", **feeds)
        path = out / f"{name}.onnx"
        print(f"{name}: {path.stat().st_size} bytes; runs ({verify(path, feeds)})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

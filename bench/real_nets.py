"""The hand-written PyTorch architectures of the real-model suite (text, speech, OCR, sequence,
segmentation), written as their reference implementations are so that their ONNX exports have
the same operators: HF-style BERT/DistilBERT/GPT-2 attention (Shape-driven reshapes, additive
or ``masked_fill`` masks, a causal ``Where``, Erf and tanh GELU), a Whisper encoder, a DBNet
text detector (MobileNetV3 backbone, FPN, ConvTranspose head), a UNet and LSTM/GRU models.

Runs under the PyTorch interpreter only (``bench/real_models_export.py``), never under pytvm.
"""
# mypy: disallow-subclassing-any=False

from __future__ import annotations

import math
from typing import Any

import torch  # type: ignore[import-not-found, unused-ignore]  # only the torch venv has it
import torchvision  # type: ignore[import-not-found, unused-ignore]
from torch import nn  # type: ignore[import-not-found, unused-ignore]


class SelfAttention(nn.Module):
    """Multi-head self-attention with separate q/k/v projections (BERT, Whisper)."""

    def __init__(self, dim: int, heads: int, key_bias: bool = True) -> None:
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim, bias=key_bias)
        self.v = nn.Linear(dim, dim)
        self.o = nn.Linear(dim, dim)

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        return x.view(b, s, self.heads, d // self.heads).transpose(1, 2)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """Attend over ``x`` (batch, seq, dim), ``mask`` added to the scores."""
        q, k, v = self._split(self.q(x)), self._split(self.k(x)), self._split(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores + mask
        ctx = torch.matmul(scores.softmax(-1), v).transpose(1, 2)
        return self.o(ctx.reshape(x.shape))


class PostNormLayer(nn.Module):
    """BERT's encoder layer: attention and MLP, each followed by residual + LayerNorm."""

    def __init__(self, dim: int, heads: int, ffn: int) -> None:
        super().__init__()
        self.attn = SelfAttention(dim, heads)
        self.ln1 = nn.LayerNorm(dim, eps=1e-12)
        self.fc1, self.fc2 = nn.Linear(dim, ffn), nn.Linear(ffn, dim)
        self.ln2 = nn.LayerNorm(dim, eps=1e-12)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """One layer over ``x`` with the additive ``mask``."""
        x = self.ln1(x + self.attn(x, mask))
        return self.ln2(x + self.fc2(nn.functional.gelu(self.fc1(x))))


class Bert(nn.Module):
    """BERT-base: word/position/type embeddings, post-LN layers, additive mask, tanh pooler."""

    def __init__(self, layers: int, vocab: int = 30522, dim: int = 768, heads: int = 12) -> None:
        super().__init__()
        self.word, self.pos = nn.Embedding(vocab, dim), nn.Embedding(512, dim)
        self.token_type = nn.Embedding(2, dim)
        self.ln = nn.LayerNorm(dim, eps=1e-12)
        self.layers = nn.ModuleList(PostNormLayer(dim, heads, 4 * dim) for _ in range(layers))
        self.pool = nn.Linear(dim, dim)

    def forward(self, ids: torch.Tensor, attention_mask: torch.Tensor) -> Any:
        """The hidden states and the pooled first token."""
        pos = torch.arange(ids.shape[1]).unsqueeze(0)
        x = self.ln(self.word(ids) + self.pos(pos) + self.token_type(torch.zeros_like(ids)))
        mask = (1.0 - attention_mask[:, None, None, :].float()) * -10000.0
        for layer in self.layers:
            x = layer(x, mask)
        return x, torch.tanh(self.pool(x[:, 0]))


class DistilBert(nn.Module):
    """DistilBERT: no token types, the mask applied with ``masked_fill`` (a ``Where``)."""

    def __init__(self, layers: int, vocab: int = 30522, dim: int = 768, heads: int = 12) -> None:
        super().__init__()
        self.word, self.pos = nn.Embedding(vocab, dim), nn.Embedding(512, dim)
        self.ln = nn.LayerNorm(dim, eps=1e-12)
        self.heads = heads
        self.layers = nn.ModuleList(PostNormLayer(dim, heads, 4 * dim) for _ in range(layers))

    def forward(self, ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """The hidden states."""
        pos = torch.arange(ids.shape[1]).unsqueeze(0)
        x = self.ln(self.word(ids) + self.pos(pos))
        masked = (attention_mask == 0)[:, None, None, :]
        zero = torch.zeros(1, 1, 1, 1)
        mask = zero.masked_fill(masked, torch.finfo(torch.float32).min)
        for layer in self.layers:
            x = layer(x, mask)
        return x


def gelu_new(x: torch.Tensor) -> torch.Tensor:
    """GPT-2's tanh approximation of GELU, written as HF's ``NewGELUActivation`` (Pow, Tanh)."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3.0))))


class GptBlock(nn.Module):
    """GPT-2's block: pre-LN, fused qkv projection, causal mask by ``torch.where``."""

    def __init__(self, dim: int, heads: int, context: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.c_attn, self.c_proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.fc, self.proj = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)
        causal = torch.tril(torch.ones(context, context, dtype=torch.bool))
        self.register_buffer("bias", causal.view(1, 1, context, context))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """One block over ``x``."""
        b, s, d = x.shape
        q, k, v = self.c_attn(self.ln1(x)).split(d, dim=2)
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(v.shape[-1])
        w = torch.where(self.bias[:, :, :s, :s], w, torch.tensor(torch.finfo(w.dtype).min))
        a = torch.matmul(w.softmax(-1), v).transpose(1, 2).reshape(b, s, d)
        x = x + self.c_proj(a)
        return x + self.proj(gelu_new(self.fc(self.ln2(x))))


class Gpt2(nn.Module):
    """GPT-2 small's decoder (fewer layers), LM head tied to the 50257-token embedding."""

    def __init__(self, layers: int, vocab: int = 50257, dim: int = 768, heads: int = 12) -> None:
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, dim), nn.Embedding(1024, dim)
        self.blocks = nn.ModuleList(GptBlock(dim, heads, 1024) for _ in range(layers))
        self.ln_f = nn.LayerNorm(dim)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """Next-token logits at every position."""
        pos = torch.arange(ids.shape[1]).unsqueeze(0)
        x = self.wte(ids) + self.wpe(pos)
        for block in self.blocks:
            x = block(x)
        return torch.matmul(self.ln_f(x), self.wte.weight.t())


class WhisperEncoder(nn.Module):
    """Whisper-tiny's encoder: conv1d stem (stride 2) over 3000 mel frames, pre-LN layers over
    1500 positions (a (1, heads, 1500, 1500) softmax per layer).
    """

    def __init__(self, layers: int = 4, mels: int = 80, dim: int = 384, heads: int = 6) -> None:
        super().__init__()
        self.conv1 = nn.Conv1d(mels, dim, 3, padding=1)
        self.conv2 = nn.Conv1d(dim, dim, 3, stride=2, padding=1)
        self.pos = nn.Parameter(torch.randn(1500, dim) * 0.02)
        self.attn = nn.ModuleList(SelfAttention(dim, heads, key_bias=False) for _ in range(layers))
        self.ln_a = nn.ModuleList(nn.LayerNorm(dim) for _ in range(layers))
        self.ln_m = nn.ModuleList(nn.LayerNorm(dim) for _ in range(layers))
        self.fc1 = nn.ModuleList(nn.Linear(dim, 4 * dim) for _ in range(layers))
        self.fc2 = nn.ModuleList(nn.Linear(4 * dim, dim) for _ in range(layers))
        self.ln_post = nn.LayerNorm(dim)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        """The encoded frames (batch, 1500, dim)."""
        gelu = nn.functional.gelu
        x = gelu(self.conv2(gelu(self.conv1(features)))).permute(0, 2, 1) + self.pos
        for attn, ln_a, ln_m, fc1, fc2 in zip(
            self.attn, self.ln_a, self.ln_m, self.fc1, self.fc2, strict=True
        ):
            x = x + attn(ln_a(x))
            x = x + fc2(gelu(fc1(ln_m(x))))
        return self.ln_post(x)


def _conv_bn_relu(cin: int, cout: int, k: int = 3) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, k, padding=k // 2, bias=False), nn.BatchNorm2d(cout), nn.ReLU()
    )


class DbNet(nn.Module):
    """DBNet text detector as PaddleOCR's mobile model: MobileNetV3-large backbone (strides 4 to
    32), an FPN to 96 channels at 1/4 scale, and the probability head's two stride-2 kernel-2
    ConvTransposes (24 -> 24 on 160x160 for a 640x640 image) then a sigmoid.
    """

    def __init__(self, inner: int = 96) -> None:
        super().__init__()
        features = torchvision.models.mobilenet_v3_large().features
        self.stages = nn.ModuleList([features[0:4], features[4:7], features[7:13], features[13:17]])
        self.lateral = nn.ModuleList(nn.Conv2d(c, inner, 1, bias=False) for c in (24, 40, 112, 960))
        quarter = inner // 4
        self.smooth = nn.ModuleList(
            nn.Conv2d(inner, quarter, 3, padding=1, bias=False) for _ in range(4)
        )
        self.head = nn.Sequential(
            _conv_bn_relu(inner, quarter),
            nn.ConvTranspose2d(quarter, quarter, 2, stride=2),
            nn.BatchNorm2d(quarter),
            nn.ReLU(),
            nn.ConvTranspose2d(quarter, 1, 2, stride=2),
            nn.Sigmoid(),
        )

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        """The text probability map at the image's resolution."""
        feats = []
        x = image
        for stage in self.stages:
            x = stage(x)
            feats.append(x)
        up = nn.functional.interpolate
        lat = [conv(f) for conv, f in zip(self.lateral, feats, strict=True)]
        for i in (2, 1, 0):
            lat[i] = lat[i] + up(lat[i + 1], scale_factor=2.0, mode="nearest")
        outs = [conv(f) for conv, f in zip(self.smooth, lat, strict=True)]
        ups = [up(o, scale_factor=2.0**i, mode="nearest") for i, o in enumerate(outs) if i]
        fused = torch.cat([outs[0], *ups], dim=1)
        return self.head(fused)


class UNet(nn.Module):
    """A four-level UNet: double 3x3 conv blocks, max-pool down, kernel-2 stride-2
    ConvTranspose up, skip concatenation, 1x1 classifier.
    """

    def __init__(self, base: int = 16, classes: int = 2) -> None:
        super().__init__()
        widths = [base * 2**i for i in range(5)]
        self.down = nn.ModuleList()
        cin = 3
        for w in widths:
            self.down.append(nn.Sequential(_conv_bn_relu(cin, w), _conv_bn_relu(w, w)))
            cin = w
        self.up = nn.ModuleList(
            nn.ConvTranspose2d(widths[i + 1], widths[i], 2, stride=2) for i in range(4)
        )
        self.merge = nn.ModuleList(
            nn.Sequential(
                _conv_bn_relu(2 * widths[i], widths[i]), _conv_bn_relu(widths[i], widths[i])
            )
            for i in range(4)
        )
        self.classify = nn.Conv2d(base, classes, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Per-pixel class scores."""
        skips = []
        for i, block in enumerate(self.down):
            x = block(x if i == 0 else nn.functional.max_pool2d(x, 2))
            skips.append(x)
        x = skips.pop()
        for i in (3, 2, 1, 0):
            x = self.merge[i](torch.cat([skips[i], self.up[i](x)], dim=1))
        return self.classify(x)


class LstmTagger(nn.Module):
    """A sequence tagger: embedding, a 2-layer bidirectional LSTM, a per-token classifier."""

    def __init__(self, vocab: int = 10000, dim: int = 128, hidden: int = 256) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, hidden, num_layers=2, bidirectional=True, batch_first=True)
        self.out = nn.Linear(2 * hidden, 20)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """Per-token tag scores."""
        return self.out(self.lstm(self.embed(ids))[0])


class GruSpeech(nn.Module):
    """A streaming-speech style recogniser: a 2-layer GRU over 200 frames of 80 mel bins."""

    def __init__(self, mels: int = 80, hidden: int = 256, tokens: int = 32) -> None:
        super().__init__()
        self.gru = nn.GRU(mels, hidden, num_layers=2, batch_first=True)
        self.out = nn.Linear(hidden, tokens)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        """Per-frame token log-probabilities."""
        return self.out(self.gru(features)[0]).log_softmax(-1)


class OutOnly(nn.Module):
    """The ``"out"`` entry of a torchvision segmentation model's output dict."""

    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The segmentation scores."""
        return self.inner(x)["out"]

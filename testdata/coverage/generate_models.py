#!/usr/bin/env python3
"""Generate the tpuc coverage corpus: real architectures from torchvision and
transformers, tiny configs, random weights, exported with torch.export.

For every model this writes, under testdata/coverage/models/<name>/:

  exported.pt2        torch.export.export(model.eval(), args, strict=False)
  core.pt2            exported.run_decompositions()              (Core ATen opset)
  inputs/<i>_<n>.npy  the user inputs, in order
  expected/<i>.npy    the user outputs of the EAGER model on those inputs, in order
  meta.json           name, family, source class, versions, inputs, outputs,
                      op counts of both graphs, max |diff| of ep.module() (both
                      forms, and the reloaded archives) against eager, notes

A model that torch.export cannot export gets models/<name>/failed.json (stage and
error) instead, and is listed under "failed_export" in index.json: it still counts
against coverage. models/index.json lists every model with its family;
models/ops_union.json lists every node target over all models, per form.

Usage (offline: nothing is downloaded, every model is built from a config):
  python3 testdata/coverage/generate_models.py              # every model
  python3 testdata/coverage/generate_models.py gpt2 t5      # only these
  python3 testdata/coverage/generate_models.py --family cnn # one family
  python3 testdata/coverage/generate_models.py --list       # names and families

Deterministic: torch.manual_seed(0) before building each model, inputs from a
fixed generator, one CPU thread, PYTHONHASHSEED=0 (the script re-executes itself
with it); the .pt2 archives are made byte-reproducible with the helpers of
testdata/generate.py (serialization_id replaced by a digest of the contents).

Small on purpose (the whole corpus is ~15 MB): tiny configs, and before saving,
node metadata tpuc does not need is dropped (stack_trace, nn_module_stack,
source_fn_stack, torch_fn, from_node), the JSON is written without spaces, and
the pickled example inputs are left out of the archive (they are in inputs/).
The archives stay ordinary torch.export archives: torch.export.load reads them
back, and the reloaded programs are checked against eager.
"""

from __future__ import annotations

import argparse
import collections
import functools
import json
import os
import shutil
import sys
import traceback

# Nothing is ever downloaded: every model is built from a config.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS_DIR = os.path.join(HERE, "models")
sys.path.insert(0, os.path.dirname(HERE))
sys.dont_write_bytecode = True  # no __pycache__ next to testdata/generate.py
import generate as base  # noqa: E402  (testdata/generate.py: archive and numpy helpers)

# ep.module() (both forms, and the reloaded archives) must agree with eager within
# ATOL + RTOL * max|expected|; otherwise the model is still written, with a note.
ATOL = 1e-5
RTOL = 1e-5

# --------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------


def _gen(seed=1234):
    return torch.Generator().manual_seed(seed)


def image(b=1, c=3, h=32, w=32):
    return torch.randn(b, c, h, w, generator=_gen())


def token_ids(vocab, shape, seed=1234, low=0):
    return torch.randint(low, vocab, shape, generator=_gen(seed), dtype=torch.int64)


def padded_mask(b=2, t=8, pad_from=5):
    """Row 0 all ones; row 1 zeros from `pad_from` on (right padding)."""
    mask = torch.ones(b, t, dtype=torch.int64)
    mask[1, pad_from:] = 0
    return mask


# --------------------------------------------------------------------------
# Wrappers: plain tensors in, plain tensors out
# --------------------------------------------------------------------------


class IdsToLogits(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, input_ids):
        return self.inner(input_ids=input_ids).logits


class IdsMaskToHidden(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, input_ids, attention_mask):
        return self.inner(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


class PixelsToLogits(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, pixel_values):
        return self.inner(pixel_values=pixel_values).logits


class PixelsToHiddenPooled(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, pixel_values):
        out = self.inner(pixel_values=pixel_values)
        return out.last_hidden_state, out.pooler_output


class Seq2SeqLogits(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, input_ids, attention_mask, decoder_input_ids):
        return self.inner(
            input_ids=input_ids,
            attention_mask=attention_mask,
            decoder_input_ids=decoder_input_ids,
            use_cache=False,
        ).logits


class WhisperLogits(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, input_features, decoder_input_ids):
        return self.inner(
            input_features=input_features, decoder_input_ids=decoder_input_ids, use_cache=False
        ).logits


class AudioToHidden(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, input_values):
        return self.inner(input_values=input_values).last_hidden_state


# --------------------------------------------------------------------------
# CNNs (torchvision, weights=None)
# --------------------------------------------------------------------------


def randomize_batchnorm(model):
    """Non-trivial running statistics and affine parameters for every
    BatchNorm, so that a wrong lowering of eval-mode batch norm shows. The
    int64 `num_batches_tracked` buffers are removed: eval mode never reads
    them, and as unused graph inputs they only make the archives larger
    (testdata/models/cnn keeps them)."""
    g = _gen(99)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                m.register_buffer("num_batches_tracked", None)
                n = m.num_features
                m.running_mean.copy_(torch.rand(n, generator=g) * 0.2 - 0.1)
                m.running_var.copy_(torch.rand(n, generator=g) + 0.5)
                if m.affine:
                    m.weight.copy_(torch.rand(n, generator=g) + 0.5)
                    m.bias.copy_(torch.rand(n, generator=g) * 0.2 - 0.1)
    return model


def reset_linears(model):
    """PyTorch's default init for every nn.Linear (torchvision's own init gives
    near-zero or zero logits)."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.Linear):
                m.reset_parameters()
    return model


def _shrink_resnet(m, block, widths, blocks):
    """Rebuild a torchvision ResNet's stem and stages at smaller widths with the
    class's own _make_layer (ResNet has no width argument)."""
    m.inplanes = widths[0]
    m.dilation = 1
    m.conv1 = nn.Conv2d(3, widths[0], kernel_size=7, stride=2, padding=3, bias=False)
    m.bn1 = nn.BatchNorm2d(widths[0])
    m.layer1 = m._make_layer(block, widths[0], blocks[0])
    m.layer2 = m._make_layer(block, widths[1], blocks[1], stride=2)
    m.layer3 = m._make_layer(block, widths[2], blocks[2], stride=2)
    m.layer4 = m._make_layer(block, widths[3], blocks[3], stride=2)
    m.fc = nn.Linear(widths[3] * block.expansion, 10)
    return m


def build_resnet18():
    from torchvision.models.resnet import BasicBlock, ResNet

    m = ResNet(BasicBlock, [2, 2, 2, 2], num_classes=10)
    m = _shrink_resnet(m, BasicBlock, (4, 8, 8, 16), (2, 2, 2, 2))
    return randomize_batchnorm(m), (image(),), (
        "torchvision ResNet(BasicBlock, [2,2,2,2]) (the ResNet-18 topology) with stage widths "
        "4/8/8/16 instead of 64..512 (stem and stages rebuilt with ResNet._make_layer), 10 classes: "
        "7x7 stride-2 stem, max pool, 1x1 stride-2 downsample branches."
    )


def build_mobilenet_v2():
    from torchvision.models.mobilenetv2 import MobileNetV2
    from torchvision.ops.misc import Conv2dNormActivation

    setting = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 1, 2], [6, 64, 1, 2], [6, 96, 1, 1]]
    m = MobileNetV2(num_classes=10, width_mult=0.25, inverted_residual_setting=setting)
    # The last 1x1 conv is 1280 channels whatever the width: make it 64.
    in_c = m.features[-1][0].in_channels
    m.features[-1] = Conv2dNormActivation(in_c, 64, kernel_size=1, norm_layer=nn.BatchNorm2d, activation_layer=nn.ReLU6)
    m.classifier[1] = nn.Linear(64, 10)
    return randomize_batchnorm(m), (image(),), (
        "torchvision MobileNetV2(width_mult=0.25) with a 5-stage inverted_residual_setting; the final "
        "1x1 ConvBNReLU6 is 64 channels instead of 1280. ReLU6 (hardtanh), depthwise convs, residuals."
    )


def build_mobilenet_v3_small():
    from torchvision.models.mobilenetv3 import MobileNetV3, _mobilenet_v3_conf

    setting, last = _mobilenet_v3_conf("mobilenet_v3_small", width_mult=0.1, reduced_tail=True)
    m = MobileNetV3(setting, last, num_classes=10)
    return randomize_batchnorm(m), (image(),), (
        f"torchvision MobileNetV3 with the mobilenet_v3_small configuration at width_mult=0.1, "
        f"reduced_tail=True (last_channel {last}): hardswish, hardsigmoid squeeze-excitation, "
        f"depthwise 3x3/5x5 convs."
    )


def build_efficientnet_b0():
    from torchvision.models.efficientnet import EfficientNet, _efficientnet_conf

    setting, last = _efficientnet_conf("efficientnet_b0", width_mult=0.1, depth_mult=0.25)
    m = EfficientNet(setting, dropout=0.2, stochastic_depth_prob=0.0, num_classes=10, last_channel=last)
    return randomize_batchnorm(m), (image(),), (
        "torchvision EfficientNet with the efficientnet_b0 MBConv configuration at width_mult=0.1, "
        "depth_mult=0.25: SiLU, sigmoid squeeze-excitation, depthwise 3x3/5x5 convs."
    )


def build_convnext():
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt

    setting = [CNBlockConfig(8, 16, 1), CNBlockConfig(16, None, 1)]
    m = ConvNeXt(setting, stochastic_depth_prob=0.0, layer_scale=0.5, num_classes=10)
    return m, (image(),), (
        "torchvision ConvNeXt with block_setting 8->16 (one CNBlock per stage, 2x2 stride-2 downsample), layer_scale 0.5 "
        "(the default 1e-6 would hide the block branch numerically): 4x4 stride-4 stem, 7x7 "
        "depthwise convs, LayerNorm2d (permute + layer_norm), GELU."
    )


def build_regnet():
    from torchvision.models.regnet import BlockParams, RegNet

    params = BlockParams.from_init_params(depth=2, w_0=8, w_a=8.0, w_m=2.0, group_width=4, se_ratio=0.25)
    m = RegNet(params, num_classes=10, stem_width=8)
    return randomize_batchnorm(m), (image(),), (
        "torchvision RegNet (RegNetY-style: se_ratio 0.25) from BlockParams.from_init_params("
        "depth=2, w_0=8, w_a=8, w_m=2, group_width=4), stem_width 8: grouped convs, "
        "squeeze-excitation."
    )


VGG11_CFG = [2, "M", 4, "M", 8, 8, "M", 16, 16, "M", 16, 16, "M"]  # VGG-11 "A", widths / 32


def build_vgg11():
    from torchvision.models.vgg import VGG, make_layers

    m = VGG(make_layers(VGG11_CFG, batch_norm=False), num_classes=10)
    m.classifier = nn.Sequential(
        nn.Linear(16 * 7 * 7, 16), nn.ReLU(True), nn.Dropout(), nn.Linear(16, 16), nn.ReLU(True), nn.Dropout(),
        nn.Linear(16, 10),
    )
    return m, (image(),), (
        "torchvision VGG with make_layers of the VGG-11 'A' configuration at 1/32 width; the 4096-wide "
        "classifier layers reduced to 16. On 32x32 inputs the features end at 1x1 and VGG's "
        "AdaptiveAvgPool2d((7,7)) upsamples that to 7x7."
    )


def build_densenet():
    from torchvision.models.densenet import DenseNet

    m = DenseNet(growth_rate=4, block_config=(2, 2), num_init_features=8, bn_size=2, num_classes=10)
    return randomize_batchnorm(m), (image(),), (
        "torchvision DenseNet(growth_rate=4, block_config=(2,2), num_init_features=8, bn_size=2): "
        "concatenating dense layers, BN-ReLU-Conv, transition avg pools."
    )


def build_squeezenet():
    from torchvision.models.squeezenet import Fire, SqueezeNet

    m = SqueezeNet(version="1_1", num_classes=10)
    m.features = nn.Sequential(
        nn.Conv2d(3, 8, kernel_size=3, stride=2),
        nn.ReLU(inplace=True),
        nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
        Fire(8, 2, 8, 8),
        Fire(16, 2, 8, 8),
        nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
        Fire(16, 4, 16, 16),
        Fire(32, 4, 16, 16),
    )
    m.classifier = nn.Sequential(
        nn.Dropout(p=0.5), nn.Conv2d(32, 10, kernel_size=1), nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d((1, 1))
    )
    return m, (image(),), (
        "torchvision SqueezeNet 1.1 with its features rebuilt at 1/8 width from torchvision's Fire "
        "module (4 Fires): MaxPool2d(3, 2, ceil_mode=True) on odd sizes, concat of 1x1/3x3 expands, "
        "conv classifier + AdaptiveAvgPool2d."
    )


def build_shufflenet_v2():
    from torchvision.models.shufflenetv2 import ShuffleNetV2

    m = ShuffleNetV2([2, 1, 1], [8, 16, 32, 64, 64], num_classes=10)
    return randomize_batchnorm(m), (image(),), (
        "torchvision ShuffleNetV2(stages_repeats=[2,1,1], stages_out_channels=[8,16,32,64,64]): "
        "channel_shuffle (view/transpose/view), chunk, depthwise convs."
    )


def build_mnasnet():
    from torchvision.models.mnasnet import MNASNet

    m = MNASNet(alpha=0.05, num_classes=10)
    in_c = m.layers[14].in_channels
    m.layers[14] = nn.Conv2d(in_c, 64, 1, padding=0, stride=1, bias=False)
    m.layers[15] = nn.BatchNorm2d(64, momentum=1 - 0.9997)
    m.classifier[1] = nn.Linear(64, 10)
    return randomize_batchnorm(m), (image(),), (
        "torchvision MNASNet(alpha=0.05: stage widths 8/8/8/8/8/8/16/16); the final 1x1 conv is 64 channels instead of 1280."
    )


def build_googlenet():
    from torchvision.models.googlenet import BasicConv2d, GoogLeNet, Inception, InceptionAux

    # GoogLeNet has no width argument, but takes its block classes: scale every
    # width by 1/16 (at least 1), tracking the scaled output of each block so the
    # next block's input matches.
    scaled = {3: 3}

    def s(c):
        return max(1, c // 16)

    def conv_block(in_c, out_c, **kw):
        scaled[out_c] = s(out_c)
        return BasicConv2d(scaled[in_c], s(out_c), **kw)

    def inception_block(in_c, c1, c3r, c3, c5r, c5, pp, conv_block=None):
        block = Inception(scaled[in_c], s(c1), s(c3r), s(c3), s(c5r), s(c5), s(pp))
        scaled[c1 + c3 + c5 + pp] = s(c1) + s(c3) + s(c5) + s(pp)
        return block

    m = GoogLeNet(
        num_classes=10, aux_logits=False, init_weights=True, blocks=[conv_block, inception_block, InceptionAux]
    )
    m.fc = nn.Linear(scaled[1024], 10)
    return randomize_batchnorm(m), (image(),), (
        "torchvision GoogLeNet (aux_logits=False, transform_input=False) with BasicConv2d and "
        "Inception blocks at 1/16 width via its `blocks` argument: 4-branch inception concat, "
        "MaxPool2d(ceil_mode=True), 3x3 stride-1 max pool branch."
    )


# --------------------------------------------------------------------------
# transformers helpers
# --------------------------------------------------------------------------


def _hf_summary(model):
    """'transformers Class (hidden 16, 1 layer, 2 heads / 1 kv head, vocab 64)'."""
    cfg = model.config
    parts = []

    def get(*names):
        for n in names:
            v = getattr(cfg, n, None)
            if v is not None:
                return v
        return None

    hidden = get("hidden_size", "d_model", "dim", "embed_dim")
    if hidden is not None:
        parts.append(f"hidden {hidden}")
    layers = get("num_hidden_layers", "num_layers", "n_layers")
    if isinstance(layers, int):
        dec = get("decoder_layers", "num_decoder_layers")
        parts.append(f"{layers}+{dec} layers" if dec else f"{layers} layer" + ("s" if layers != 1 else ""))
    heads = get("num_attention_heads", "n_heads", "encoder_attention_heads")
    kv = get("num_key_value_heads", "num_kv_heads")
    if heads is not None and not isinstance(heads, (list, tuple)):
        parts.append(f"{heads} heads" + (f" / {kv} kv heads" if kv and kv != heads else ""))
    inter = get("intermediate_size", "ffn_dim", "d_ff", "hidden_dim", "encoder_ffn_dim", "n_inner")
    if isinstance(inter, int):
        parts.append(f"ffn {inter}")
    vocab = get("vocab_size")
    if vocab and hasattr(model, "get_input_embeddings"):
        parts.append(f"vocab {vocab}")
    return f"transformers {type(model).__name__} ({', '.join(parts)})"


# --------------------------------------------------------------------------
# Vision transformers
# --------------------------------------------------------------------------

VIT = dict(
    image_size=32, patch_size=8, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
    intermediate_size=32, attn_implementation="eager",
)


def build_vit():
    from torchvision.models.vision_transformer import VisionTransformer

    m = VisionTransformer(
        image_size=32, patch_size=8, num_layers=1, num_heads=2, hidden_dim=16, mlp_dim=32, num_classes=10
    )
    return m, (image(),), (
        "torchvision VisionTransformer(image_size=32, patch_size=8, 1 layer, 2 heads, hidden 16, "
        "mlp 32): conv patch embedding, class token, nn.MultiheadAttention (exported with grad "
        "enabled: no fused fast path)."
    )


def build_swin():
    from torchvision.models.swin_transformer import SwinTransformer

    m = SwinTransformer(
        patch_size=[4, 4], embed_dim=8, depths=[2, 1], num_heads=[2, 4], window_size=[4, 4],
        stochastic_depth_prob=0.0, num_classes=10,
    )
    return m, (image(),), (
        "torchvision SwinTransformer(patch 4, embed_dim 8, depths [2,1], heads [2,4], window 4): "
        "shifted windows (roll) with attention masks, relative position bias, PatchMerging."
    )


def build_swin_v2():
    from torchvision.models.swin_transformer import PatchMergingV2, SwinTransformer, SwinTransformerBlockV2

    m = SwinTransformer(
        patch_size=[4, 4], embed_dim=8, depths=[2], num_heads=[2], window_size=[4, 4],
        stochastic_depth_prob=0.0, num_classes=10, block=SwinTransformerBlockV2, downsample_layer=PatchMergingV2,
    )
    return m, (image(),), (
        "torchvision Swin V2 (SwinTransformer with SwinTransformerBlockV2, patch 4, embed_dim 8, "
        "one stage of 2 blocks (plain then shifted window), 2 heads, window 4): cosine attention "
        "with logit_scale clamp/exp, continuous relative position bias MLP, 16*sigmoid."
    )


def build_maxvit():
    from torchvision.models.maxvit import MaxVit

    m = MaxVit(
        input_size=(32, 32), stem_channels=8, partition_size=2, block_channels=[8], block_layers=[1],
        head_dim=4, stochastic_depth_prob=0.0, num_classes=10,
    )
    return randomize_batchnorm(m), (image(),), (
        "torchvision MaxVit(input 32x32, stem 8, partition_size 2, one block of 8 channels with one "
        "layer, head_dim 4): MBConv with squeeze-excitation, block and grid window attention with "
        "relative position bias."
    )


def build_deit():
    from transformers import DeiTConfig, DeiTForImageClassificationWithTeacher

    m = DeiTForImageClassificationWithTeacher(DeiTConfig(**VIT, num_labels=10))
    return PixelsToLogits(m), (image(),), (
        f"{_hf_summary(m)}, image 32, patch 8: class + distillation tokens, two heads averaged; "
        "eager attention; returns logits."
    )


def build_clip_vision():
    from transformers import CLIPVisionConfig, CLIPVisionModel

    m = CLIPVisionModel(CLIPVisionConfig(**VIT, projection_dim=16))
    return PixelsToHiddenPooled(m), (image(),), (
        f"{_hf_summary(m)}, image 32, patch 8, quick_gelu, pre-LayerNorm; eager attention; "
        "returns (last_hidden_state, pooler_output)."
    )


# --------------------------------------------------------------------------
# Encoders (transformers, eager attention)
# --------------------------------------------------------------------------

VOCAB = 64
ENC = dict(
    hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32, vocab_size=VOCAB,
    max_position_embeddings=32, attn_implementation="eager",
)


def _encoder(model, what, low=0):
    ids = token_ids(VOCAB, (2, 8), low=low)
    return IdsMaskToHidden(model), (ids, padded_mask()), (
        f"{_hf_summary(model)}{what} Random weights, eager attention; input_ids [2,8], "
        "attention_mask row 1 zero at positions 5..7; returns last_hidden_state."
    )


def build_bert():
    from transformers import BertConfig, BertModel

    return _encoder(BertModel(BertConfig(**ENC), add_pooling_layer=False), ".")


def build_roberta():
    from transformers import RobertaConfig, RobertaModel

    m = RobertaModel(RobertaConfig(**ENC, pad_token_id=1), add_pooling_layer=False)
    return _encoder(m, ": position ids from input_ids != padding_idx via cumsum.", low=2)


def build_distilbert():
    from transformers import DistilBertConfig, DistilBertModel

    cfg = DistilBertConfig(
        dim=16, n_layers=1, n_heads=2, hidden_dim=32, vocab_size=VOCAB, max_position_embeddings=32,
        attn_implementation="eager",
    )
    return _encoder(DistilBertModel(cfg), ".")


def build_albert():
    from transformers import AlbertConfig, AlbertModel

    cfg = AlbertConfig(**{**ENC, "num_hidden_layers": 2}, embedding_size=8, num_hidden_groups=1)
    return _encoder(
        AlbertModel(cfg, add_pooling_layer=False),
        ": embedding 8 projected to the hidden size, the 2 layers share one group's weights, gelu_new.",
    )


def build_electra():
    from transformers import ElectraConfig, ElectraModel

    return _encoder(ElectraModel(ElectraConfig(**ENC, embedding_size=8)), ": embedding 8 projected to the hidden size.")


def build_xlm_roberta():
    from transformers import XLMRobertaConfig, XLMRobertaModel

    m = XLMRobertaModel(XLMRobertaConfig(**ENC, pad_token_id=1), add_pooling_layer=False)
    return _encoder(m, ".", low=2)


def build_deberta_v2():
    from transformers import DebertaV2Config, DebertaV2Model

    cfg = DebertaV2Config(
        **ENC, relative_attention=True, position_buckets=16, max_relative_positions=32,
        pos_att_type=["p2c", "c2p"], norm_rel_ebd="layer_norm", share_att_key=True,
    )
    return _encoder(
        DebertaV2Model(cfg),
        ": disentangled c2p/p2c relative attention with log position buckets (sign/abs/log/ceil, "
        "gather), shared keys.",
    )


# --------------------------------------------------------------------------
# Decoders (transformers, eager attention, use_cache=False, logits)
# --------------------------------------------------------------------------

DEC = dict(
    hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=4, num_key_value_heads=2,
    vocab_size=VOCAB, max_position_embeddings=32, use_cache=False, attn_implementation="eager",
)


def _decoder(model, what):
    return IdsToLogits(model), (token_ids(VOCAB, (2, 8)),), (
        f"{_hf_summary(model)}{what} Random weights, eager attention, use_cache=False; "
        "input_ids [2,8]; returns logits."
    )


def build_gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(
        n_embd=16, n_layer=1, n_head=2, vocab_size=VOCAB, n_positions=32, bos_token_id=0, eos_token_id=0,
        use_cache=False, attn_implementation="eager",
    )
    return _decoder(GPT2LMHeadModel(cfg), ": Conv1D projections, gelu_new, lm_head tied to wte.")


def build_gpt_neox():
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

    cfg = GPTNeoXConfig(
        hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2, vocab_size=VOCAB,
        max_position_embeddings=32, rotary_pct=0.5, use_cache=False, attn_implementation="eager",
    )
    return _decoder(GPTNeoXForCausalLM(cfg), ": partial rotary (0.5), parallel residual, fused qkv.")


def build_gptj():
    from transformers import GPTJConfig, GPTJForCausalLM

    cfg = GPTJConfig(
        n_embd=16, n_layer=1, n_head=2, n_inner=32, rotary_dim=4, vocab_size=VOCAB, n_positions=32,
        use_cache=False, attn_implementation="eager",
    )
    return _decoder(GPTJForCausalLM(cfg), ": rotary_dim 4 (interleaved rotary on part of each head), parallel attention+MLP.")


def build_opt():
    from transformers import OPTConfig, OPTForCausalLM

    cfg = OPTConfig(
        hidden_size=16, ffn_dim=32, num_hidden_layers=1, num_attention_heads=2, vocab_size=VOCAB,
        max_position_embeddings=32, word_embed_proj_dim=16, use_cache=False, attn_implementation="eager",
    )
    return _decoder(OPTForCausalLM(cfg), ": learned positions with offset 2 from the mask cumsum.")


def build_bloom():
    from transformers import BloomConfig, BloomForCausalLM

    cfg = BloomConfig(hidden_size=16, n_layer=1, n_head=2, vocab_size=VOCAB, use_cache=False, attn_implementation="eager")
    return _decoder(BloomForCausalLM(cfg), ": ALiBi biases, baddbmm, embedding LayerNorm, bloom_gelu.")


def build_falcon():
    from transformers import FalconConfig, FalconForCausalLM

    cfg = FalconConfig(
        hidden_size=16, num_hidden_layers=1, num_attention_heads=4, num_kv_heads=2, new_decoder_architecture=True,
        vocab_size=VOCAB, max_position_embeddings=32, use_cache=False, attn_implementation="eager",
    )
    return _decoder(FalconForCausalLM(cfg), ": new decoder architecture (grouped kv, two LayerNorms, parallel attention+MLP), rotary.")


def build_llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    return _decoder(LlamaForCausalLM(LlamaConfig(**DEC)), ": GQA, RMSNorm, SwiGLU, rotary.")


def build_mistral():
    from transformers import MistralConfig, MistralForCausalLM

    m = MistralForCausalLM(MistralConfig(**DEC, sliding_window=4))
    return _decoder(m, ": sliding_window 4 < sequence 8 (banded causal mask).")


def build_qwen2():
    from transformers import Qwen2Config, Qwen2ForCausalLM

    return _decoder(Qwen2ForCausalLM(Qwen2Config(**DEC)), ": q/k/v biases.")


def build_qwen3():
    from transformers import Qwen3Config, Qwen3ForCausalLM

    return _decoder(Qwen3ForCausalLM(Qwen3Config(**DEC, head_dim=8)), ": head_dim 8 (q_proj wider than hidden), q/k RMSNorm.")


def build_phi():
    from transformers import PhiConfig, PhiForCausalLM

    cfg = PhiConfig(
        hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2, vocab_size=VOCAB,
        max_position_embeddings=32, partial_rotary_factor=0.5, use_cache=False, attn_implementation="eager",
    )
    return _decoder(PhiForCausalLM(cfg), ": the Phi-1/Phi-2 architecture: partial rotary (0.5), parallel attention+MLP, gelu_new, lm_head bias.")


def build_phi3():
    from transformers import Phi3Config, Phi3ForCausalLM

    return _decoder(Phi3ForCausalLM(Phi3Config(**DEC, pad_token_id=0)), ": fused qkv and gate_up projections.")


def build_gemma():
    from transformers import GemmaConfig, GemmaForCausalLM

    return _decoder(
        GemmaForCausalLM(GemmaConfig(**DEC, head_dim=8)),
        ": head_dim 8, embeddings scaled by sqrt(hidden), (1+w) RMSNorm, GeGLU (tanh gelu).",
    )


def build_gemma2():
    from transformers import Gemma2Config, Gemma2ForCausalLM

    cfg = Gemma2Config(**DEC, head_dim=8, sliding_window=4)
    return _decoder(
        Gemma2ForCausalLM(cfg),
        ": the layer is a sliding-window one (window 4; gemma2 alternates sliding and full), "
        "attention and final logit soft-capping (tanh), pre and post norms.",
    )


def build_gemma3():
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    cfg = Gemma3TextConfig(
        **{**DEC, "num_hidden_layers": 2}, head_dim=8, sliding_window=4,
        layer_types=["sliding_attention", "full_attention"],
    )
    return _decoder(
        Gemma3ForCausalLM(cfg),
        ": one sliding (window 4) and one full attention layer with local and global rotary bases, "
        "q/k norm.",
    )


# --------------------------------------------------------------------------
# Encoder-decoders
# --------------------------------------------------------------------------


def build_t5():
    from transformers import T5Config, T5ForConditionalGeneration

    cfg = T5Config(
        vocab_size=VOCAB, d_model=16, d_kv=8, d_ff=32, num_layers=1, num_decoder_layers=1, num_heads=2,
        relative_attention_num_buckets=8, relative_attention_max_distance=16, decoder_start_token_id=0,
        pad_token_id=0, eos_token_id=1, use_cache=False, attn_implementation="eager",
    )
    m = T5ForConditionalGeneration(cfg)
    dec = token_ids(VOCAB, (2, 4), seed=4321)
    return Seq2SeqLogits(m), (token_ids(VOCAB, (2, 8), low=2), padded_mask(), dec), (
        f"{_hf_summary(m)}: relative position buckets (log, min/where), T5 RMSNorm, ReLU FFN, tied "
        "lm_head scaled by d_model^-0.5; eager attention, use_cache=False; inputs input_ids [2,8], "
        "attention_mask (row 1 zero from 5), decoder_input_ids [2,4]; returns logits."
    )


def build_bart():
    from transformers import BartConfig, BartForConditionalGeneration

    cfg = BartConfig(
        vocab_size=VOCAB, d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, max_position_embeddings=32,
        pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2, use_cache=False,
        attn_implementation="eager",
    )
    m = BartForConditionalGeneration(cfg)
    dec = token_ids(VOCAB, (2, 4), seed=4321, low=3)
    return Seq2SeqLogits(m), (token_ids(VOCAB, (2, 8), low=3), padded_mask(), dec), (
        f"{_hf_summary(m)}: learned positions with offset 2, embedding LayerNorm, final_logits_bias; "
        "eager attention, use_cache=False; inputs input_ids [2,8], attention_mask (row 1 zero from 5), "
        "decoder_input_ids [2,4]; returns logits."
    )


def build_whisper():
    from transformers import WhisperConfig, WhisperForConditionalGeneration

    cfg = WhisperConfig(
        vocab_size=VOCAB, num_mel_bins=8, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, d_model=16,
        max_source_positions=16, max_target_positions=32, pad_token_id=0, bos_token_id=1, eos_token_id=2,
        decoder_start_token_id=1, use_cache=False, attn_implementation="eager",
    )
    m = WhisperForConditionalGeneration(cfg)
    feats = torch.randn(1, 8, 32, generator=_gen())
    dec = token_ids(VOCAB, (1, 4), seed=4321, low=3)
    return WhisperLogits(m), (feats, dec), (
        f"{_hf_summary(m)}: 8 mel bins, max_source_positions 16, so input_features [1,8,32] go "
        "through two Conv1d (the second stride 2) + GELU and sinusoidal positions; eager attention, "
        "use_cache=False; decoder_input_ids [1,4]; returns logits."
    )


# --------------------------------------------------------------------------
# Audio
# --------------------------------------------------------------------------

AUDIO = dict(
    hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32, vocab_size=32,
    conv_dim=(8, 8), conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=8,
    num_conv_pos_embedding_groups=2, mask_time_prob=0.0, attn_implementation="eager",
)


def build_wav2vec2():
    from transformers import Wav2Vec2Config, Wav2Vec2Model

    m = Wav2Vec2Model(Wav2Vec2Config(**AUDIO, feat_extract_norm="group", do_stable_layer_norm=False))
    wave = torch.randn(1, 400, generator=_gen())
    return AudioToHidden(m), (wave,), (
        f"{_hf_summary(m)}: conv feature extractor (8/8 channels, kernels 10/3, strides 5/2, GroupNorm "
        "on the first conv), weight-normed grouped positional Conv1d (kernel 8, 2 groups, even-kernel "
        "trim), post-LayerNorm encoder; eager attention; input_values [1,400] -> 39 frames; returns "
        "last_hidden_state."
    )


# --------------------------------------------------------------------------
# Mixture of experts
# --------------------------------------------------------------------------

MOE_NOTE = (
    " Built with experts_implementation='batched_mm' (every token's top-k expert weights are "
    "gathered and applied with bmm: static shapes, pure ATen). transformers' default here is "
    "'grouped_mm', which on CPU traces to the custom op transformers::grouped_mm_fallback (see "
    "mixtral_default_experts); 'eager' loops over the experts that were hit (nonzero), which "
    "torch.export rejects (data-dependent guard)."
)


def build_mixtral():
    from transformers import MixtralConfig, MixtralForCausalLM

    cfg = MixtralConfig(
        **DEC, num_local_experts=4, num_experts_per_tok=2, sliding_window=None, experts_implementation="batched_mm"
    )
    return _decoder(MixtralForCausalLM(cfg), ": 4 experts, top-2, softmax router, renormalised top-k weights." + MOE_NOTE)


def build_mixtral_default_experts():
    from transformers import MixtralConfig, MixtralForCausalLM

    cfg = MixtralConfig(**DEC, num_local_experts=4, num_experts_per_tok=2, sliding_window=None)
    m = MixtralForCausalLM(cfg)
    return _decoder(
        m,
        ": 4 experts, top-2, with transformers' default experts implementation "
        f"({cfg._experts_implementation!r}): on CPU it sorts the routed tokens (sort, histc, "
        "index_put_) and calls the custom operator transformers::grouped_mm_fallback, which stays "
        "a non-ATen node in both graphs. What a user exporting Mixtral with default settings gets.",
    )


def build_qwen2_moe():
    from transformers import Qwen2MoeConfig, Qwen2MoeForCausalLM

    cfg = Qwen2MoeConfig(
        **DEC, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16, shared_expert_intermediate_size=16,
        decoder_sparse_step=1, experts_implementation="batched_mm",
    )
    return _decoder(Qwen2MoeForCausalLM(cfg), ": 4 experts, top-2, sigmoid-gated shared expert." + MOE_NOTE)


def build_qwen3_moe():
    from transformers import Qwen3MoeConfig, Qwen3MoeForCausalLM

    cfg = Qwen3MoeConfig(
        **DEC, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16, decoder_sparse_step=1,
        experts_implementation="batched_mm",
    )
    return _decoder(Qwen3MoeForCausalLM(cfg), ": 4 experts, top-2, q/k RMSNorm (Qwen3-30B-A3B's layout)." + MOE_NOTE)


def build_deepseek_v3():
    from transformers import DeepseekV3Config, DeepseekV3ForCausalLM

    cfg = DeepseekV3Config(
        **dict(DEC, num_hidden_layers=2, num_key_value_heads=4), n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
        n_shared_experts=1, first_k_dense_replace=1, n_group=2, topk_group=1, kv_lora_rank=16, q_lora_rank=16,
        qk_rope_head_dim=8, qk_nope_head_dim=8, v_head_dim=8, experts_implementation="batched_mm",
    )
    return _decoder(
        DeepseekV3ForCausalLM(cfg),
        ": DeepSeek-style: multi-head latent attention (q and kv LoRA ranks 16), layer 0 dense, layer 1 "
        "4 routed experts (sigmoid scores, group-limited top-2 over 2 groups) and a shared expert."
        + MOE_NOTE,
    )


def build_gpt_oss():
    from transformers import GptOssConfig, GptOssForCausalLM

    cfg = GptOssConfig(
        **DEC, num_local_experts=4, num_experts_per_tok=2, head_dim=8, sliding_window=8,
        experts_implementation="batched_mm",
    )
    return _decoder(
        GptOssForCausalLM(cfg),
        ": GPT-OSS: 4 experts with biases (fused gate_up interleaved, clamped SwiGLU), top-2 router with "
        "bias, attention sinks, sliding window 8 on alternate layers." + MOE_NOTE,
    )


# --------------------------------------------------------------------------
# Registry: name -> (family, builder). Order = index order.
# --------------------------------------------------------------------------

MODELS = collections.OrderedDict(
    [
        # CNNs
        ("resnet18", ("cnn", build_resnet18)),
        ("mobilenet_v2", ("cnn", build_mobilenet_v2)),
        ("mobilenet_v3_small", ("cnn", build_mobilenet_v3_small)),
        ("efficientnet_b0", ("cnn", build_efficientnet_b0)),
        ("convnext", ("cnn", build_convnext)),
        ("regnet", ("cnn", build_regnet)),
        ("vgg11", ("cnn", build_vgg11)),
        ("densenet", ("cnn", build_densenet)),
        ("squeezenet", ("cnn", build_squeezenet)),
        ("shufflenet_v2", ("cnn", build_shufflenet_v2)),
        ("mnasnet", ("cnn", build_mnasnet)),
        ("googlenet", ("cnn", build_googlenet)),
        # Vision transformers
        ("vit", ("vision_transformer", build_vit)),
        ("swin", ("vision_transformer", build_swin)),
        ("swin_v2", ("vision_transformer", build_swin_v2)),
        ("maxvit", ("vision_transformer", build_maxvit)),
        ("deit", ("vision_transformer", build_deit)),
        ("clip_vision", ("vision_transformer", build_clip_vision)),
        # Encoders
        ("bert", ("encoder", build_bert)),
        ("roberta", ("encoder", build_roberta)),
        ("distilbert", ("encoder", build_distilbert)),
        ("albert", ("encoder", build_albert)),
        ("electra", ("encoder", build_electra)),
        ("xlm_roberta", ("encoder", build_xlm_roberta)),
        ("deberta_v2", ("encoder", build_deberta_v2)),
        # Decoders
        ("gpt2", ("decoder", build_gpt2)),
        ("gpt_neox", ("decoder", build_gpt_neox)),
        ("gptj", ("decoder", build_gptj)),
        ("opt", ("decoder", build_opt)),
        ("bloom", ("decoder", build_bloom)),
        ("falcon", ("decoder", build_falcon)),
        ("llama", ("decoder", build_llama)),
        ("mistral", ("decoder", build_mistral)),
        ("qwen2", ("decoder", build_qwen2)),
        ("qwen3", ("decoder", build_qwen3)),
        ("phi", ("decoder", build_phi)),
        ("phi3", ("decoder", build_phi3)),
        ("gemma", ("decoder", build_gemma)),
        ("gemma2", ("decoder", build_gemma2)),
        ("gemma3", ("decoder", build_gemma3)),
        # Encoder-decoders
        ("t5", ("encoder_decoder", build_t5)),
        ("bart", ("encoder_decoder", build_bart)),
        ("whisper", ("encoder_decoder", build_whisper)),
        # Audio
        ("wav2vec2", ("audio", build_wav2vec2)),
        # Mixture of experts
        ("mixtral", ("moe", build_mixtral)),
        ("mixtral_default_experts", ("moe", build_mixtral_default_experts)),
        ("qwen2_moe", ("moe", build_qwen2_moe)),
        ("qwen3_moe", ("moe", build_qwen3_moe)),
        ("deepseek_v3", ("moe", build_deepseek_v3)),
        ("gpt_oss", ("moe", build_gpt_oss)),
    ]
)

# --------------------------------------------------------------------------
# Saving
# --------------------------------------------------------------------------

DROP_META = ("stack_trace", "nn_module_stack", "source_fn_stack", "torch_fn", "from_node")


def strip_metadata(ep):
    """Drop node metadata that tpuc does not need and that makes model.json large
    (stack_trace is only used for the source location in tpuc's error messages;
    testdata/models keeps it)."""

    def fix(gm):
        for node in gm.graph.nodes:
            for k in DROP_META:
                node.meta.pop(k, None)
        for _, sub in gm.named_children():
            if isinstance(sub, torch.fx.GraphModule):
                fix(sub)

    fix(ep.graph_module)


class compact_json:
    """json.dumps without the spaces after ',' and ':' while torch.export.save
    writes model.json and the weight/constant configs (same JSON, ~8% smaller)."""

    def __enter__(self):
        self._dumps = json.dumps
        dumps = self._dumps

        def compact(*a, **kw):
            kw.setdefault("separators", (",", ":"))
            return dumps(*a, **kw)

        json.dumps = compact

    def __exit__(self, *exc):
        json.dumps = self._dumps


def save_program(ep, path):
    strip_metadata(ep)
    # The archive's data/sample_inputs/model.pt (a pickle of the example inputs) is
    # not read by tpuc and the inputs are in inputs/*.npy already: save without it
    # (torch.export writes an empty entry and load() gives example_inputs=None).
    ep._example_inputs = None
    with compact_json():
        torch.export.save(ep, path)
    with open(path, "rb") as f:
        data = bytearray(f.read())
    base._make_zip_deterministic(data)
    with open(path, "wb") as f:
        f.write(data)
    import zipfile

    with zipfile.ZipFile(path) as zf:
        bad = zf.testzip()
        assert bad is None, f"{path}: bad CRC in {bad}"


# --------------------------------------------------------------------------
# Generation
# --------------------------------------------------------------------------


def _error_text(exc, limit=1500):
    msg = f"{type(exc).__name__}: {exc}".strip()
    return msg if len(msg) <= limit else msg[:limit] + " ..."


def _clear(out_dir):
    for fname in ("exported.pt2", "core.pt2", "meta.json", "failed.json"):
        p = os.path.join(out_dir, fname)
        if os.path.exists(p):
            os.remove(p)
    for sub in ("inputs", "expected"):
        p = os.path.join(out_dir, sub)
        if os.path.isdir(p):
            shutil.rmtree(p)


def _diffs(got, expected):
    """max |diff| per output, and whether all are within tolerance."""
    ds, ok = [], len(got) == len(expected)
    for g, e in zip(got, expected):
        d = base.max_abs_diff(g.detach(), e)
        scale = float(e.double().abs().max()) if e.dtype.is_floating_point and e.numel() else 0.0
        ds.append(d)
        ok = ok and d <= ATOL + RTOL * scale
    return ds, ok


def _versions():
    import torchvision
    import transformers

    return {
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "transformers": transformers.__version__,
    }


def _write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")


def generate(name):
    family, builder = MODELS[name]
    print(f"== {name} ({family})", flush=True)
    out_dir = os.path.join(MODELS_DIR, name)
    os.makedirs(out_dir, exist_ok=True)
    _clear(out_dir)

    def fail(stage, exc):
        print(f"  FAILED at {stage}: {_error_text(exc, 300)}", flush=True)
        _write_json(
            os.path.join(out_dir, "failed.json"),
            {"name": name, "family": family, "stage": stage, "error": _error_text(exc), "versions": _versions()},
        )

    torch.manual_seed(0)
    try:
        model, args, notes = builder()
        model = model.eval()
        source = type(getattr(model, "inner", model)).__module__ + "." + type(getattr(model, "inner", model)).__name__
        if source.startswith("torchvision."):
            reset_linears(model)
            notes += (
                " Every nn.Linear is re-initialised with PyTorch's default init (torchvision "
                "initialises classifiers with N(0, 0.01) or zeros, which makes the logits ~1e-4 "
                "or exactly 0 and the comparison meaningless)."
            )
        # Grad stays enabled (no torch.no_grad()): under no_grad nn.MultiheadAttention
        # takes its fused inference fast path, which has no decomposition.
        expected = [t.detach() for t in base.flatten_outputs(model(*args))]
    except Exception as exc:  # noqa: BLE001
        traceback.print_exc()
        fail("build/eager", exc)
        return
    notes = [notes]

    try:
        ep = torch.export.export(model, args, strict=False)
    except Exception as exc:  # noqa: BLE001
        fail("torch.export.export", exc)
        return
    programs = {"exported": ep}
    core_error = None
    try:
        programs["core"] = ep.run_decompositions()
    except Exception as exc:  # noqa: BLE001
        core_error = _error_text(exc)
        notes.append(f"run_decompositions() failed ({core_error}); core.pt2 omitted.")
        print(f"  run_decompositions failed: {core_error[:300]}", flush=True)

    check = {}
    for kind, prog in programs.items():
        got = base.flatten_outputs(prog.module()(*args))
        ds, ok = _diffs(got, expected)
        check[kind] = ds
        print(f"  {kind:8s} ep.module() vs eager: max |diff| {max(ds):.3e}" + ("" if ok else "  (OUTSIDE TOLERANCE)"))
        if not ok:
            notes.append(f"{kind} ep.module() differs from eager by up to {max(ds):.3e}.")

    os.makedirs(os.path.join(out_dir, "inputs"))
    os.makedirs(os.path.join(out_dir, "expected"))
    in_names = list(ep.graph_signature.user_inputs)
    assert len(in_names) == len(args), (in_names, len(args))
    meta_inputs = []
    for i, (nm, t) in enumerate(zip(in_names, args)):
        fname = f"inputs/{i}_{nm}.npy"
        np.save(os.path.join(out_dir, fname), base.to_numpy(t))
        meta_inputs.append({"name": nm, "dtype": base.dtype_name(t), "shape": list(t.shape), "file": fname})
    meta_outputs = []
    for i, t in enumerate(expected):
        fname = f"expected/{i}.npy"
        np.save(os.path.join(out_dir, fname), base.to_numpy(t))
        meta_outputs.append({"dtype": base.dtype_name(t), "shape": list(t.shape), "file": fname})

    ops, sizes = {}, {}
    for kind, prog in programs.items():
        path = os.path.join(out_dir, f"{kind}.pt2")
        save_program(prog, path)
        ops[kind] = base.op_counts_from_archive(path)
        bad = base.FORBIDDEN_OPS & set(ops[kind])
        if bad:
            notes.append(f"{kind}: fused fast-path ops in the graph: {sorted(bad)}.")
        loaded = torch.export.load(path)
        ds, ok = _diffs(base.flatten_outputs(loaded.module()(*args)), expected)
        check[f"{kind}_reloaded"] = ds
        if not ok:
            notes.append(f"{kind}.pt2 reloaded differs from eager by up to {max(ds):.3e}.")
        sizes[kind] = os.path.getsize(path)
        print(f"  {kind}.pt2: {sizes[kind]} bytes, {sum(ops[kind].values())} nodes", flush=True)

    meta = {
        "name": name,
        "family": family,
        "source": source,
        "versions": _versions(),
        "inputs": meta_inputs,
        "outputs": meta_outputs,
        "ops": ops,
        "check_max_abs_diff_vs_eager": check,
        "notes": " ".join(notes),
    }
    if core_error:
        meta["core_error"] = core_error
    _write_json(os.path.join(out_dir, "meta.json"), meta)


def write_index():
    models, failed = [], []
    for name, (family, _) in MODELS.items():
        d = os.path.join(MODELS_DIR, name)
        if os.path.exists(os.path.join(d, "meta.json")):
            with open(os.path.join(d, "meta.json")) as f:
                meta = json.load(f)
            e = {"name": name, "family": family, "source": meta["source"]}
            if "core_error" in meta:
                e["core_error"] = meta["core_error"]
            models.append(e)
        elif os.path.exists(os.path.join(d, "failed.json")):
            with open(os.path.join(d, "failed.json")) as f:
                fj = json.load(f)
            failed.append({"name": name, "family": family, "stage": fj["stage"], "error": fj["error"]})
    _write_json(os.path.join(MODELS_DIR, "index.json"), {"models": models, "failed_export": failed})

    union = {}
    for e in models:
        with open(os.path.join(MODELS_DIR, e["name"], "meta.json")) as f:
            meta = json.load(f)
        for kind, counts in meta["ops"].items():
            for op, c in counts.items():
                u = union.setdefault(kind, {}).setdefault(op, {"count": 0, "models": []})
                u["count"] += c
                u["models"].append(e["name"])
    union = {k: dict(sorted(v.items())) for k, v in sorted(union.items(), key=lambda kv: kv[0] != "exported")}
    lines = ["{"]
    for ki, (kind, ops) in enumerate(union.items()):
        lines.append(f"  {json.dumps(kind)}: {{")
        for oi, (op, u) in enumerate(ops.items()):
            lines.append(f"    {json.dumps(op)}: {json.dumps(u)}" + ("," if oi + 1 < len(ops) else ""))
        lines.append("  }" + ("," if ki + 1 < len(union) else ""))
    lines.append("}")
    with open(os.path.join(MODELS_DIR, "ops_union.json"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="models to (re)generate; default: all")
    ap.add_argument("--family", action="append", default=[], help="(re)generate every model of this family")
    ap.add_argument("--list", action="store_true", help="print the models and their families")
    a = ap.parse_args(argv)
    if a.list:
        for n, (fam, _) in MODELS.items():
            print(f"{n}\t{fam}")
        return
    names = list(a.names)
    families = {fam for fam, _ in MODELS.values()}
    for fam in a.family:
        if fam not in families:
            sys.exit(f"unknown family {fam}; known: {', '.join(sorted(families))}")
        names += [n for n, (f, _) in MODELS.items() if f == fam and n not in names]
    if not names and not a.family:
        names = list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        sys.exit(f"unknown model(s): {', '.join(unknown)}; known: {', '.join(MODELS)}")

    import transformers

    transformers.logging.set_verbosity_error()
    torch.set_num_threads(1)  # bit-stable CPU reductions
    os.makedirs(MODELS_DIR, exist_ok=True)
    for n in names:
        generate(n)
    # Models no longer in MODELS: remove their folders (ours: they hold a
    # meta.json or failed.json), so that index.json and the tree agree.
    for d in sorted(os.listdir(MODELS_DIR)):
        path = os.path.join(MODELS_DIR, d)
        if d not in MODELS and os.path.isdir(path):
            if any(os.path.exists(os.path.join(path, f)) for f in ("meta.json", "failed.json")):
                print(f"removing {path} (not in MODELS)")
                shutil.rmtree(path)
    write_index()


if __name__ == "__main__":
    # String hashing must be fixed: some models iterate over a set of strings
    # while tracing (gemma3's rotary embeddings per layer type), which would
    # otherwise reorder graph nodes from one run to the next.
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable, os.path.abspath(__file__)] + sys.argv[1:])
    main(sys.argv[1:])

# SPDX-License-Identifier: Apache-2.0
"""timm-vit and timm-resnet: image classifiers from timm's model registry,
timm.create_model(NAME, pretrained=False, ...): randomly initialised, nothing downloaded.

timm-vit: a VisionTransformer (vit_tiny_patch16_224 / vit_small_patch16_224, shrunk for
tiny: 32x32 images, 8x8 patches, width 32, depth 2): patch embedding (a strided convolution),
class token, learned position embedding, pre-norm blocks of LayerNorm, fused SDPA attention
and a GELU MLP, a Linear head on the class token. Optimizer: AdamW, foreach=False
(torch's single-tensor implementation; hf-llama runs the fused one, hf-bert the foreach one).

timm-resnet: a ResNet with BasicBlocks (resnet10t's deep tiered stem and average-pool
downsampling, narrowed for tiny; resnet18 at small, resnet50's Bottlenecks at base):
convolutions, BatchNorm in training mode, ReLU, max pooling, global average pooling.
Optimizer: SGD with momentum 0.9 and Nesterov, weight decay 1e-4, lr 0.01.

Data as cnn.py's: random images with a colour per image, labelled by a fixed linear
"teacher" of the image's mean colour, so the labels are learnable. Both need timm (the torch
2.x environment, scripts/venv), imported when a workload is built.
"""
import torch
import torch.nn.functional as F

from .common import Workload, build, require

VIT = {
    "tiny": dict(model="vit_tiny_patch16_224", image=32, classes=5, batch=4,
                 kwargs=dict(patch_size=8, embed_dim=32, depth=2, num_heads=2)),
    "small": dict(model="vit_tiny_patch16_224", image=64, classes=10, batch=16, kwargs={}),
    "base": dict(model="vit_small_patch16_224", image=224, classes=100, batch=32, kwargs={}),
}

RESNET = {
    "tiny": dict(model="resnet10t", image=32, classes=5, batch=4,
                 kwargs=dict(stem_width=8, channels=(8, 16, 32, 64))),
    "small": dict(model="resnet18", image=64, classes=10, batch=16, kwargs={}),
    "base": dict(model="resnet50", image=224, classes=100, batch=32, kwargs={}),
}


def loss_fn(logits, target):
    """Cross-entropy over the classes."""
    return F.cross_entropy(logits.float(), target)


def _image_batches(image, classes, batch):
    # The same rule as cnn.py: the teacher's weights from a generator of their own, the same
    # for every seed.
    teacher = torch.randn(3, classes, generator=torch.Generator().manual_seed(1234))

    def make_batch(gen):
        images = torch.randn(batch, 3, image, image, generator=gen)
        images += torch.randn(batch, 3, 1, 1, generator=gen)  # a colour per image
        return (images,), (images.mean(dim=(2, 3)) @ teacher).argmax(dim=1)

    return make_batch


def _make(name, table, size, seed, batch_size, optimizer, lr):
    if size not in table:
        raise ValueError("size must be one of tiny, small, base, not %r" % (size,))
    c = table[size]
    timm = require(name, "timm")
    kwargs = dict(c["kwargs"], num_classes=c["classes"])
    if name == "timm-vit":
        kwargs["img_size"] = c["image"]  # a ViT's position embedding is sized for its images
    model = build(name, size, seed,
                  lambda: timm.create_model(c["model"], pretrained=False, **kwargs))
    batch = batch_size or c["batch"]
    return Workload(name, size, model, loss_fn, _image_batches(c["image"], c["classes"], batch),
                    batch, seed, lr=lr, optimizer=optimizer)


def make_vit(size="tiny", seed=0, batch_size=None):
    """The timm-vit Workload (see the module docstring); MissingLibraryError without timm."""
    return _make("timm-vit", VIT, size, seed, batch_size,
                 ("AdamW", {"foreach": False, "weight_decay": 0.05}), lr=1e-3)


def make_resnet(size="tiny", seed=0, batch_size=None):
    """The timm-resnet Workload (see the module docstring); MissingLibraryError without
    timm."""
    return _make("timm-resnet", RESNET, size, seed, batch_size,
                 ("SGD", {"momentum": 0.9, "nesterov": True, "weight_decay": 1e-4}), lr=0.01)

# SPDX-License-Identifier: Apache-2.0
"""cnn: an image classifier: convolutions with BatchNorm (training mode: batch statistics,
running averages updated), ReLU, max pooling, average pooling, adaptive average pooling, a
Linear head and cross-entropy."""
import torch
import torch.nn.functional as F

from .common import Workload, build

CONFIGS = {
    "tiny": dict(image=16, channels=(4, 8), classes=5, batch=4),
    "small": dict(image=32, channels=(16, 32), classes=10, batch=32),
    "base": dict(image=64, channels=(32, 64, 128), classes=100, batch=64),
}


class ConvNet(torch.nn.Module):
    """forward(images [B, 3, H, W]) -> logits [B, classes]."""

    def __init__(self, channels, classes):
        super().__init__()
        blocks, c_in = [], 3
        for i, c_out in enumerate(channels):
            pool = torch.nn.MaxPool2d(2) if i % 2 == 0 else torch.nn.AvgPool2d(2)
            blocks.append(torch.nn.Sequential(
                torch.nn.Conv2d(c_in, c_out, 3, padding=1, bias=False),
                torch.nn.BatchNorm2d(c_out), torch.nn.ReLU(), pool))
            c_in = c_out
        self.features = torch.nn.Sequential(*blocks)
        self.pool = torch.nn.AdaptiveAvgPool2d(2)
        self.head = torch.nn.Linear(c_in * 4, classes)

    def forward(self, images):
        return self.head(self.pool(self.features(images)).flatten(1))


def loss_fn(logits, target):
    """Cross-entropy over the classes."""
    return F.cross_entropy(logits, target)


def make(size="tiny", seed=0, batch_size=None):
    """The cnn Workload (see module docstring)."""
    c = CONFIGS.get(size)
    model = build("cnn", size, seed, lambda: ConvNet(c["channels"], c["classes"]))
    batch = batch_size or c["batch"]

    # Labels a model can learn: the class a fixed linear "teacher" gives the image's mean
    # colour (its weights from a generator of their own, the same for every seed).
    teacher = torch.randn(3, c["classes"], generator=torch.Generator().manual_seed(1234))

    def make_batch(gen):
        images = torch.randn(batch, 3, c["image"], c["image"], generator=gen)
        images += torch.randn(batch, 3, 1, 1, generator=gen)  # a colour per image
        return (images,), (images.mean(dim=(2, 3)) @ teacher).argmax(dim=1)

    return Workload("cnn", size, model, loss_fn, make_batch, batch, seed)

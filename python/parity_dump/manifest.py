# SPDX-License-Identifier: Apache-2.0
"""The manifest of a dump: the platform and every setting that changes numerics."""
import functools
import json
import os
import platform
import shutil
import socket
import subprocess

import numpy as np
import torch

# Environment variables that change kernels, precision or determinism on CUDA or ROCm
# (parity's knowledge base, data/knowledge/settings.yaml, gives each its primary sources).
ENVIRONMENT = [
    "CUBLAS_WORKSPACE_CONFIG", "NVIDIA_TF32_OVERRIDE", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE",
    "MIOPEN_FIND_MODE", "MIOPEN_FIND_ENFORCE", "MIOPEN_DEBUG_CONVOLUTION_DETERMINISTIC",
    "MIOPEN_DEBUG_CONV_FFT", "MIOPEN_DEBUG_CONV_DIRECT", "MIOPEN_DEBUG_CONV_GEMM",
    "MIOPEN_DEBUG_CONV_WINOGRAD", "MIOPEN_DEBUG_CONV_IMPLICIT_GEMM",
    "MIOPEN_DEBUG_CONVOLUTION_ATTRIB_FP16_ALT_IMPL", "MIOPEN_USER_DB_PATH",
    "MIOPEN_SYSTEM_DB_PATH", "ROCBLAS_DEFAULT_ATOMICS_MODE", "TORCH_BLAS_PREFER_HIPBLASLT",
    "HIPBLASLT_ALLOW_TF32", "PYTORCH_TUNABLEOP_ENABLED", "PYTORCH_TUNABLEOP_TUNING",
    "PYTORCH_TUNABLEOP_FILENAME", "HSA_OVERRIDE_GFX_VERSION", "HSA_ENABLE_SDMA", "HSA_XNACK",
    "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "NCCL_ALGO",
    "NCCL_PROTO", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "PYTHONHASHSEED",
]


def _safe(get, default=None):
    try:
        return get()
    except Exception:  # an API the installed torch lacks
        return default


def _autocast_enabled(device_type):
    """Whether autocast is on for device_type: torch >= 2.4's per-device getter, else the
    older per-device functions (deprecated in 2.4)."""
    try:
        return bool(torch.is_autocast_enabled(device_type))
    except TypeError:  # torch < 2.4: no argument
        return bool(torch.is_autocast_cpu_enabled() if device_type == "cpu"
                    else torch.is_autocast_enabled())


def _autocast_dtype(device_type):
    """autocast's dtype for device_type ("bfloat16"), as _autocast_enabled reads it."""
    get = getattr(torch, "get_autocast_dtype", None)
    if get is not None:
        dtype = get(device_type)
    else:
        dtype = (torch.get_autocast_cpu_dtype() if device_type == "cpu"
                 else torch.get_autocast_gpu_dtype())
    return str(dtype).replace("torch.", "")


def settings():
    """torch's numerics settings, each absent when the installed torch has no such switch."""
    cuda_matmul = torch.backends.cuda.matmul
    out = {
        "allow_tf32_matmul": _safe(lambda: bool(cuda_matmul.allow_tf32)),
        "allow_tf32_cudnn": _safe(lambda: bool(torch.backends.cudnn.allow_tf32)),
        "float32_matmul_precision": _safe(torch.get_float32_matmul_precision),
        "allow_fp16_reduced_precision_reduction":
            _safe(lambda: bool(cuda_matmul.allow_fp16_reduced_precision_reduction)),
        "allow_bf16_reduced_precision_reduction":
            _safe(lambda: bool(cuda_matmul.allow_bf16_reduced_precision_reduction)),
        "deterministic_algorithms": _safe(torch.are_deterministic_algorithms_enabled),
        "cudnn_deterministic": _safe(lambda: bool(torch.backends.cudnn.deterministic)),
        "cudnn_benchmark": _safe(lambda: bool(torch.backends.cudnn.benchmark)),
        "autocast_gpu": _safe(lambda: _autocast_enabled("cuda")),
        "autocast_gpu_dtype": _safe(lambda: _autocast_dtype("cuda")),
        "autocast_cpu": _safe(lambda: _autocast_enabled("cpu")),
        "autocast_cpu_dtype": _safe(lambda: _autocast_dtype("cpu")),
        "deterministic_warn_only":
            _safe(lambda: bool(torch.is_deterministic_algorithms_warn_only_enabled())),
        "default_dtype": str(torch.get_default_dtype()).replace("torch.", ""),
        "num_threads": torch.get_num_threads(),
        "preferred_blas_library": _safe(lambda: str(torch.backends.cuda.preferred_blas_library())),
    }
    out.update(precision_settings())
    return {k: v for k, v in out.items() if v is not None}


# torch 2.x's precision switches (absent from 1.13): fp32_precision per backend and
# operation ("ieee", "tf32", "bf16" or "none": inherit the parent's; torch 2.9 on), and the
# scaled-dot-product-attention kernels enabled (sdp_<kernel>, the CUDA/ROCm backends' choice).
_FP32_PRECISION = ("", "cuda.matmul", "cudnn", "cudnn.conv", "cudnn.rnn", "mkldnn",
                   "mkldnn.matmul", "mkldnn.conv", "mkldnn.rnn")
_SDP = ("flash", "mem_efficient", "math", "cudnn")


def precision_settings():
    """{"fp32_precision[.<backend>]": ..., "sdp_<kernel>": bool,
    "sdp_fp16_bf16_reduction_math": bool}, each absent where the installed torch has no such
    switch."""
    out = {}
    backends = torch.backends
    for path in _FP32_PRECISION:
        def get(path=path):
            node = backends
            for part in filter(None, path.split(".")):
                node = getattr(node, part)
            return str(node.fp32_precision)
        out["fp32_precision" + ("." + path if path else "")] = _safe(get)
    cuda = backends.cuda
    for kernel in _SDP:
        out["sdp_" + kernel] = _safe(lambda k=kernel: bool(getattr(cuda, k + "_sdp_enabled")()))
    out["sdp_fp16_bf16_reduction_math"] = _safe(
        lambda: bool(cuda.fp16_bf16_reduction_math_sdp_allowed()))
    return {k: v for k, v in out.items() if v is not None}


def fingerprint():
    """parity's platform fingerprint (the "host" of `parity env --json -`), taken from the
    parity binary named by $PARITY_BIN, else the `parity` on PATH; None without one, or when it
    fails: a dump never depends on it. Asked once per binary and process."""
    exe = os.environ.get("PARITY_BIN") or shutil.which("parity")
    if not exe:
        return None
    return _fingerprint(exe)


@functools.lru_cache(maxsize=4)
def _fingerprint(exe):
    if not exe:
        return None
    try:
        done = subprocess.run([exe, "env", "--no-devices", "--json", "-"], capture_output=True,
                              text=True, timeout=60, check=True)
        host = json.loads(done.stdout).get("host")
    except (OSError, subprocess.SubprocessError, ValueError, AttributeError):
        return None
    return host if isinstance(host, dict) else None


def manifest(device, rank=0):
    """The manifest's platform, framework and environment for a dump on `device` (format
    version 1's fields; capture.py adds version 2's)."""
    info = {"format": "parity-dump", "version": 1}
    plat = {"device": device, "hostname": socket.gethostname(), "machine": platform.machine(),
            "python": platform.python_version(), "numpy": np.__version__, "rank": rank}
    if device.startswith("cuda") and torch.cuda.is_available():
        index = torch.device(device).index or 0
        plat["device_name"] = torch.cuda.get_device_name(index)
        props = torch.cuda.get_device_properties(index)
        plat["multiprocessor_count"] = props.multi_processor_count
        plat["compute_capability"] = "%d.%d" % (props.major, props.minor)
        arch = getattr(props, "gcnArchName", None)
        if arch:
            plat["gcn_arch"] = arch
    else:
        plat["device_name"] = platform.processor() or platform.machine()
    info["platform"] = plat
    framework = {"name": "torch", "version": torch.__version__,
                 "cuda": torch.version.cuda, "hip": getattr(torch.version, "hip", None),
                 "settings": settings()}
    cudnn = _safe(torch.backends.cudnn.version)
    if cudnn:
        framework["cudnn"] = cudnn
    info["framework"] = framework
    info["environment"] = {k: os.environ[k] for k in ENVIRONMENT if k in os.environ}
    fp = fingerprint()
    if fp is not None:
        info["fingerprint"] = fp
    return info

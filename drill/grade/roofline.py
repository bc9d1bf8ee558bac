"""A GPU's roofs for ``--bench`` of kernel tasks: memory bandwidth and dense tensor-core FLOP/s. Torch-free.

The bandwidth comes from the device itself when torch reports its memory clock and bus width
(``2 x clock x width``: the memory is double data rate); otherwise, and for FLOP/s always, from the
datasheet table below (dense figures: the datasheets' headline numbers with sparsity are twice these).
float16 and bfloat16 share the FP16 tensor roof; float32 is measured against the TF32 tensor roof,
since ``tl.dot`` on float32 inputs uses TF32 by default. A GPU not in the table and without a memory
clock has no roof: its figures are absolute.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

H100_DS = "NVIDIA H100 Tensor Core GPU datasheet"
H200_DS = "NVIDIA H200 Tensor Core GPU datasheet"
A100_DS = "NVIDIA A100 Tensor Core GPU datasheet"


@dataclass(frozen=True)
class Datasheet:
    model: str
    gbs: float  # memory bandwidth, GB/s (1e9 bytes)
    fp16_tflops: float | None  # dense FP16/BF16 tensor core, FP32 accumulate
    tf32_tflops: float | None  # dense TF32 tensor core
    source: str
    bf16: bool = True


# (pattern on the lower-cased torch device name, figures); the first match wins, so variants come first.
TABLE: tuple[tuple[str, Datasheet], ...] = (
    (r"h200.*nvl", Datasheet("H200 NVL", 4800, 835.5, 417.5, H200_DS)),
    (r"h200", Datasheet("H200 SXM", 4800, 989.4, 494.7, H200_DS)),
    (r"h100.*nvl", Datasheet("H100 NVL", 3900, 835.5, 417.5, H100_DS)),
    (r"h100.*pcie", Datasheet("H100 PCIe", 2000, 756.5, 378.0, H100_DS)),
    (r"h100", Datasheet("H100 SXM", 3350, 989.4, 494.7, H100_DS)),
    (r"a100(?=.*80gb).*pcie", Datasheet("A100 80GB PCIe", 1935, 312.0, 156.0, A100_DS)),
    (r"a100.*pcie", Datasheet("A100 40GB PCIe", 1555, 312.0, 156.0, A100_DS)),
    (r"a100.*80gb", Datasheet("A100 80GB SXM", 2039, 312.0, 156.0, A100_DS)),
    (r"a100", Datasheet("A100 40GB SXM", 1555, 312.0, 156.0, A100_DS)),
    (r"\bl40s\b", Datasheet("L40S", 864, 362.05, 183.0, "NVIDIA L40S datasheet")),
    (r"\bl40\b", Datasheet("L40", 864, 181.05, 90.5, "NVIDIA L40 datasheet")),
    (r"\bl4\b", Datasheet("L4", 300, 121.0, 60.0, "NVIDIA L4 datasheet")),
    (r"\ba10\b", Datasheet("A10", 600, 125.0, 62.5, "NVIDIA A10 datasheet")),
    (r"rtx 4090$", Datasheet("GeForce RTX 4090", 1008, 165.2, 82.6, "NVIDIA Ada Lovelace architecture whitepaper, appendix A")),
    (r"rtx 3090$", Datasheet("GeForce RTX 3090", 936, 71.0, 35.6, "NVIDIA Ampere GA102 GPU architecture whitepaper, appendix A")),
    (r"\bt4\b", Datasheet("T4", 320, 65.0, None, "NVIDIA T4 datasheet", bf16=False)),
    (r"v100-sxm2", Datasheet("V100 SXM2", 900, 125.0, None, "NVIDIA V100 datasheet", bf16=False)),
)
PROPERTIES = "torch.cuda.get_device_properties: 2 x memory clock x bus width"


@dataclass(frozen=True)
class Roofs:
    gbs: float | None
    gbs_source: str | None
    tflops: dict[str, float]  # dtype name -> dense tensor-core TFLOP/s
    tflops_source: str | None

    def to_json(self) -> dict:
        return {"bandwidth_gbs": self.gbs, "bandwidth_source": self.gbs_source, "tflops": self.tflops, "tflops_source": self.tflops_source}

    @classmethod
    def from_json(cls, data: dict) -> Roofs:
        return cls(data["bandwidth_gbs"], data["bandwidth_source"], data["tflops"], data["tflops_source"])


def datasheet(name: str) -> Datasheet | None:
    low = name.lower().strip()
    return next((sheet for pattern, sheet in TABLE if re.search(pattern, low)), None)


def roofs(name: str, memory_clock_khz: int = 0, bus_width_bits: int = 0) -> Roofs:
    """The roofs of the GPU torch names ``name`` (with its memory clock and bus width where torch reports them)."""
    sheet = datasheet(name)
    gbs, gbs_source = None, None
    if memory_clock_khz > 0 and bus_width_bits > 0:
        gbs, gbs_source = 2 * memory_clock_khz * 1e3 * bus_width_bits / 8 / 1e9, PROPERTIES
    elif sheet:
        gbs, gbs_source = float(sheet.gbs), f"{sheet.source} ({sheet.model})"
    tflops = {}
    if sheet and sheet.fp16_tflops:
        tflops = {"float16": sheet.fp16_tflops, **({"bfloat16": sheet.fp16_tflops} if sheet.bf16 else {})}
        if sheet.tf32_tflops:
            tflops["float32"] = sheet.tf32_tflops
    return Roofs(gbs, gbs_source, tflops, f"{sheet.source} ({sheet.model})" if tflops else None)


def fraction(bound: str, dtype: str, gbs: float, tflops: float | None, roof: Roofs) -> float | None:
    """Achieved over the roof that bounds the kernel (bandwidth when memory-bound, FLOP/s when compute-bound); None: unknown."""
    if bound == "memory":
        return gbs / roof.gbs if roof.gbs else None
    peak = roof.tflops.get(dtype)
    return tflops / peak if peak and tflops is not None else None

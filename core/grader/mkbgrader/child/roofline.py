"""What the roofline needs from the child (DESIGN §5.3): the reference's FLOPs (PyTorch's counter) and the dtype that
holds most input bytes; the rates against the peaks are parent/roofline.py."""

from __future__ import annotations

from typing import Any, Callable, Optional

try:
    from torch.utils.flop_counter import FlopCounterMode
except ImportError:  # torch 1.13 has no FLOP counter: the roofline then has no FLOPs
    FlopCounterMode = None


def count_flops(reference: Callable[..., Any], inputs: list) -> Optional[float]:
    """FLOPs of one reference call via torch.utils.flop_counter (absent in torch 1.13: then None)."""
    if FlopCounterMode is None:
        return None
    mode = FlopCounterMode(display=False)
    with mode:
        reference(*inputs)
    total = mode.get_total_flops()
    return float(total) if total else None


def dominant_dtype(tensors: list) -> str:
    """The float dtype holding the most input bytes, named as in the probe's tflops table."""
    sizes: dict[str, int] = {}
    for t in tensors:
        if t.is_floating_point():
            name = str(t.dtype).replace("torch.", "")
            sizes[name] = sizes.get(name, 0) + t.numel() * t.element_size()
    return max(sizes, key=lambda k: sizes[k]) if sizes else "float32"

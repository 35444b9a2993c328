"""Roofline figures in the parent (DESIGN §5.3): achieved rates and IOU/MFU from the child's bytes and FLOPs (counted
by child/roofline.py) against measured peaks."""

from __future__ import annotations

from typing import Optional


def roofline(raw: dict, kernel_median_ms: Optional[float], peaks: Optional[dict],
             gpu_median_ms: Optional[float] = None) -> Optional[dict]:
    """Combines the child's raw {bytes, flops, dtype} with the kernel's time and peaks (runs in the parent).

    The rates are over the kernel's GPU time (summed device activity from CUDA's records) when it was measured,
    else over its end-to-end median; "time_basis" says which ("gpu" or "end_to_end") and "time_ms" gives it.
    """
    gpu = gpu_median_ms is not None and gpu_median_ms > 0
    time_ms = gpu_median_ms if gpu else kernel_median_ms
    if not raw or time_ms is None or time_ms <= 0:
        return None
    seconds = time_ms * 1e-3
    bytes_moved = float(raw.get("bytes") or 0)
    flops = raw.get("flops")
    achieved_gbps = bytes_moved / seconds / 1e9
    achieved_tflops = float(flops) / seconds / 1e12 if flops else None
    iou = mfu = None
    if isinstance(peaks, dict):
        copy = peaks.get("copy_gbps")
        if isinstance(copy, (int, float)) and copy > 0:
            iou = achieved_gbps / copy
        rates = peaks.get("tflops") or {}
        peak = rates.get(raw.get("dtype", "float32")) if isinstance(rates, dict) else None
        if achieved_tflops is not None and isinstance(peak, (int, float)) and peak > 0:
            mfu = achieved_tflops / peak
    return {"bytes": bytes_moved, "flops": float(flops) if flops else None, "achieved_gbps": achieved_gbps,
            "achieved_tflops": achieved_tflops, "iou": iou, "mfu": mfu, "dtype": raw.get("dtype"),
            "time_basis": "gpu" if gpu else "end_to_end", "time_ms": time_ms}

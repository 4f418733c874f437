"""The loss curve every trainer draws beside its checkpoint (GraSP's GAT, the chain reader, the span reader)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence


def plot_losses(step_losses: Sequence[float], epoch_losses: Sequence[float], path: Path, *,
                title: str = "GraSP training loss") -> Path:
    """A PNG line plot of the per-step loss (grey), its running mean (blue) and the epoch means (red dots).

    Drawn with Pillow (already a dependency) to avoid adding a plotting library.
    """
    from PIL import Image, ImageDraw

    W, H, L, R, T, B = 720, 400, 60, 20, 30, 40
    img = Image.new("RGB", (W, H), "white")
    d = ImageDraw.Draw(img)
    d.text((L, 8), title, fill="black")
    if step_losses:
        lo, hi = min(step_losses), max(step_losses)
        if hi - lo < 1e-9:
            hi = lo + 1.0
        n = len(step_losses)

        def xy(i: float, v: float):
            x = L + (W - L - R) * (i / max(n - 1, 1))
            y = T + (H - T - B) * (1 - (v - lo) / (hi - lo))
            return x, y

        d.rectangle([L, T, W - R, H - B], outline="black")
        for frac in (0.0, 0.5, 1.0):
            v = lo + (hi - lo) * frac
            _, y = xy(0, v)
            d.text((4, y - 6), f"{v:.2f}", fill="black")
        d.text((L, H - B + 8), "step 1", fill="black")
        d.text((W - R - 60, H - B + 8), f"step {n}", fill="black")
        d.line([xy(i, v) for i, v in enumerate(step_losses)], fill=(180, 180, 180), width=1)
        win = max(1, n // 20)
        run = [sum(step_losses[max(0, i - win + 1): i + 1]) / len(step_losses[max(0, i - win + 1): i + 1])
               for i in range(n)]
        d.line([xy(i, v) for i, v in enumerate(run)], fill=(30, 90, 200), width=2)
        per = n / max(len(epoch_losses), 1)
        for e, v in enumerate(epoch_losses):
            x, y = xy(min((e + 1) * per - 1, n - 1), v)
            d.ellipse([x - 4, y - 4, x + 4, y + 4], fill=(200, 30, 30))
            d.text((x - 30, y - 18), f"ep{e + 1} {v:.3f}", fill=(200, 30, 30))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    img.save(path)
    return path


__all__ = ["plot_losses"]

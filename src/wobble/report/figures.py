"""Figure output: ``.png`` + ``.pdf`` via matplotlib, with timestamps stripped so reruns are byte-identical."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from wobble.paths import with_ext

matplotlib.rcParams["svg.hashsalt"] = "wobble"


def save_figure(fig, stem: str | Path) -> list[Path]:
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    out = []
    for ext, meta in ((".png", {"Software": None}), (".pdf", {"Creator": None, "Producer": None, "CreationDate": None})):
        path = with_ext(stem, ext)
        tmp = path.with_name(f".{path.name}.tmp")
        fig.savefig(tmp, format=ext[1:], metadata=meta, dpi=150, bbox_inches="tight")
        os.replace(tmp, path)
        out.append(path)
    plt.close(fig)
    return out

"""Charts as inline SVG text (matplotlib, no files, no network)."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

plt.rcParams.update({"svg.fonttype": "none", "font.size": 9, "figure.dpi": 96})


def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]  # drop the XML prolog so it can be inlined


def hbar(labels: list[str], values: list[float], *, title: str, xlabel: str, errors: list[float] | None = None,
         highlight_best: str = "max", note: str | None = None) -> str:
    """Horizontal bar chart, one bar per label, in the given order (top first)."""
    if not labels:
        return ""
    h = 0.28 * len(labels) + 1.0
    fig, ax = plt.subplots(figsize=(7.0, h))
    y = list(range(len(labels)))[::-1]
    best = (max if highlight_best == "max" else min)(values)
    colors = ["#1f6f43" if v == best else "#4a78b5" for v in values]
    ax.barh(y, values, xerr=errors, color=colors, error_kw={"elinewidth": 0.8, "ecolor": "#333"})
    ax.set_yticks(y, labels)
    ax.set_xlabel(xlabel)
    ax.set_title(title, loc="left", fontsize=10)
    for yi, v in zip(y, values):
        ax.text(v, yi, f" {v:,.0f}" if v >= 100 else f" {v:,.2f}", va="center", fontsize=7)
    ax.spines[["top", "right"]].set_visible(False)
    ax.margins(x=0.15)
    ax.set_xlim(left=0)
    if note:
        fig.text(0.01, -0.02, note, fontsize=7, color="#555", ha="left", va="top", wrap=True)
    return _svg(fig)


def stacked_normalised(t: pd.DataFrame, *, title: str) -> str:
    """Section 5.1 metric as stacked bars: key setup part + encryption part."""
    if t.empty:
        return ""
    h = 0.28 * len(t) + 1.0
    fig, ax = plt.subplots(figsize=(7.0, h))
    y = list(range(len(t)))[::-1]
    ax.barh(y, t.enc_norm, color="#4a78b5", label="encryption time / best")
    ax.barh(y, t.key_norm, left=t.enc_norm, color="#e39b3a", label="key setup time / best")
    ax.set_yticks(y, list(t.row))
    ax.set_xlabel("normalised key setup + encryption (2 = best in both; lower is better)")
    ax.set_title(title, loc="left", fontsize=10)
    ax.legend(loc="lower right", fontsize=7, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    if t.metric.max() / max(t.metric.min(), 1e-9) > 50:
        ax.set_xscale("log")
        ax.set_xlabel(ax.get_xlabel() + " — log scale")
    return _svg(fig)

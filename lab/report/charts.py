"""Charts as inline SVG text (matplotlib, no files, no network)."""

from __future__ import annotations

import io
from collections.abc import Sequence

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

# labels of at least 11 px in the page (issue 45: 7-8 px labels were unreadable)
plt.rcParams.update({"svg.fonttype": "none", "font.size": 11, "figure.dpi": 96})
SMALL = 10


# A chart of many points keeps a page's width (the history page is 1,100 px wide) and writes every k-th x label.
MAX_WIDTH_IN = 11.0
MAX_X_LABELS = 30
DENSE = 60  # points on an axis beyond which dots are small and error bars have no caps


def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]  # drop the XML prolog so it can be inlined


def hbar(labels: list[str], values: list[float], *, title: str, xlabel: str,
         interval: tuple[list[float], list[float]] | None = None, highlight_best: str = "max",
         note: str | None = None, marks: tuple[str, list[float]] | None = None) -> str:
    """Horizontal bar chart, one bar per label, in the given order (top first); `interval` (lows, highs)
    draws each value's confidence interval as an error bar; `marks` (name, values) a second statistic of each
    bar as a labelled marker (NIST's mean within 3 sd beside the headline)."""
    if not labels:
        return ""
    h = 0.34 * len(labels) + 1.2
    fig, ax = plt.subplots(figsize=(7.0, h))
    y = list(range(len(labels)))[::-1]
    best = (max if highlight_best == "max" else min)(values)
    colors = ["#1f6f43" if v == best else "#4a78b5" for v in values]
    xerr = None
    if interval is not None:
        lo, hi = (np.asarray(x, dtype=float) for x in interval)
        v = np.asarray(values, dtype=float)
        err = np.vstack([np.clip(v - lo, 0, None), np.clip(hi - v, 0, None)])
        xerr = np.where(np.isfinite(err), err, 0.0)  # no interval (one process): no bar
    ax.barh(y, values, xerr=xerr, color=colors, error_kw={"elinewidth": 0.8, "ecolor": "#333", "capsize": 2})
    if marks is not None:
        ax.plot(np.asarray(marks[1], dtype=float), y, linestyle="none", marker="D", markersize=4,
                color="#c0392b", label=marks[0])
        ax.legend(loc="lower right", fontsize=SMALL, frameon=False)
    ax.set_yticks(y, labels)
    ax.set_xlabel(xlabel)
    ax.set_title(title, loc="left", fontsize=12)
    for yi, v in zip(y, values):
        ax.text(v, yi, f" {v:,.0f}" if v >= 100 else f" {v:,.2f}", va="center", fontsize=SMALL)
    ax.spines[["top", "right"]].set_visible(False)
    ax.margins(x=0.15)
    ax.set_xlim(left=0)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}"))
    if note:
        # below the tick labels and the axis label (about 35 points under the axes), never over them
        ax.annotate(note, xy=(0, 0), xycoords="axes fraction", xytext=(0, -42), textcoords="offset points",
                    fontsize=SMALL, color="#555", ha="left", va="top", wrap=True, annotation_clip=False)
    return _svg(fig)


def stacked_normalised(t: pd.DataFrame, *, title: str, off_scale_factor: float = 10.0) -> tuple[str, list[str]]:
    """Section 5.1 metric as stacked bars: key setup part + encryption part.

    Rows whose metric is more than off_scale_factor x the median are left off the
    chart (as NIST left DEAL, HPC and FROG off its Fig. 4) and returned by name."""
    if t.empty:
        return "", []
    med = t.metric.median()
    omitted = [f"{r} ({v:,.1f})" for r, v in zip(t.row, t.metric) if v > off_scale_factor * med]
    t = t[t.metric <= off_scale_factor * med]
    h = 0.34 * len(t) + 1.2
    fig, ax = plt.subplots(figsize=(7.0, h))
    y = list(range(len(t)))[::-1]
    ax.barh(y, t.enc_norm, color="#4a78b5", label="encryption time / best")
    ax.barh(y, t.key_norm, left=t.enc_norm, color="#e39b3a", label="key setup time / best")
    ax.set_yticks(y, list(t.row))
    ax.set_xlabel("normalised key setup + encryption (2 = best in both; lower is better)")
    ax.set_title(title, loc="left", fontsize=12)
    ax.legend(loc="upper right", fontsize=SMALL, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    return _svg(fig), omitted


def heatmap(matrix: pd.DataFrame, *, title: str, cbar_label: str) -> str:
    """Rows x columns of values in [0, 1] (1 = best), annotated."""
    if matrix.empty:
        return ""
    fig, ax = plt.subplots(figsize=(1.2 * len(matrix.columns) + 3.0, 0.3 * len(matrix) + 1.2))
    low = float(np.nanmin(matrix.values)) if np.isfinite(matrix.values).any() else 0.5
    # the colour scale spans the data (a value of 0.23 is not clipped at 0.5), and text stays readable on it
    im = ax.imshow(matrix.values, aspect="auto", cmap="RdYlGn", vmin=min(0.5, low), vmax=1.0)
    ax.set_xticks(range(len(matrix.columns)), list(matrix.columns), rotation=30, ha="right")
    ax.set_yticks(range(len(matrix.index)), [str(i) for i in matrix.index])
    for (i, j), v in np.ndenumerate(matrix.values):
        if np.isfinite(v):
            ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=SMALL)
    ax.set_title(title, loc="left", fontsize=12)
    fig.colorbar(im, ax=ax, label=cbar_label, shrink=0.8)
    return _svg(fig)


def scatter_memory(mem: pd.DataFrame, *, title: str) -> str:
    """Encryption speed vs table + key-schedule bytes, one point per implementation."""
    if mem.empty or "encrypt_speed" not in mem:
        return ""
    m = mem.dropna(subset=["encrypt_speed"])
    if m.empty:
        return ""
    x = m["memory_bytes"]
    fig, ax = plt.subplots(figsize=(7.0, 4.5))
    ciphers = sorted(m.cipher.unique())
    cmap = plt.get_cmap("tab20")
    for k, c in enumerate(ciphers):
        sel = m.cipher == c
        ax.scatter(x[sel].clip(lower=1), m.encrypt_speed[sel], s=28, color=cmap(k % 20), label=c)
        for xi, yi, r in zip(x[sel], m.encrypt_speed[sel], m.row[sel]):
            ax.annotate(r, (max(xi, 1), yi), fontsize=SMALL, xytext=(3, 2), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_xlabel("static tables + one key schedule (bytes, log scale)")
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}"))
    if m.encrypt_speed.max() > 30 * m.encrypt_speed.min():  # hardware beside portable: orders of magnitude
        ax.set_yscale("log")
    ax.set_ylabel("encryption speed (Kbit/s" + (", log scale)" if ax.get_yscale() == "log" else ")"))
    ax.set_title(title, loc="left", fontsize=12)
    ax.spines[["top", "right"]].set_visible(False)
    return _svg(fig)


def version_trend(series: dict[str, list[tuple[str, float, float, float]]], *, title: str, ylabel: str,
                  marks: Sequence[str] = ()) -> str:
    """Speed against compiler version (or run, or revision), one line of dots with error bars per family:
    {family: [(x label, estimate, ci_low, ci_high), ...]} in x order; the x axis lists every label in that order
    (at most MAX_X_LABELS of them written, evenly spaced, on a series of many runs).  marks: x labels at which a
    dashed line is drawn (a history's steps: the first run after each)."""
    if not series:
        return ""
    labels = [v for pts in series.values() for v, *_ in pts]
    xs = {v: i for i, v in enumerate(dict.fromkeys(labels))}
    fig, ax = plt.subplots(figsize=(min(MAX_WIDTH_IN, max(4.0, 0.7 * len(xs) + 2.0)), 2.6))
    for family, pts in series.items():
        x = [xs[v] for v, *_ in pts]
        y = np.asarray([p[1] for p in pts], dtype=float)
        lo, hi = np.asarray([p[2] for p in pts], dtype=float), np.asarray([p[3] for p in pts], dtype=float)
        err = np.vstack([np.clip(y - lo, 0, None), np.clip(hi - y, 0, None)])
        ax.errorbar(x, y, yerr=np.where(np.isfinite(err), err, 0.0), marker="o", ms=4 if len(xs) <= DENSE else 2,
                    capsize=2 if len(xs) <= DENSE else 0, lw=1, label=family)
    for m in marks:
        if m in xs:
            ax.axvline(xs[m] - 0.5, color="0.4", ls="--", lw=0.8)
    every = -(-len(xs) // MAX_X_LABELS)
    shown = list(xs.items())[::every]
    ax.set_xticks([i for _, i in shown], [v for v, _ in shown], rotation=30, ha="right")
    ax.set_ylabel(ylabel)
    ax.set_title(title, loc="left", fontsize=12)
    ax.legend(fontsize=SMALL, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}"))
    return _svg(fig)

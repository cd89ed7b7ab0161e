"""A report of stored runs in one call: gather and judge them (lab/findings.py), then lay them out (lab/report).

The commands, the benchmarks and the tests call ``build_report``; the two layers it joins never import each
other upward (docs/architecture.md, "Layers").
"""

from __future__ import annotations

from pathlib import Path

from . import findings, report
from .config import Lab


def build_report(lab: Lab, runs=None, results_dir: Path | None = None, reports_dir: Path | None = None,
                 compare_with=None) -> Path:
    """Writes reports/<name>/index.html for the runs (default: the latest) and returns its path; compare_with:
    run(s) the report's comparison section judges them against."""
    results_dir = Path(results_dir or lab.root / "results")
    gathered = findings.gather(results_dir, runs, compare_with)
    return report.render(gathered, Path(reports_dir or lab.root / "reports"),
                         lab.root / "bench" / "results" / "ct.jsonl")


__all__ = ["build_report"]

"""What a run shows while it works: a live display on a terminal, one line per finished cell otherwise.

* ``live`` (a terminal): a rich progress bar with cells done / total, the
  current stage and cell, red cells so far, elapsed and estimated time left;
* ``lines`` (CI logs, pipes): one line per finished cell and per stage;
* ``quiet``: nothing but errors.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from .models import Status


class Progress:
    def __init__(self, total: int, mode: str = "lines", out: TextIO | None = None, done: int = 0):
        self.total, self.mode, self.out = total, mode, out or sys.stderr
        self.done, self.red = done, 0
        self.t0 = time.monotonic()
        self._live = None
        if mode == "live":
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress as RichProgress, TextColumn,
                                       TimeElapsedColumn, TimeRemainingColumn)

            self._live = RichProgress(
                TextColumn("[bold]cells"), BarColumn(), MofNCompleteColumn(),
                TextColumn("[red]{task.fields[red]} red"), TimeElapsedColumn(), TextColumn("left"),
                TimeRemainingColumn(), TextColumn("{task.fields[stage]}"),
                console=Console(file=self.out), transient=False, refresh_per_second=4)
            self._task = self._live.add_task("cells", total=total, completed=done, red=0, stage="")
            self._live.start()

    def stage(self, text: str) -> None:
        if self._live is not None:
            self._live.update(self._task, stage=text[-70:])
        elif self.mode == "lines" and not text.startswith(" "):
            self._print(f"-- {text}")

    def note(self, text: str) -> None:
        if self._live is not None:
            self._live.console.print(text)
        elif self.mode != "quiet":
            self._print(text)

    def cell_done(self, cell_id: str, status: str, reason: str | None, seconds: float) -> None:
        self.done += 1
        if status not in (Status.OK, Status.UNAVAILABLE):
            self.red += 1
        if self._live is not None:
            self._live.update(self._task, completed=self.done, red=self.red)
            if status not in (Status.OK, Status.UNAVAILABLE):
                self._live.console.print(f"[red]{status}[/red] {cell_id}: {reason}")
        elif self.mode == "lines":
            width = len(str(self.total))
            why = f": {reason}" if reason and status != Status.OK else ""
            self._print(f"[{self.done:>{width}}/{self.total}] {status:<14} {cell_id} ({seconds:.1f} s){why}")

    def _print(self, line: str) -> None:
        print(line, file=self.out, flush=True)

    def close(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None


def mode_for(quiet: bool, progress: bool | None, stream: TextIO | None = None) -> str:
    """quiet wins; else live on a terminal (unless progress is False), lines otherwise."""
    if quiet:
        return "quiet"
    stream = stream or sys.stderr
    if progress is False:
        return "lines"
    return "live" if stream.isatty() else "lines"

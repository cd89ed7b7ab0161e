"""How long is one cell's walk through the lab?  Runs one cell (``python -m lab run`` with the arguments given) under
a profiler hook and prints the lab's modules and functions that the run called between the command line and the
stored record (the report, which only reads results, is left out), with the number of calls of each.

    python -m lab.bench.cell_walk [--json FILE] -- --ciphers rc6 --implementations rc6/ref --toolchains gcc-O3 \
        --profile smoke --results-dir W/results --reports-dir W/reports --build-dir W/build

Run from the checkout to measure (``PYTHONPATH=<checkout>``): it counts the code under that checkout's ``lab/``.
Used to compare the walk before and after a redesign (issue 21: the one cell pipeline).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from collections import Counter
from pathlib import Path

LEFT_OUT = ("report/", "bench/cell_walk.py")  # the report reads results, this file measures: not a cell's walk


def walk(argv: list[str]) -> tuple[Counter, int]:
    import lab
    from lab.cli import main

    root = Path(lab.__file__).resolve().parent
    prefix = str(root) + "/"
    calls: Counter = Counter()

    def hook(frame, event, arg):
        if event != "call":
            return
        f = frame.f_code.co_filename
        if f.startswith(prefix):
            rel = f[len(prefix):]
            if not rel.startswith(LEFT_OUT) and frame.f_code.co_name not in ("<module>", "<genexpr>", "<listcomp>",
                                                                                "<dictcomp>", "<setcomp>", "<lambda>"):
                calls[(rel, frame.f_code.co_qualname)] += 1

    threading.setprofile(hook)
    sys.setprofile(hook)
    try:
        code = main(["run", *argv])
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    return calls, code


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", type=Path)
    p.add_argument("run_args", nargs=argparse.REMAINDER)
    a = p.parse_args()
    args = a.run_args[1:] if a.run_args[:1] == ["--"] else a.run_args
    calls, code = walk(args)
    modules = Counter()
    for (mod, _), n in calls.items():
        modules[mod] += n
    print(f"exit {code}: {len(calls)} functions in {len(modules)} modules of lab/ (the report left out)")
    for mod, n in sorted(modules.items()):
        fns = sorted(q for (m, q) in calls if m == mod)
        print(f"  {mod:28} {len(fns):3} functions, {n:6} calls")
    if a.json:
        a.json.write_text(json.dumps({"exit": code, "functions": len(calls), "modules": len(modules),
                                      "per_module": {m: sorted(q for (mm, q) in calls if mm == m) for m in modules}},
                                     indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

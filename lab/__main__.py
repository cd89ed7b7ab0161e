"""Command line: python -m lab {verify,run,report,schema,list}."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .config import ConfigError, Lab


def _csv(s: str | None) -> list[str] | None:
    return [x for x in s.split(",") if x] if s else None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m lab", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)

    v = sub.add_parser("verify", help="check a cipher implementation against a .kat vectors file")
    v.add_argument("cipher")
    v.add_argument("vectors", type=Path)
    v.add_argument("--impl", help="strategy name (default: the cipher's default; 'all' for every one)")
    v.add_argument("--toolchain", default="gcc-O3")
    v.add_argument("--target", default="host")
    v.add_argument("--show", type=int, default=5, help="failed records to print")

    r = sub.add_parser("run", help="run the matrix (like `invoke matrix.run`)")
    r.add_argument("--matrix", type=Path)
    r.add_argument("--ciphers")
    r.add_argument("--implementations", help="default, all, or cipher/strategy list")
    r.add_argument("--toolchains")
    r.add_argument("--targets")
    r.add_argument("--profile")
    r.add_argument("--backend", choices=["host", "container"])
    r.add_argument("--no-report", action="store_true")
    r.add_argument("--no-progress", action="store_true")

    rep = sub.add_parser("report", help="(re)build the HTML report of stored results")
    rep.add_argument("runs", nargs="*", help="run ids (default: latest)")

    s = sub.add_parser("schema", help="export JSON Schemas of the config files")
    s.add_argument("--out", type=Path, default=Path("schemas"))

    sub.add_parser("list", help="list ciphers, implementations, toolchains, targets, profiles")
    sub.add_parser("catalogue", help="markdown table of every implementation with its facts (builds with gcc-O3)")

    a = p.parse_args(argv)
    lab = Lab()
    try:
        if a.cmd == "verify":
            from .verify import verify

            results = verify(lab, a.cipher, a.vectors, a.impl, a.toolchain, a.target)
            for res in results:
                print(res.line())
                for f in (res.fails or [])[: a.show]:
                    print(f"  line {f.get('line')}: {f.get('direction')} {f.get('reason')}"
                          f" expected {f.get('expected')} got {f.get('got')}")
            return 0 if all(x.ok for x in results) else 1
        if a.cmd == "run":
            from .run import RunOptions, run_matrix

            impls = a.implementations
            if impls and impls not in ("default", "all"):
                impls = _csv(impls)
            opts = RunOptions(backend=a.backend, profile=a.profile, ciphers=_csv(a.ciphers),
                              implementations=impls, toolchains=_csv(a.toolchains), targets=_csv(a.targets),
                              progress=not a.no_progress)
            run_dir = run_matrix(lab, opts, a.matrix)
            print(f"results: {run_dir}")
            if not a.no_report:
                from .report import build_report

                print(f"report: {build_report(lab, [run_dir])}")
            return 0
        if a.cmd == "report":
            from .report import build_report

            print(f"report: {build_report(lab, a.runs or None)}")
            return 0
        if a.cmd == "schema":
            from .config import export_schemas

            for path in export_schemas(a.out):
                print(path)
            return 0
        if a.cmd == "catalogue":
            from . import native

            print("| cipher | implementation | block | keys | table bytes | key-schedule bytes | constant time | summary |")
            print("| --- | --- | --- | --- | --- | --- | --- | --- |")
            for c in lab.ciphers():
                for strat, impl in c.spec.implementations.items():
                    try:
                        n = native.load(c.name, strat)
                        tb, ks = f"{n.table_bytes:,}", f"{n.key_schedule_bytes:,}"
                    except native.NativeError:
                        tb = ks = "n/a here"
                    ct = {True: "yes", False: "no", None: "?"}[impl.constant_time]
                    mark = " (default)" if impl.default else ""
                    print(f"| {c.spec.display} | {strat}{mark} | {c.spec.block_bits} | "
                          f"{'/'.join(map(str, c.spec.key_bits))} | {tb} | {ks} | {ct} | {impl.summary} |")
            return 0
        if a.cmd == "list":
            print("ciphers:", ", ".join(
                f"{c.name}[{','.join(c.spec.implementations)}]" for c in lab.ciphers()))
            print("toolchains:", ", ".join(lab.toolchain_names()))
            print("targets:", ", ".join(lab.target_names()))
            print("profiles:", ", ".join(lab.profile_names()))
            return 0
    except (ConfigError, FileNotFoundError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`./cipherlab docs`: docs/benchmarks.md from the stored results, then the MkDocs site of docs/ (mkdocs.yml) into
site/, strict: a warning (a dead link, a page left out of the navigation) fails the build."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ..errors import UserError
from . import benchmarks


def build(root: Path, site_dir: Path, say=print, write_benchmarks: bool = True) -> int:
    """Writes docs/benchmarks.md (unless told not to), builds the site; returns mkdocs' exit code (its warnings
    are printed)."""
    try:
        import mkdocs  # noqa: F401
    except ImportError:
        raise UserError("mkdocs is not installed: `./cipherlab docs` installs it (pip install -e '.[docs]')") from None
    if write_benchmarks:
        benchmarks.write(root, say=say)
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(root / "mkdocs.yml"),
           "--site-dir", str(site_dir)]
    r = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    problems = [ln for ln in (r.stdout + r.stderr).splitlines() if ln.startswith(("WARNING", "ERROR", "Aborted"))]
    for ln in problems:
        say(ln)
    if r.returncode == 0:
        say(f"site: {site_dir / 'index.html'}")
    return r.returncode

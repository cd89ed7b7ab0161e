"""invoke test: the test suite (real compilers, real vectors; see docs/testing.md)."""

import sys

from invoke import task


@task(help={"args": "extra pytest arguments, e.g. '-k kat -x'"})
def test(c, args: str = ""):
    """Run the test suite (real compilers, real vectors)."""
    c.run(f"{sys.executable} -m pytest {args}", pty=False)

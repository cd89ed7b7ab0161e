"""invoke test: the test suite (real compilers, real vectors; see the README); test.repeat: it N times."""

import sys

from invoke import task

from ._factory import collection as _collection


@task(help={"args": "extra pytest arguments, e.g. '-k kat -x'"})
def test(c, args: str = ""):
    """Run the test suite (real compilers, real vectors)."""
    c.run(f"{sys.executable} -m pytest {args}", pty=False)


collection = _collection("test")
collection.add_task(test, default=True)

"""invoke compilers.install: install compiler versions of toolchains/versions.yaml (the work is in lab.compilers)."""

from ._factory import collection as _collection

collection = _collection("compilers")

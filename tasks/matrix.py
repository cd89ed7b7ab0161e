"""invoke matrix.run: build, verify and measure every cell of the matrix (lab.run)."""

from ._factory import collection as _collection

collection = _collection("matrix", default="run")

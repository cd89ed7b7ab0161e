"""invoke docs: the documentation site (docs.build, the default), docs/benchmarks.md and the cipher READMEs'
constant-time tables from stored results (lab.docsite)."""

from ._factory import collection as _collection

collection = _collection("docs", default="build")

"""invoke bench.*: benchmarks that print figures and append them to bench/results/<name>.jsonl (lab.bench)."""

from ._factory import collection as _collection

collection = _collection("bench")

"""invoke bench.*: benchmarks that print figures and store JSON (lab.bench)."""

from ._factory import collection as _collection

collection = _collection("bench")

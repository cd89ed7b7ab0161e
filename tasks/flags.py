"""invoke flags.search: the fastest flag sets of a toolchain, with statistical ties (lab.flags)."""

from ._factory import collection as _collection

collection = _collection("flags")

"""invoke java.*: the Java cells (lab/javarun.py)."""

from ._factory import collection as _collection

collection = _collection("java")

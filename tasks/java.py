"""invoke java.*: matrix.run's preset for the Java cells (lab/commands.py java_run)."""

from ._factory import collection as _collection

collection = _collection("java")

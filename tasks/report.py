"""invoke report, invoke compare, and the other top-level commands (verify, list, catalogue, schema, ...)."""

from ._factory import top_level

tasks = top_level()

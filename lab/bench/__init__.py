"""Benchmarks: they print figures and store them as JSON under bench/results/ (never timed tests).

* repeatability — the same matrix twice: how far apart are the numbers (issue goals: p90 <= 3 %)?
* faults        — the fault scenarios of the test suite, as a table: fault, what the lab did, cells lost.
* peers         — our implementations against the peer libraries, inside the harness.
* scale         — the container matrix serially and on a two-worker Dask LocalCluster.
* mutation      — the mutation score of the modules that compute numbers.
"""

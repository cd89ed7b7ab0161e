"""invoke tasks: thin, one module per collection, all made from lab.cli's command table (./cipherlab TASK runs
them after its set-up; `./cipherlab --list` lists them, docs/running.md describes them).

    matrix.run [--ciphers rijndael,rc6] [--toolchains gcc-O3] [--preset compilers] [--resume [RUN_ID]] ...
    report [--runs RUN_ID] [--compare RUN_ID]
    compare RUN_A [--run-b RUN_B] [--by toolchain]
    verify CIPHER VECTORS [--impl ours|peers|all|NAME] [--target sparc64]
    images.build | images.host-plugin
    compilers.install gcc-11,clang-16 [--dry-run]     (versions from toolchains/versions.yaml)
    bench.repeatability | bench.faults | bench.peers | bench.scale | bench.mutation | bench.java | ...
    java.run --ciphers rc6 --toolchains openjdk17-c2,openjdk17-int   (Java cells: matrix.run's preset)
    flags.search --space flags/gcc-six.yaml --ciphers serpent,mars
    docs | docs.benchmarks | docs.ct-tables        (the documentation site, pages from stored results)
    test.repeat --runs 10 --load --files tests/test_bisect.py   (failures per test)
    test | schema | list | catalogue | checksums | validate

No work happens at import: the lab's data files are read when a task runs.
"""

from invoke import Collection

from . import bench, compilers, docs, flags, images, java, matrix, report, test

ns = Collection(matrix.collection, images.collection, compilers.collection, bench.collection, flags.collection,
                java.collection, docs.collection, test.collection,
                *report.tasks)

"""invoke tasks: thin, one module per collection, all made from lab.cli's command table.

    invoke matrix.run [--ciphers rijndael,rc6] [--toolchains gcc-O3] [--profile nist] [--resume [RUN_ID]] ...
    invoke report [--runs RUN_ID] [--compare RUN_ID]
    invoke compare RUN_A [RUN_B] [--by toolchain]
    invoke verify CIPHER VECTORS [--impl ours|peers|all|NAME] [--target sparc64]
    invoke images.build | images.host-plugin
    invoke compilers.install gcc-11,clang-16 [--dry-run]     (versions from toolchains/versions.yaml)
    invoke bench.repeatability | bench.faults | bench.peers | bench.scale | bench.mutation | bench.java
    invoke java.run --ciphers rc6 --toolchains openjdk17-c2,openjdk17-int   (Java cells: matrix.run's preset)
    invoke flags.search --space flags/gcc-six.yaml --ciphers serpent,mars
    invoke test.repeat --runs 10 --load --files tests/test_bisect.py   (failures per test, lab/bench/testrepeat.py)
    invoke test | schema | list | catalogue | checksums | validate

No work happens at import: the lab's data files are read when a task runs.
"""

from invoke import Collection

from . import bench, compilers, flags, images, java, matrix, report, test

ns = Collection(matrix.collection, images.collection, compilers.collection, bench.collection, flags.collection,
                java.collection, test.collection,
                *report.tasks)

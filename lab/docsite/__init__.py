"""The documentation made from data: the MkDocs site of docs/ (`./cipherlab docs`), docs/benchmarks.md from the
stored benchmark results (`./cipherlab docs.benchmarks`) and the cipher READMEs' constant-time tables from the
stored constant-time checks (`./cipherlab docs.ct-tables`)."""

"""Published efficiency figures of 1999-2002, as tidy DataFrames.

The CSVs next to this module transcribe the tables of NIST's round-1 ANSI C
study (Bassham 1999), NIST's round-1 slides, Gladman's round-2 page, Lipmaa's
SC2000 paper and Sterbenz & Lipp's Java paper. SOURCES.md says which table of
which document each file comes from, what each column means, and every
oddity of the printed text; ``lab/report/reference/extract.py`` regenerates the CSVs from the text.

Every loader returns one row per printed number. ``value`` is a float (NaN
where the paper prints no number, ``inf`` where it prints "Inf"); ``printed``
keeps the cell exactly as printed; ``cipher`` is our cipher folder name and
``variant`` is "64" for the DFC-64 and HPC-64 rows ("" otherwise).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent

#: where the provenance of every file is written down
SOURCES_NOTE = "lab/report/reference/SOURCES.md"

#: the 15 AES round-1 candidates, by cipher folder name
ROUND1 = ("cast256", "crypton", "deal", "dfc", "e2", "frog", "hpc", "loki97", "magenta",
          "mars", "rc6", "rijndael", "saferplus", "serpent", "twofish")

#: loader name -> CSV file
FILES = {
    "timing": "nist1999_timing.csv",
    "cycles": "nist1999_cycles.csv",
    "nist_tables": "nist1999_tables.csv",
    "slides_reference": "slides_reference.csv",
    "slides_survey": "slides_survey.csv",
    "slides_platform_average": "slides_platform_average.csv",
    "slides_java": "slides_java.csv",
    "gladman": "gladman_cycles.csv",
    "lipmaa": "lipmaa_sc2000.csv",
    "lipmaa_sbox": "lipmaa_sbox_strategies.csv",
    "sterbenz": "sterbenz_java.csv",
}

_FLOAT = ("value",)
_INT = ("mhz", "row", "key_size", "n_blocks", "slide", "rank", "rank_dec", "value_dec", "opt_level",
        "lookups_per_sm", "sbox_entries")
_BOOL = ("tied",)


def load(name: str) -> pd.DataFrame:
    """The reference table ``name`` (a key of FILES, or a CSV file name in this folder)."""
    path = HERE / FILES.get(name, name)
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    for col in df.columns:
        if col in _FLOAT:
            df[col] = pd.to_numeric(df[col].replace("", None), errors="raise").astype(float)
        elif col in _INT:
            df[col] = pd.to_numeric(df[col].replace("", None), errors="raise").astype("Int64")
        elif col in _BOOL:
            df[col] = df[col] == "true"
    return df


def timing() -> pd.DataFrame:
    """NIST 1999 Appendix A.1: Kbit/s and keys/s, 11 compiler/platform tables, keys of 128/192/256 bits."""
    return load("timing")


def cycles() -> pd.DataFrame:
    """NIST 1999 Appendix A.2: clock cycles, 6 compiler/platform tables, 128-bit key."""
    return load("cycles")


def nist_tables() -> pd.DataFrame:
    """One row per Appendix A table: id, verbatim heading, platform, compiler, algorithms in printed order."""
    return load("nist_tables")


def slides_reference() -> pd.DataFrame:
    """NIST round-1 slides, slide 12: cycles on the reference configuration (Borland, 200 MHz Pentium Pro)."""
    return load("slides_reference")


def slides_survey() -> pd.DataFrame:
    """NIST round-1 slides 15-17: best NIST cycles beside Gladman's and Schneier's, with ranks."""
    return load("slides_survey")


def slides_platform_average() -> pd.DataFrame:
    """NIST round-1 slides, slide 21: encryption Kbit/s averaged over compilers, Pentium Pro and UltraSPARC."""
    return load("slides_platform_average")


def slides_java() -> pd.DataFrame:
    """NIST round-1 slides, slide 29: Java speeds and memory of the 15 candidates (and DEAL's DES)."""
    return load("slides_java")


def gladman() -> pd.DataFrame:
    """Gladman's AES round-2 page: cycles (and Mb/s at 200 MHz) of the five finalists and DES, C and C++."""
    return load("gladman")


def lipmaa() -> pd.DataFrame:
    """Lipmaa 2002, Tables 1-3: cycles per block of Rijndael, RC6 and SC2000 on Pentium III and Athlon."""
    return load("lipmaa")


def lipmaa_sbox() -> pd.DataFrame:
    """Lipmaa 2002, Fig. 1: SC2000 S-box strategies, look-ups per SM function and S-box entries."""
    return load("lipmaa_sbox")


def sterbenz() -> pd.DataFrame:
    """Sterbenz & Lipp: Java speeds (Appendix) and memory (Table 1) of the finalists, DES, 3DES and IDEA."""
    return load("sterbenz")


__all__ = ["FILES", "ROUND1", "load", *FILES]

"""Regenerate the reference CSVs (lab/report/reference/) from the stored text of the papers.

    python -m lab.report.reference.extract [--papers DIR] [--out DIR]

A development tool, kept beside the data files it regenerates; nothing of the lab imports it.

The papers are read from ``shared/papers`` beside the checkout (see SOURCES.md
for which table of which document feeds which CSV). Facts that the table text
does not carry (platform of a table, what a column means) are written here by
hand, next to the table they describe. Every value is kept as printed in the
``printed`` column; ``value`` is the number in it ("inf" for "Inf", empty when
the paper prints no number).

The CSVs in lab/report/reference/ are this script's output, hand-checked against the
papers; rerunning it must reproduce them byte for byte (tests/test_reference.py
checks that when the papers are available).
"""

from __future__ import annotations

import argparse
import csv
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
HERE = ROOT / "lab" / "report" / "reference"  # where the CSVs live
DEFAULT_PAPERS = ROOT.parent / "shared" / "papers"

NIST = "nist-1999-ansi-c-efficiency-round1.txt"
SLIDES = "nist-round1-efficiency-slides.txt"
GLADMAN = "gladman-aes-round2-implementation.txt"
LIPMAA = "lipmaa-2002-fast-sc2000.txt"
STERBENZ = "sterbenz-lipp-aes-candidates-java.txt"

# paper spelling (upper-cased) -> (cipher folder, variant)
_CIPHER = {
    "CAST-256": ("cast256", ""), "CRYPTON": ("crypton", ""), "DEAL": ("deal", ""),
    "DFC": ("dfc", ""), "DFC-64": ("dfc", "64"), "E2": ("e2", ""), "FROG": ("frog", ""),
    "HPC": ("hpc", ""), "HPC-64": ("hpc", "64"), "LOKI97": ("loki97", ""),
    "MAGENTA": ("magenta", ""), "MARS": ("mars", ""), "RC6": ("rc6", ""),
    "RIJNDAEL": ("rijndael", ""), "SAFER+": ("saferplus", ""), "SERPENT": ("serpent", ""),
    "TWOFISH": ("twofish", ""),
    # not round-1 candidates, but cipher folders of ours
    "DES": ("des", ""), "TRIPLE DES": ("3des", ""), "IDEA": ("idea", ""), "SC2000": ("sc2000", ""),
}
# OCR misreadings of algorithm names: printed -> meant
_OCR_NAMES = {"LOK197": "LOKI97"}


def cipher_of(printed: str) -> tuple[str, str, str, str]:
    """(algorithm, cipher, variant, note) for an algorithm name as printed."""
    name = printed.strip()
    note = ""
    if name in _OCR_NAMES:
        note = f"algorithm printed '{name}' (OCR)"
        name = _OCR_NAMES[name]
    cipher, variant = _CIPHER[name.upper()]
    return name, cipher, variant, note


_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


def number(token: str) -> str:
    """The number in a printed cell as text ('' when there is none, 'inf' for Inf)."""
    t = token.strip()
    t = re.sub(r"\^\{\+*\}$", "", t)         # Lipmaa's optimisation marks 226^{+++}
    t = re.sub(r"\s*[¹²*]+$", "", t)          # footnote marks 1523 ², 4000*
    if t.lower() == "inf":
        return "inf"
    if _NUMBER.match(t):
        return t
    return ""


def join_notes(*notes: str) -> str:
    return "; ".join(n for n in notes if n)


def _lines(papers: Path, name: str) -> list[str]:
    return (papers / name).read_text(encoding="utf-8").splitlines()


def _tab_table(lines: list[str], header_index: int) -> list[list[str]]:
    """Tab-separated data rows after a header line, up to the first blank line."""
    rows = []
    for line in lines[header_index + 1:]:
        if not line.strip():
            break
        rows.append(line.split("\t"))
    return rows


def _md_table(lines: list[str], header_startswith: str) -> list[list[str]]:
    """Rows of the markdown table whose header line starts with header_startswith."""
    start = next(i for i, l in enumerate(lines) if l.startswith(header_startswith))
    rows = []
    for line in lines[start + 1:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if all(set(c) <= set("-") for c in cells):
            continue
        rows.append(cells)
    return rows


# --------------------------------------------------------------------------------------------
# NIST 1999 (Bassham), Appendix A.1 and A.2

PLATFORMS = {
    # platform: (cpu, mhz, os, memory/cache as in Table 1)
    "ppro200-win95": ("Pentium Pro", 200, "Windows95", "64MB RAM"),
    "ppro200-linux": ("Pentium Pro", 200, "Linux", "64MB RAM"),
    "pii450-win98": ("Pentium II", 450, "Windows98", "128MB RAM"),
    "piii500-win98": ("Pentium III", 500, "Windows98", "128MB RAM"),
    "r10000-250-irix64": ("R10000", 250, "IRIX64 6.5.2", "2MB cache, 512MB RAM"),
    "ultrasparc2-300-solaris": ("UltraSPARC-II", 300, "Solaris 2.7", "2MB cache, 128MB RAM"),
    "ultrasparc2-360x2-solaris": ("UltraSPARC-II (2 CPUs)", 360, "Solaris 2.7", "4MB cache, 256MB RAM"),
}
BORLAND, VISUALC = "Borland C++ 5.01", "Visual C 6.0"
DJGPP = "DJGPP (pgcc 2.90.23 980102, egcs-1.0.1)"
GCC, WORKSHOP = "GCC 2.8.1", "Sun Workshop Compiler C 4.2"

# A.1 tables in the order printed: (table id, words the heading must contain, platform, compiler, note)
A1_TABLES = [
    ("A.1-1", ("Borland", "200 MHz Pentium Pro"), "ppro200-win95", BORLAND, ""),
    ("A.1-2", ("Borland", "450 MHz Pentium II"), "pii450-win98", BORLAND, ""),
    ("A.1-3", ("Visual C", "200 MHz Pentium Pro"), "ppro200-win95", VISUALC, ""),
    ("A.1-4", ("Visual C", "450 MHz Pentium II"), "pii450-win98", VISUALC, ""),
    ("A.1-5", ("DJGPP", "200 MHz Pentium Pro"), "ppro200-win95", DJGPP, ""),
    ("A.1-6", ("DJGPP", "450 MHz Pentium II"), "pii450-win98", DJGPP, ""),
    ("A.1-7", ("Linux", "200 MHz Pentium Pro"), "ppro200-linux", GCC,
     "heading says Windows95; OS and compiler taken from Table 1 (Linux, GCC 2.8.1)"),
    ("A.1-8", ("GCC 2.8.1", "SGI 250 MHz R10000"), "r10000-250-irix64", GCC, ""),
    ("A.1-9", ("GCC 2.8.1", "300 MHz UltraSPARC-II"), "ultrasparc2-300-solaris", GCC, ""),
    ("A.1-10", ("Workshop", "300 MHz UltraSPARC-II"), "ultrasparc2-300-solaris", WORKSHOP, ""),
    ("A.1-11", ("Workshop", "2*360 MHz UltraSPARC-II"), "ultrasparc2-360x2-solaris", WORKSHOP, ""),
]
A2_TABLES = [
    ("A.2-1", ("Borland", "200 MHz Pentium Pro"), "ppro200-win95", BORLAND, ""),
    ("A.2-2", ("Visual C", "200 MHz Pentium Pro"), "ppro200-win95", VISUALC, ""),
    ("A.2-3", ("Borland", "450 MHz Pentium II"), "pii450-win98", BORLAND, ""),
    ("A.2-4", ("Visual C", "450 MHz Pentium II"), "pii450-win98", VISUALC, ""),
    ("A.2-5", ("Borland", "500 MHz Pentium III"), "piii500-win98", BORLAND, ""),
    ("A.2-6", ("Visual C", "500 MHz Pentium III"), "piii500-win98", VISUALC, ""),
]

A1_COLUMNS = {  # column heading -> (metric, key size, unit)
    f"{op}{k}": (metric, k, unit)
    for k in (128, 192, 256)
    for op, metric, unit in (("Enc", "encrypt_speed", "Kbit/s"), ("Dec", "decrypt_speed", "Kbit/s"),
                             ("Key", "key_setup_speed", "keys/s"))
}
A2_COLUMNS = {  # column heading -> (metric, n_blocks)
    "EKey": ("ekey", ""), "DKey": ("dkey", ""), "Init": ("init", ""),
    **{f"{op}{sep}{n}": (metric, str(n))
       for n in (1, 16, 128, 1024, 32768) for sep in ("", "-")
       for op, metric in (("Encrypt", "encrypt_per_block"), ("Decrypt", "decrypt_per_block"))},
}

TIMING_FIELDS = ["source", "table", "platform", "cpu", "mhz", "os", "compiler", "algorithm", "cipher",
                 "variant", "row", "key_size", "metric", "value", "unit", "printed", "note"]
CYCLES_FIELDS = ["source", "table", "platform", "cpu", "mhz", "os", "compiler", "algorithm", "cipher",
                 "variant", "row", "key_size", "metric", "n_blocks", "value", "unit", "printed", "note"]
TABLES_FIELDS = ["source", "section", "table", "heading", "platform", "cpu", "mhz", "os", "memory",
                 "compiler", "algorithms", "note"]

# cells that look wrong, kept as printed: (table, algorithm, column) -> note
SUSPECT = {
    ("A.2-6", "DEAL", "EKey"): "probably a dropped digit: the other Visual C tables have about 28,000",
    ("A.2-6", "DEAL", "DKey"): "probably a dropped digit: the other Visual C tables have about 28,000",
}


def _headings(lines: list[str], header_lines: list[int]) -> list[str]:
    """The heading above each table header: the non-blank lines after the previous blank line."""
    out = []
    for h in header_lines:
        i = h - 1
        while not lines[i].strip():
            i -= 1
        block = []
        while lines[i].strip():
            block.insert(0, lines[i].strip())
            i -= 1
        out.append(" ".join(block))
    return out


def nist(papers: Path) -> tuple[list[dict], list[dict], list[dict]]:
    lines = _lines(papers, NIST)
    a1_headers = [i for i, l in enumerate(lines) if l.startswith("Algorithm\tEnc128")]
    a2_first = [i for i, l in enumerate(lines) if l.startswith("Algorithm\tEKey")]
    a2_second = [i for i, l in enumerate(lines) if l.startswith("Algorithm\tEncrypt-128")]
    assert len(a1_headers) == len(A1_TABLES) and len(a2_first) == len(a2_second) == len(A2_TABLES)
    timing, tables = _nist_a1(lines, a1_headers)
    cycles, a2_tables = _nist_a2(lines, a2_first, a2_second)
    return timing, cycles, tables + a2_tables


def _nist_a1(lines: list[str], a1_headers: list[int]) -> tuple[list[dict], list[dict]]:
    """Appendix A.1: speeds (Kbit/s, keys/s) per platform and compiler, and each table's description."""
    timing, tables = [], []
    for (table, words, platform, compiler, tnote), h, heading in zip(
            A1_TABLES, a1_headers, _headings(lines, a1_headers)):
        assert all(w in heading for w in words), (table, heading)
        cpu, mhz, os_, memory = PLATFORMS[platform]
        columns = lines[h].split("\t")[1:]
        algs = []
        for row, cells in enumerate(_tab_table(lines, h), start=1):
            assert len(cells) == len(columns) + 1, cells
            algorithm, cipher, variant, anote = cipher_of(cells[0])
            algs.append(algorithm)
            for col, printed in zip(columns, cells[1:]):
                metric, key_size, unit = A1_COLUMNS[col]
                value = number(printed)
                note = anote
                if value == "inf":
                    note = join_notes(note, "printed 'Inf'")
                elif "." not in printed:
                    note = join_notes(note, "printed without a decimal place")
                timing.append(dict(source=NIST, table=table, platform=platform, cpu=cpu, mhz=mhz, os=os_,
                                   compiler=compiler, algorithm=algorithm, cipher=cipher, variant=variant,
                                   row=row, key_size=key_size, metric=metric, value=value, unit=unit,
                                   printed=printed, note=note))
        tables.append(dict(source=NIST, section="A.1", table=table, heading=heading, platform=platform,
                           cpu=cpu, mhz=mhz, os=os_, memory=memory, compiler=compiler,
                           algorithms=" ".join(algs), note=tnote))
    return timing, tables


def _nist_a2(lines: list[str], a2_first: list[int], a2_second: list[int]) -> tuple[list[dict], list[dict]]:
    """Appendix A.2: cycles per call and per block, two tables a platform in the same algorithm order."""
    cycles, tables = [], []
    headings = _headings(lines, a2_first)
    for (table, words, platform, compiler, tnote), h1, h2, heading in zip(A2_TABLES, a2_first, a2_second, headings):
        assert all(w in heading for w in words), (table, heading)
        cpu, mhz, os_, memory = PLATFORMS[platform]
        orders = []
        for h in (h1, h2):
            columns = lines[h].split("\t")[1:]
            order = []
            for row, cells in enumerate(_tab_table(lines, h), start=1):
                assert len(cells) == len(columns) + 1, cells
                algorithm, cipher, variant, anote = cipher_of(cells[0])
                order.append(algorithm)
                for col, printed in zip(columns, cells[1:]):
                    metric, n_blocks = A2_COLUMNS[col]
                    note = join_notes(anote, SUSPECT.get((table, algorithm, col), ""))
                    if cipher == "frog" and n_blocks not in ("", "1"):
                        note = join_notes(note, "copy of the 1-block value (FROG takes one block per call; A.2 intro)")
                    cycles.append(dict(source=NIST, table=table, platform=platform, cpu=cpu, mhz=mhz, os=os_,
                                       compiler=compiler, algorithm=algorithm, cipher=cipher, variant=variant,
                                       row=row, key_size=128, metric=metric, n_blocks=n_blocks,
                                       value=number(printed), unit="clock_cycles", printed=printed, note=note))
            orders.append(order)
        assert orders[0] == orders[1], (table, orders)
        tables.append(dict(source=NIST, section="A.2", table=table, heading=heading, platform=platform,
                           cpu=cpu, mhz=mhz, os=os_, memory=memory, compiler=compiler,
                           algorithms=" ".join(orders[0]), note=tnote))
    return cycles, tables


# --------------------------------------------------------------------------------------------
# NIST Round 1 slides

SLIDE_REFERENCE_FIELDS = ["source", "slide", "platform", "cpu", "mhz", "os", "compiler", "algorithm", "cipher",
                          "variant", "row", "key_size", "metric", "value", "unit", "printed", "note"]
SLIDE_SURVEY_FIELDS = ["source", "slide", "operation", "survey", "compiler", "algorithm", "cipher", "variant",
                       "key_size", "value", "value_dec", "unit", "rank", "rank_dec", "tied", "printed_value",
                       "printed_rank", "note"]
SLIDE_AVERAGE_FIELDS = ["source", "slide", "platform", "cpu", "mhz", "os", "compilers", "algorithm", "cipher",
                        "variant", "key_size", "metric", "value", "unit", "rank", "printed", "printed_rank", "note"]
SLIDE_JAVA_FIELDS = ["source", "slide", "platform", "runtime", "algorithm", "cipher", "variant", "key_size",
                     "metric", "value", "unit", "printed", "note"]


def _rank(printed: str) -> tuple[str, str, str]:
    """(rank, rank in parentheses, tied) from '7t', '1 (1)', '(10-11)', '-'."""
    m = re.match(r"^(\d+)(t?)(?:\s*\((\d+)\))?$", printed.strip())
    if not m:
        return "", "", ""
    return m.group(1), m.group(3) or "", "true" if m.group(2) else ""


def slides(papers: Path) -> dict[str, list[dict]]:
    lines = _lines(papers, SLIDES)
    return {"reference": _slide12(lines), "survey": _slides15_17(lines), "average": _slide21(lines),
            "java": _slide29(lines)}


def _slide12(lines: list[str]) -> list[dict]:
    """Slide 12: "Reference" configuration results (cycles, 200 MHz Pentium Pro, Borland)."""
    out: dict[str, list[dict]] = {"reference": []}
    cols = [("ekey", "setKey(enc)"), ("dkey", "setKey(dec)"), ("encrypt_per_block", "Encrypt"),
            ("decrypt_per_block", "Decrypt")]
    for row, cells in enumerate(_md_table(lines, "| Algorithm | setKey(enc)"), start=1):
        algorithm, cipher, variant, anote = cipher_of(cells[0])
        for (metric, _), printed in zip(cols, cells[1:]):
            out["reference"].append(dict(
                source=SLIDES, slide=12, platform="ppro200-win95", cpu="Pentium Pro", mhz=200, os="Windows95",
                compiler="Borland C++ 5.0", algorithm=algorithm, cipher=cipher, variant=variant, row=row,
                key_size=128, metric=metric, value=number(printed), unit="clock_cycles", printed=printed,
                note=anote))
    return out["reference"]


def _slides15_17(lines: list[str]) -> list[dict]:
    """Slides 15-17: best NIST cycles vs [Gladman] and [Schneier]."""
    out: dict[str, list[dict]] = {"survey": []}
    surveys = {
        "key_setup": (15, "Key Setup (128-bits)", ["NIST", "Gladman", "Schneier"], 292),
        "encrypt": (16, "Encryption (128-bit key)", ["NIST", "Gladman", "Schneier"], 41),
        "decrypt": (17, "Decryption (128-bit key)", ["NIST", "Gladman"], 44),
    }
    compilers = {"NIST": "best of Borland C++ / MSVC 6.0", "Gladman": "MSVC++ 6.0", "Schneier": "various"}
    for operation, (slide, title, names, null_cycles) in surveys.items():
        start = lines.index(title)
        sub = lines[start:]
        rows = _md_table(sub, "| Algorithm | NIST")
        assert rows[0][0] == "", rows[0]            # the "Clock Cycles | Rank" sub-header
        for cells in rows[1:]:
            algorithm, cipher, variant, anote = cipher_of(cells[0])
            for k, survey in enumerate(names):
                pv, pr = cells[1 + 2 * k], cells[2 + 2 * k]
                m = re.match(r"^(\d+)\*?(?:\s*\((\d+)\))?\s*([¹²]?)$", pv)
                assert m, pv
                rank, rank_dec, tied = _rank(pr)
                note = anote
                if "²" in pv:
                    note = join_notes(note, "footnote: BC results (fewer cycles than MSVC)")
                if "*" in pv:
                    note = join_notes(note, "printed with '*' (the slide does not explain it)")
                if tied:
                    note = join_notes(note, "rank printed with 't' (tie)")
                out["survey"].append(dict(
                    source=SLIDES, slide=slide, operation=operation, survey=survey, compiler=compilers[survey],
                    algorithm=algorithm, cipher=cipher, variant=variant, key_size=128, value=m.group(1),
                    value_dec=m.group(2) or "", unit="clock_cycles", rank=rank, rank_dec=rank_dec, tied=tied,
                    printed_value=pv, printed_rank=pr, note=note))
        # footnote 1 of the NIST column: the API call with a NULL cipher
        call = {"key_setup": "makeKey", "encrypt": "blockEncrypt", "decrypt": "blockDecrypt"}[operation]
        footnote = next(l for l in sub if l.startswith(f"¹ {call} (NULL Cipher)"))
        assert f"= {null_cycles} clock cycles" in footnote, footnote
        out["survey"].append(dict(
            source=SLIDES, slide=slide, operation=operation, survey="NIST", compiler=compilers["NIST"],
            algorithm="NULL cipher", cipher="", variant="", key_size=128, value=str(null_cycles), value_dec="",
            unit="clock_cycles", rank="", rank_dec="", tied="", printed_value=str(null_cycles), printed_rank="",
            note=f"footnote 1: {call}() with a NULL cipher (API overhead)"))
    return out["survey"]


def _slide21(lines: list[str]) -> list[dict]:
    """Slide 21: average encryption speed across compilers."""
    out: dict[str, list[dict]] = {"average": []}
    platforms = [("ppro200-win95", "Pentium Pro", 200, "Windows95", "Borland C++ 5.01, Visual C 6.0, DJGPP"),
                 ("ultrasparc2-300-solaris", "UltraSPARC-II", 300, "Solaris 2.7",
                  "GCC 2.8.1, Sun Workshop Compiler C 4.2")]
    for cells in _md_table(lines, "| Algorithm | Pentium Pro 200MHz, Win95")[1:]:
        algorithm, cipher, variant, anote = cipher_of(re.sub(r"\s*²$", "", cells[0]))
        for k, (platform, cpu, mhz, os_, compilers_) in enumerate(platforms):
            pv, pr = cells[1 + 2 * k], cells[2 + 2 * k]
            rank, _, _ = _rank(pr)
            note = anote
            if variant:
                note = join_notes(note, "footnote 2: 64-bit math enabled (long long, non-ANSI C)")
            if pv.startswith("-"):
                note = join_notes(note, "not measured" + (": footnote 1, compiled but could not execute"
                                                          if "¹" in pv else ""))
            if pr.startswith("("):
                note = join_notes(note, "rank printed in parentheses: where it would fall among the 15")
            out["average"].append(dict(
                source=SLIDES, slide=21, platform=platform, cpu=cpu, mhz=mhz, os=os_, compilers=compilers_,
                algorithm=algorithm, cipher=cipher, variant=variant, key_size=128, metric="encrypt_speed",
                value=number(pv), unit="Kbit/s", rank=rank, printed=pv, printed_rank=pr, note=note))
    return out["average"]


def _slide29(lines: list[str]) -> list[dict]:
    """Slide 29: summary of Java values (reference platform, JDK 1.1.6 with JIT)."""
    out: dict[str, list[dict]] = {"java": []}
    java_cols = [("key_setup_speed", 128, "Kbit/s", "unit as printed (makeKey in Kb/sec)"),
                 ("encrypt_speed", 128, "Kbit/s", ""), ("decrypt_speed", 128, "Kbit/s", ""),
                 ("class_file_bytes", "", "bytes", "static memory: class file size"),
                 ("makekey_heap_bytes", "", "bytes", "dynamic heap usage of makeKey"),
                 ("cipher_heap_bytes", "", "bytes", "dynamic heap usage of the cipher")]
    for cells in _md_table(lines, "| Algorithm | makeKey 128"):
        if cells[0] == "DES":
            algorithm, cipher, variant, anote = "DES", "des", "", "the Java DES submitted with DEAL"
        else:
            algorithm, cipher, variant, anote = cipher_of(cells[0])
        for (metric, key_size, unit, cnote), printed in zip(java_cols, cells[1:]):
            out["java"].append(dict(
                source=SLIDES, slide=29, platform="ppro200-win95", runtime="JDK 1.1.6 with JIT",
                algorithm=algorithm, cipher=cipher, variant=variant, key_size=key_size, metric=metric,
                value=number(printed), unit=unit, printed=printed, note=join_notes(anote, cnote)))
    return out["java"]


# --------------------------------------------------------------------------------------------
# Gladman, AES second round implementation experience (web page, 2000)

GLADMAN_FIELDS = ["source", "table", "algorithm", "cipher", "variant", "language", "compiler", "key_size",
                  "metric", "value", "unit", "printed", "note"]


def gladman(papers: Path) -> list[dict]:
    lines = _lines(papers, GLADMAN)
    head = lines.index("Speed Results")
    algs = lines[head + 2].split()[2:]
    assert algs == ["MARS", "RC6", "RIJNDAEL", "SERPENT", "TWOFISH", "DES"], algs
    langs = lines[head + 3].split()
    assert langs == ["C", "C++"] * 5 + ["C"], langs
    columns = [(alg, lang) for alg in algs for lang in (["C"] if alg == "DES" else ["C", "C++"])]
    out = []
    key_size = None
    for line in lines[head + 5:]:
        if not line.strip():
            break
        m = re.match(r"^(128|192|256) bits", line)
        if m:
            key_size = int(m.group(1))
            continue
        op, rest = line.split(" ", 1)
        if op == "key_set":
            tokens = re.findall(r"\d+ / \d+|\d+", rest)
            assert len(tokens) == len(columns), (line, tokens)
            cells = [[("key_setup", t)] if "/" not in t else
                     [("ekey", t.split(" / ")[0]), ("dkey", t.split(" / ")[1])] for t in tokens]
        else:
            tokens = rest.split()
            assert len(tokens) == 2 * len(columns), line
            assert op in ("encrypt", "decrypt"), line
            cells = [[(f"{op}_per_block", tokens[2 * i]), (f"{op}_speed", tokens[2 * i + 1])]
                     for i in range(len(columns))]
        for (alg, lang), pairs in zip(columns, cells):
            algorithm, cipher, variant, anote = cipher_of(alg)
            for metric, printed in pairs:
                unit = "Mbit/s" if metric.endswith("_speed") else "clock_cycles"
                note = anote
                if metric.endswith("_speed"):
                    note = join_notes(note, "Mb/s for the 200 MHz reference platform")
                if metric in ("ekey", "dkey"):
                    note = join_notes(note, "printed as an 'encryption / decryption' pair")
                if metric == "dkey":
                    note = join_notes(note, "decryption figure also applies when both directions are needed")
                if alg == "DES":
                    note = join_notes(note, "DES: 56-bit key, one key schedule for every key_size row")
                    if op != "key_set" and key_size != 128:
                        note = join_notes(note, "cycles grow with the row's key size while Mb/s stays 30.5 "
                                                "(inconsistent as printed)")
                out.append(dict(source=GLADMAN, table="Speed Results", algorithm=algorithm, cipher=cipher,
                                variant=variant, language=lang, compiler="Visual C++ 6", key_size=key_size,
                                metric=metric, value=number(printed), unit=unit, printed=printed, note=note))
    return out


# --------------------------------------------------------------------------------------------
# Lipmaa, Fast software implementations of SC2000 (2002)

LIPMAA_FIELDS = ["source", "table", "cpu", "mhz", "os", "compiler", "language", "algorithm", "cipher",
                 "variant", "strategy", "implementation", "metric", "value", "unit", "opt_level", "printed", "note"]
LIPMAA_SBOX_FIELDS = ["source", "table", "strategy", "implementation", "lookups_per_sm", "sbox_entries",
                      "printed", "note"]

# S-box strategy as the paper writes it -> our implementation name in c_src/ciphers/sc2000
SC2000_IMPL = {"(6, 5, 5, 5, 5, 6)": "sbox6_5_5_5_5_6", "(6, 10, 10, 6)": "sbox6_10_10_6",
               "(11, 10, 11)": "sbox11_10_11", "(16, 16)": "sbox16_16"}
_PIII = ("Pentium III Mobile", 1200, "Linux 2.4.18")
_ATHLON = ("Athlon", 1400, "Linux 2.4.17")


def _lipmaa_block(lines: list[str], header: str, n: int) -> list[list[str]]:
    """The n data lines after the table header line starting with header (sub-header lines skipped)."""
    start = next(i for i, l in enumerate(lines) if l.startswith(header))
    rows = [l.split("\t") for l in lines[start + 1:] if l.strip()]
    rows = [r for r in rows if any(re.match(r"^\d", c) for c in r)][:n]
    assert len(rows) == n
    return rows


def lipmaa(papers: Path) -> tuple[list[dict], list[dict]]:
    lines = _lines(papers, LIPMAA)
    out = []

    def add(table, cpu, compiler, language, alg, strategy, metric, printed, note=""):
        cpu_name, mhz, os_ = cpu
        algorithm, cipher, variant, anote = cipher_of(alg)
        value = number(printed)
        plus = re.search(r"\^\{(\+*)\}", printed)
        if printed == "Enc":
            note = join_notes(note, "printed 'Enc': the decryption key schedule is the encryption one")
        if printed == "N/A":
            note = join_notes(note, "printed 'N/A': not implemented")
        out.append(dict(source=LIPMAA, table=table, cpu=cpu_name, mhz=mhz, os=os_, compiler=compiler,
                        language=language, algorithm=algorithm, cipher=cipher, variant=variant, strategy=strategy,
                        implementation=SC2000_IMPL.get(strategy, ""), metric=metric, value=value,
                        unit="clock_cycles", opt_level=len(plus.group(1)) if plus else "",
                        printed=printed, note=join_notes(anote, note)))

    # Table 1: Rijndael, SC2000, RC6 on the Pentium III
    t1 = _lipmaa_block(lines, "Cipher\tCompiler\tEncr.", 8)
    alg = None
    for cells in t1:
        alg = cells[0] or alg
        compiler = cells[1]
        language = "assembly" if compiler == "assembly" else "C"
        compiler = "" if compiler == "assembly" else compiler
        for metric, printed in zip(("encrypt_per_block", "decrypt_per_block", "ekey", "dkey"), cells[2:6]):
            add("Table 1", _PIII, compiler, language, alg, "", metric, printed)

    _lipmaa_sc2000(lines, add)
    return out, _lipmaa_sboxes(lines)


def _lipmaa_sc2000(lines: list[str], add) -> None:
    """Tables 2 and 3: SC2000's earlier implementations [Shi02] and this paper's four S-box strategies."""
    # Table 2: previous SC2000 implementations [Shi02], VC++ 6.0 under Windows
    strategies2 = ["(6, 10, 10, 6)", "(6, 10, 10, 6)", "(11, 10, 11)", "(11, 10, 11)"] * 2
    t2 = _lipmaa_block(lines, "Processor\tStrategy\tLanguage", 8)
    for i, cells in enumerate(t2):
        cpu = ("Pentium III (Katmai)", "", "Windows") if i < 4 else ("Athlon", "", "Windows")
        assert cells[1] in ("", strategies2[i]), (cells, strategies2[i])
        language = cells[2]
        note = "by Shimoyama [Shi02]; clock not given"
        if language == "\u0421":      # Cyrillic capital ES, an OCR reading of "C"
            language = "C"
            note = join_notes(note, "language printed as Cyrillic 'С' (OCR)")
        for metric, printed in zip(("encrypt_per_block", "decrypt_per_block", "key_setup"), cells[3:6]):
            add("Table 2", cpu, "VC++ 6.0", language, "SC2000", strategies2[i], metric, printed, note)

    # Table 3: this paper's SC2000, four S-box strategies, icc/gcc, Pentium III and Athlon
    strategies3 = ["(16, 16)", "(11, 10, 11)", "(6, 10, 10, 6)", "(6, 5, 5, 5, 5, 6)"]
    t3 = _lipmaa_block(lines, "Processor\tStrategy\tCompiler", 16)
    for i, cells in enumerate(t3):
        cpu = _PIII if i < 8 else _ATHLON
        strategy = strategies3[(i % 8) // 2]
        compiler, nums = cells[-4], cells[-3:]
        note = ""
        if cells[1] in ("(6 10 10 6)", "(0, 10, 10, 0)"):
            assert strategy == "(6, 10, 10, 6)", (cells, strategy)
            note = f"strategy printed '{cells[1]}' (OCR)"
        else:
            assert cells[1] in ("", strategy), (cells, strategy)
        for metric, printed in zip(("encrypt_per_block", "decrypt_per_block", "key_setup"), nums):
            add("Table 3", cpu, compiler, "C", "SC2000", strategy, metric, printed, note)



def _lipmaa_sboxes(lines: list[str]) -> list[dict]:
    """Fig. 1: S-box strategies, table look-ups per SM function and S-box entries."""
    sbox = []
    start = next(i for i, l in enumerate(lines) if l.startswith("Strategy\t\t"))
    fig = lines[start + 1:start + 5]
    for strategy, line in zip(["(6, 5, 5, 5, 5, 6)", "(6, 10, 10, 6)", "(11, 10, 11)", "(16, 16)"], fig):
        nums = [c for c in line.split("\t") if c.strip()]
        lookups, entries = nums[-2], nums[-1]
        note = "strategy printed as '6 1 0 1 0 6' (OCR)" if strategy == "(6, 10, 10, 6)" else ""
        sbox.append(dict(source=LIPMAA, table="Fig. 1", strategy=strategy, implementation=SC2000_IMPL[strategy],
                         lookups_per_sm=lookups, sbox_entries=entries, printed=line.replace("\t", " ").strip(),
                         note=note))
    return sbox


# --------------------------------------------------------------------------------------------
# Sterbenz and Lipp, Performance of the AES candidate algorithms in Java (2000)

STERBENZ_FIELDS = ["source", "table", "cpu", "mhz", "os", "runtime", "algorithm", "cipher", "variant",
                   "key_size", "metric", "value", "unit", "printed", "note"]
_STERBENZ_KEY = {"DES (56 bit)": 56, "Triple DES (168 bit)": 168}


def sterbenz(papers: Path) -> list[dict]:
    lines = _lines(papers, STERBENZ)
    out = []
    common = dict(source=STERBENZ, cpu="Pentium Pro", mhz=200, os="Windows NT 4.0 SP4",
                  runtime="Symantec Visual Cafe 2.5a (JIT)")

    def alg_of(name: str) -> tuple[str, str, str, str]:
        base = re.sub(r" \(\d+ bit\)$", "", name)
        return cipher_of(base)

    # Table 1: class file size and memory usage in bytes
    h = next(i for i, l in enumerate(lines) if l.startswith("\tDES\tTriple DES"))
    names = lines[h].split("\t")[1:]
    metrics = {"Class File Size": "class_file_bytes", "Per process memory": "per_process_bytes",
               "Per instance memory": "per_instance_bytes"}
    for line in lines[h + 1:h + 4]:
        cells = line.split("\t")
        label = re.sub(r"</?b>", "", cells[0])
        for name, printed in zip(names, cells[1:]):
            if printed == "n/a":
                continue                        # class file size not given for non-AES ciphers
            algorithm, cipher, variant, anote = alg_of(name)
            out.append(dict(common, table="Table 1", algorithm=algorithm, cipher=cipher, variant=variant,
                            key_size="", metric=metrics[label], value=number(printed), unit="bytes",
                            printed=printed, note=anote))

    # Appendix: speeds and key setups on the reference machine
    blocks = {"Encryption Speed (kbit/s)": ("encrypt_speed", "Kbit/s"),
              "Decryption Speed (kbit/s)": ("decrypt_speed", "Kbit/s"),
              "Encryption Key Setup (keys/s)": ("key_setup_speed_enc", "keys/s"),
              "Decryption Key Setup (keys/s)": ("key_setup_speed_dec", "keys/s")}
    for i, line in enumerate(lines):
        head = line.split("\t")[0]
        if head not in blocks:
            continue
        metric, unit = blocks[head]
        names = line.split("\t")[1:]
        for row in lines[i + 1:i + 4]:
            cells = row.split("\t")
            row_key = int(re.match(r"^(\d+) bit key$", cells[0]).group(1))
            for name, printed in zip(names, cells[1:]):
                if printed == "n/a":
                    continue                    # DES, 3DES and IDEA have one key size
                algorithm, cipher, variant, anote = alg_of(name)
                key_size = _STERBENZ_KEY.get(name, row_key)
                note = anote
                if key_size != row_key:
                    note = join_notes(note, f"printed in the '{row_key} bit key' row")
                if (cipher, metric, key_size) == ("rc6", "key_setup_speed_enc", 256):
                    note = join_notes(note, "suspect: the text says only Rijndael and IDEA differ between "
                                            "encryption and decryption key setup, yet decryption gives 39028")
                out.append(dict(common, table="Appendix", algorithm=algorithm, cipher=cipher, variant=variant,
                                key_size=key_size, metric=metric, value=number(printed), unit=unit,
                                printed=printed, note=note))
    return out


# --------------------------------------------------------------------------------------------

OUTPUTS = {  # CSV file name -> its columns
    "nist1999_timing.csv": TIMING_FIELDS,
    "nist1999_cycles.csv": CYCLES_FIELDS,
    "nist1999_tables.csv": TABLES_FIELDS,
    "slides_reference.csv": SLIDE_REFERENCE_FIELDS,
    "slides_survey.csv": SLIDE_SURVEY_FIELDS,
    "slides_platform_average.csv": SLIDE_AVERAGE_FIELDS,
    "slides_java.csv": SLIDE_JAVA_FIELDS,
    "gladman_cycles.csv": GLADMAN_FIELDS,
    "lipmaa_sc2000.csv": LIPMAA_FIELDS,
    "lipmaa_sbox_strategies.csv": LIPMAA_SBOX_FIELDS,
    "sterbenz_java.csv": STERBENZ_FIELDS,
}


def extract(papers: Path) -> dict[str, list[dict]]:
    """All reference tables, by CSV file name."""
    timing, cycles, tables = nist(papers)
    s = slides(papers)
    lip, sbox = lipmaa(papers)
    return {
        "nist1999_timing.csv": timing, "nist1999_cycles.csv": cycles, "nist1999_tables.csv": tables,
        "slides_reference.csv": s["reference"], "slides_survey.csv": s["survey"],
        "slides_platform_average.csv": s["average"], "slides_java.csv": s["java"],
        "gladman_cycles.csv": gladman(papers), "lipmaa_sc2000.csv": lip, "lipmaa_sbox_strategies.csv": sbox,
        "sterbenz_java.csv": sterbenz(papers),
    }


def write(out_dir: Path, papers: Path = DEFAULT_PAPERS) -> dict[str, int]:
    """Write every CSV into out_dir; returns rows per file."""
    counts = {}
    for name, rows in extract(papers).items():
        with open(out_dir / name, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=OUTPUTS[name], lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
        counts[name] = len(rows)
    return counts


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--papers", type=Path, default=DEFAULT_PAPERS, help="folder with the papers' text")
    p.add_argument("--out", type=Path, default=HERE, help="folder to write the CSVs into")
    args = p.parse_args(argv)
    for name, n in write(args.out, args.papers).items():
        print(f"{n:6d}  {name}")


if __name__ == "__main__":
    main()

"""The published 1999-2002 figures in lab/report/reference against the papers' text."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from lab.report import reference as ref
from lab.report.reference import extract

ROOT = Path(__file__).resolve().parent.parent
CIPHER_DIRS = ROOT / "c_src" / "ciphers"
# round-1 names with no folder of that name: our CRYPTON is crypton1 (v1.0, not the v0.5 AES submission)
NOT_A_FOLDER = {"crypton"}
OTHER_CIPHERS = {"des", "3des", "idea", "sc2000"}
NO_E2 = {"A.1-7", "A.1-8", "A.1-9", "A.1-10", "A.1-11"}   # Linux, SGI and Sun tables have no E2 row


@pytest.fixture(scope="module")
def timing():
    return ref.timing()


@pytest.fixture(scope="module")
def cycles():
    return ref.cycles()


def one(df, **where) -> float:
    sel = df
    for k, v in where.items():
        sel = sel[sel[k] == v]
    assert len(sel) == 1, (where, len(sel))
    return sel.value.iloc[0]


# --- shape --------------------------------------------------------------------------------------

def test_shapes(timing, cycles):
    # A.1: 5 tables of 15 rows and 6 of 16 rows (64-bit variants added, E2 missing on some), 9 cells each
    assert timing.shape[0] == 9 * (5 * 15 + 6 * 16) == 1539
    assert timing.table.nunique() == 11
    # A.2: 6 platforms x 15 algorithms x (2 key setups + 10 per-block), plus Init on the 2 reference tables
    assert cycles.shape[0] == 6 * 15 * 12 + 2 * 15 == 1110
    assert cycles.table.nunique() == 6
    assert set(cycles[cycles.metric == "init"].table) == {"A.2-1", "A.2-2"}
    assert len(ref.nist_tables()) == 17
    sizes = {name: len(ref.load(name)) for name in ref.FILES}
    assert sizes == {"timing": 1539, "cycles": 1110, "nist_tables": 17, "slides_reference": 60,
                     "slides_survey": 123, "slides_platform_average": 34, "slides_java": 96, "gladman": 171,
                     "lipmaa": 104, "lipmaa_sbox": 4, "sterbenz": 93}


def test_one_row_per_printed_cell(timing, cycles):
    assert not timing.duplicated(["table", "algorithm", "key_size", "metric"]).any()
    assert not cycles.duplicated(["table", "algorithm", "metric", "n_blocks"]).any()


# --- spot values read off the papers -----------------------------------------------------------

@pytest.mark.parametrize("table, algorithm, key_size, metric, value", [
    ("A.1-1", "CAST-256", 128, "encrypt_speed", 8490.5),        # Borland, Pentium Pro 200
    ("A.1-1", "DFC", 192, "decrypt_speed", 5858.0),             # printed "5858"
    ("A.1-2", "CRYPTON", 128, "key_setup_speed", 754717.2),     # Borland, Pentium II 450
    ("A.1-4", "CRYPTON", 128, "encrypt_speed", 97542.0),        # Visual C, printed "97542"
    ("A.1-6", "MARS", 128, "encrypt_speed", 138793.3),          # DJGPP, Pentium II 450
    ("A.1-6", "HPC-64", 256, "key_setup_speed", 3639.8),
    ("A.1-7", "Rijndael", 256, "key_setup_speed", 4739.3),      # Linux GCC
    ("A.1-8", "HPC-64", 192, "key_setup_speed", 9009.0),        # SGI
    ("A.1-8", "LOKI97", 192, "key_setup_speed", 13245.0),       # printed "13245"
    ("A.1-9", "Rijndael", 192, "encrypt_speed", 32768.0),       # GCC UltraSPARC 300, printed "32768"
    ("A.1-11", "Rijndael", 256, "decrypt_speed", 26715.3),      # Workshop, 2*360 MHz
])
def test_timing_spot_values(timing, table, algorithm, key_size, metric, value):
    assert one(timing, table=table, algorithm=algorithm, key_size=key_size, metric=metric) == value


def test_timing_inf_stays_inf(timing):
    inf = timing[timing.value == math.inf]
    assert set(zip(inf.table, inf.algorithm, inf.metric)) == {
        ("A.1-10", "HPC-64", "key_setup_speed"), ("A.1-11", "HPC-64", "key_setup_speed")}
    assert len(inf) == 6 and (inf.printed == "Inf").all() and inf.note.str.contains("Inf").all()
    assert not timing.value.isna().any()


@pytest.mark.parametrize("table, algorithm, metric, n_blocks, value", [
    ("A.2-4", "RC6", "encrypt_per_block", 128, 303),            # Visual C, Pentium II 450
    ("A.2-1", "FROG", "ekey", None, 2664417),                   # Borland, Pentium Pro 200
    ("A.2-1", "RIJNDAEL", "init", None, 5049),
    ("A.2-2", "E2", "encrypt_per_block", 32768, 756),
    ("A.2-3", "HPC", "decrypt_per_block", 1, 20921),
    ("A.2-5", "SERPENT", "encrypt_per_block", 1, 6188),         # Borland, Pentium III 500
    ("A.2-6", "MAGENTA", "decrypt_per_block", 32768, 9172),
    ("A.2-6", "DEAL", "ekey", None, 2857),                      # as printed (a digit short?)
])
def test_cycles_spot_values(cycles, table, algorithm, metric, n_blocks, value):
    sel = cycles[(cycles.table == table) & (cycles.algorithm == algorithm) & (cycles.metric == metric)]
    sel = sel[sel.n_blocks.isna()] if n_blocks is None else sel[sel.n_blocks == n_blocks]
    assert len(sel) == 1 and sel.value.iloc[0] == value


def test_frog_multi_block_values_are_the_one_block_values(cycles):
    frog = cycles[cycles.cipher == "frog"]
    for (table, metric), g in frog[frog.n_blocks.notna()].groupby(["table", "metric"]):
        assert g.value.nunique() == 1, (table, metric)


def test_value_is_the_printed_number():
    for name in ref.FILES:
        df = ref.load(name)
        if "printed" not in df or "value" not in df:
            continue
        for printed, value in zip(df.printed, df.value):
            core = re.sub(r"\^\{\+*\}$|\s*[¹²*]+$", "", printed)
            if math.isnan(value):
                assert not re.fullmatch(r"\d+(\.\d+)?", core), (name, printed)
            elif math.isinf(value):
                assert printed == "Inf", (name, printed)
            else:
                assert float(core) == value, (name, printed, value)


# --- algorithms and cipher names ----------------------------------------------------------------

def test_every_a1_table_has_the_documented_algorithms(timing):
    expected_variants = {  # tables that add DFC-64 / HPC-64 rows
        "A.1-6": {"hpc"}, "A.1-7": {"dfc", "hpc"}, "A.1-8": {"dfc", "hpc"}, "A.1-9": {"dfc", "hpc"},
        "A.1-10": {"dfc", "hpc"}, "A.1-11": {"dfc", "hpc"},
    }
    for table, g in timing.groupby("table"):
        plain = set(g[g.variant == ""].cipher)
        assert plain == set(ref.ROUND1) - ({"e2"} if table in NO_E2 else set()), table
        assert set(g[g.variant == "64"].cipher) == expected_variants.get(table, set()), table
        assert set(g.variant) <= {"", "64"}
        assert (g.groupby("algorithm").size() == 9).all()


def test_every_a2_table_has_all_15(cycles):
    for table, g in cycles.groupby("table"):
        assert sorted(g.cipher.unique()) == sorted(ref.ROUND1), table
        assert (g.variant == "").all()


def test_cipher_names_are_our_folder_names():
    assert len(ref.ROUND1) == 15
    for c in ref.ROUND1:
        assert (CIPHER_DIRS / c).is_dir() or c in NOT_A_FOLDER, c
    for name in ref.FILES:
        df = ref.load(name)
        if "cipher" not in df:
            continue
        names = set(df.cipher)
        if name == "slides_survey":     # the NULL-cipher footnote rows have no cipher
            assert set(df[df.cipher == ""].algorithm) == {"NULL cipher"}
            names -= {""}
        assert names <= set(ref.ROUND1) | OTHER_CIPHERS, (name, names)
    for c in OTHER_CIPHERS:
        assert (CIPHER_DIRS / c).is_dir(), c


def test_algorithm_to_cipher_mapping_is_consistent():
    pairs = set()
    for name in ref.FILES:
        df = ref.load(name)
        if "cipher" in df:
            pairs |= set(zip(df.algorithm.str.upper(), df.cipher, df.variant))
    by_name = {}
    for alg, cipher, variant in pairs:
        assert by_name.setdefault(alg, (cipher, variant)) == (cipher, variant), alg
    assert by_name["SAFER+"] == ("saferplus", "")
    assert by_name["CAST-256"] == ("cast256", "")
    assert by_name["DFC-64"] == ("dfc", "64") and by_name["HPC-64"] == ("hpc", "64")


# --- internal consistency of the papers ---------------------------------------------------------

def test_a2_sort_order_by_encrypt_128_reproduces_the_printed_rows(cycles):
    tables = ref.nist_tables().set_index("table")
    for table, g in cycles.groupby("table"):
        enc128 = g[(g.metric == "encrypt_per_block") & (g.n_blocks == 128)]
        assert not enc128.value.duplicated().any(), table     # no ties: the order is fully determined
        by_value = list(enc128.sort_values("value").algorithm)
        by_row = list(enc128.sort_values("row").algorithm)
        assert by_value == by_row, table
        assert " ".join(by_row) == tables.loc[table, "algorithms"]
        # every metric of the table uses the same row numbers
        assert (g.groupby("algorithm").row.nunique() == 1).all()


def test_slide_platform_averages_are_means_of_the_a1_tables(timing):
    """Slide 21 averages Enc128 over the compilers of a platform, to whole Kbit/s (within 1 of our mean)."""
    avg = ref.slides_platform_average()
    enc = timing[(timing.metric == "encrypt_speed") & (timing.key_size == 128)]
    tables = {"ppro200-win95": ["A.1-1", "A.1-3", "A.1-5"], "ultrasparc2-300-solaris": ["A.1-9", "A.1-10"]}
    checked = 0
    for _, row in avg.dropna(subset=["value"]).iterrows():
        sel = enc[enc.table.isin(tables[row.platform]) & (enc.cipher == row.cipher) & (enc.variant == row.variant)]
        assert len(sel) == len(tables[row.platform])
        assert abs(sel.value.mean() - row.value) < 1, (row.platform, row.algorithm)
        checked += 1
    assert checked == 31


def test_gladman_speeds_are_200_mhz_over_cycles():
    g = ref.gladman()
    for op in ("encrypt", "decrypt"):
        cyc = g[g.metric == f"{op}_per_block"].set_index(["cipher", "language", "key_size"]).value
        mbps = g[g.metric == f"{op}_speed"].set_index(["cipher", "language", "key_size"]).value
        assert len(cyc) == len(mbps) == 33
        for key, c in cyc.items():
            if key[0] == "des" and key[2] != 128:
                continue   # documented inconsistency: DES cycles grow, Mb/s stays 30.5
            assert abs(200 * 128 / c - mbps[key]) < 0.1, key
    rij = g[(g.cipher == "rijndael") & (g.language == "C") & (g.key_size == 128)]
    assert one(rij, metric="ekey") == 215 and one(rij, metric="dkey") == 1334


def test_slide_best_nist_values_marked_bc_are_the_reference_configuration():
    survey = ref.slides_survey()
    refc = ref.slides_reference()
    marked = survey[(survey.survey == "NIST") & survey.printed_value.str.contains("²")]
    metric = {"encrypt": "encrypt_per_block", "decrypt": "decrypt_per_block", "key_setup": "ekey"}
    assert len(marked) == 7
    for _, r in marked.iterrows():
        assert one(refc, cipher=r.cipher, metric=metric[r.operation]) == r.value
    rij = survey[(survey.survey == "NIST") & (survey.operation == "key_setup") & (survey.cipher == "rijndael")]
    assert rij.value_dec.iloc[0] == one(refc, cipher="rijndael", metric="dkey") == 7467


def test_lipmaa_sbox_entries_follow_the_strategy():
    sb = ref.lipmaa_sbox()
    for _, r in sb.iterrows():
        bits = [int(b) for b in re.findall(r"\d+", r.strategy)]
        assert r.lookups_per_sm == len(bits)
        assert r.sbox_entries == sum(2 ** b for b in bits)
    lip = ref.lipmaa()
    assert set(lip[lip.table == "Table 3"].implementation) == set(sb.implementation)
    t1 = lip[(lip.table == "Table 1") & (lip.cipher == "sc2000") & (lip.compiler == "icc 5.0")]
    assert one(t1, metric="encrypt_per_block") == 270


def test_sterbenz_key_sizes():
    st = ref.sterbenz()
    speeds = st[st.metric == "encrypt_speed"]
    assert dict(speeds.groupby("cipher").key_size.apply(lambda s: sorted(s.tolist()))) == {
        "des": [56], "3des": [168], "idea": [128], "mars": [128, 192, 256], "rc6": [128, 192, 256],
        "rijndael": [128, 192, 256], "serpent": [128, 192, 256], "twofish": [128, 192, 256]}
    assert one(st, cipher="rc6", metric="encrypt_speed", key_size=128) == 26212


# --- the CSVs are the generator's output ------------------------------------------------------

@pytest.mark.skipif(not extract.DEFAULT_PAPERS.is_dir(), reason="shared/papers not beside the checkout")
def test_extract_reproduces_the_csvs(tmp_path):
    counts = extract.write(tmp_path)
    assert set(counts) == set(ref.FILES.values())
    for name in counts:
        assert (tmp_path / name).read_bytes() == (ref.HERE / name).read_bytes(), name


def test_the_hand_entered_gladman_simd_speedup_is_in_the_paper():
    from lab.config import Lab
    from lab.report.analysis import SIMD_1999

    text = (Lab().shared / "papers" / "gladman-aes-round2-implementation.txt").read_text()
    for value, _, printed in SIMD_1999.values():
        assert printed in text and float(printed.split("%")[0]) / 100 + 1 == pytest.approx(value)

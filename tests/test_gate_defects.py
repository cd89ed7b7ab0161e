"""The known-answer gate pinned on every defect class, each on its own (issue 26), with real builds.

tests/fixtures/ciphers/gatedes/defects.c holds real DES with exactly one defect per implementation, each invisible
to every check but one: a wrong record, the n-block path, the checksum, the round trip; votedes has no stored
checksum, so its odd build is caught by the agreement vote alone.  A few seconds: one small build each."""

from __future__ import annotations

import pytest

from lab import kat
from lab.verify import verify
from tests.test_gate_units import done, fail, summary


@pytest.fixture(scope="module")
def gate(fixture_lab, build_dir) -> dict:
    out = {}
    for cipher in ("gatedes", "votedes"):
        for r in verify(fixture_lab, cipher, fixture_lab.vectors_dir / "des.kat", impl="all", build_dir=build_dir):
            out[r.impl] = r
    return out


def test_a_real_des_with_no_defect_passes_every_check(gate):
    for name in ("gatedes/good", "votedes/good", "votedes/good2"):
        r = gate[name]
        assert r.ok and r.verdict.status == "ok" and r.passed == r.records == 305, r.line()


def test_a_wrong_record_alone(gate):
    r = gate["gatedes/record"]
    v = r.verdict
    assert (v.status, v.multiblock_failed, v.roundtrip_ok) == ("kat_failed", 0, True)
    assert v.failed == 64 and v.passed == 241  # each failing record counts once, though both directions failed
    assert v.reason == "64 of 305 known-answer records failed (first: line 8 of des.kat, encrypt, 64-bit key)"
    assert v.checksums[64] == dict(gate["gatedes/good"].verdict.checksums)[64]  # nothing else is wrong


def test_the_n_block_path_alone(gate):
    v = gate["gatedes/nblock"].verdict
    assert v.passed == v.records == 305 and v.roundtrip_ok  # every vector and the chain pass...
    assert v.checksums == gate["gatedes/good"].verdict.checksums
    assert v.status == "kat_failed" and v.multiblock_failed == v.failed == 2  # ...the n-block check does not
    assert v.reason.startswith("every record passed, but the n-block check failed: one 37-block call differs")
    assert "FAILED" not in gate["gatedes/nblock"].line().split(";")[0]  # no record is called failed


def test_the_checksum_alone(gate):
    v = gate["gatedes/fourblock"].verdict
    assert v.passed == v.records and v.failed == 0 and v.roundtrip_ok
    assert v.status == "checksum_differs"
    assert v.reason.startswith("checksum differs for 64-bit keys: ") and "where cipher.yaml has b5c278915229b760" \
        in v.reason


def test_the_round_trip_alone(gate):
    v = gate["gatedes/roundtrip"].verdict
    assert v.passed == v.records and v.failed == 0
    assert v.checksums == gate["gatedes/good"].verdict.checksums  # encryption is right: the checksum agrees
    assert (v.status, v.reason) == ("kat_failed", "decrypt(encrypt(x)) != x on the checksum chain")


def test_the_agreement_vote_alone(gate):
    odd = gate["votedes/fourblock"].verdict
    assert odd.passed == odd.records and odd.failed == 0 and odd.roundtrip_ok  # nothing else sees it
    assert odd.status == "checksum_differs"
    assert "where other builds of votedes give b5c278915229... (2 builds)" in odd.reason


def test_the_vote_needs_a_majority_and_ignores_stored_checksums():
    def ok(cs: str) -> kat.Verdict:
        return kat.Verdict("ok", None, checksums={64: cs})

    two = [("c", False, ok("aa")), ("c", False, ok("bb"))]  # no majority: neither can be trusted
    kat.vote(two)
    assert [v.status for _, _, v in two] == ["checksum_differs", "checksum_differs"]
    stored = [("c", True, ok("aa")), ("c", True, ok("bb"))]  # judged against cipher.yaml, not by vote
    kat.vote(stored)
    assert [v.status for _, _, v in stored] == ["ok", "ok"]
    other = [("c", False, ok("aa")), ("d", False, ok("bb")), ("c", False, ok("aa"))]  # per cipher
    kat.vote(other)
    assert [v.status for _, _, v in other] == ["ok", "ok", "ok"]
    failed = kat.Verdict("kat_failed", "x", checksums={64: "bb"})  # a failed build has no vote
    mixed = [("c", False, ok("aa")), ("c", False, failed)]
    kat.vote(mixed)
    assert mixed[0][2].status == "ok" and failed.reason == "x"


def test_a_failure_names_the_file_it_came_from():
    # issue 26, bug 1: a.kat passes, b.kat fails at line 3; the reason said "line 3 of a.kat"
    from pathlib import Path

    v = kat.verdict([(Path("/v/a.kat"), done(summary(4, 4))),
                     (Path("/v/b.kat"), done(fail(3, "decrypt", 64), summary(5, 4, 1)))])
    assert v.reason == "1 of 9 known-answer records failed (first: line 3 of b.kat, decrypt, 64-bit key)"
    assert [f["file"] for f in v.fails] == ["b.kat"]

"""The records the harness programs print (c_src/harness, and the Java kat program): one model per kind,
validated where the output is read (:func:`read`).  Past the reader there are no dict records.

Every program prints JSON lines whose ``type`` names the kind:

==============  ===============  ===========================================================================
program         type             model
==============  ===============  ===========================================================================
kat             ``kat_fail``      :class:`KatFail` — one failing record (or n-block check: ``line`` 0)
kat             ``kat_checksum``  :class:`KatChecksum` — the checksum chain of one key size
kat             ``kat_summary``   :class:`KatSummary` — the tally of one vectors file
kat --list      ``impl``          :class:`ImplRecord` — an implementation linked into the program
timing          ``timing``        :class:`TimingRecord` — per key size, the samples of three quantities
cycles/icount   ``counter``       :class:`CounterRecord` — the counter's name, unit and rate
cycles/icount   ``cycles``        :class:`CyclesRecord` — the deltas of one operation at one size
ct              ``ct_region``     :class:`CtRegionRecord` — which input and operation a marked region holds
ct --dudect     ``dudect``        :class:`DudectRecord` — fixed-vs-random classes and deltas of one operation
SterbenzLipp    ``sterbenz_lipp`` :class:`SterbenzLippRecord` — Sterbenz & Lipp's samples of one operation
SterbenzLipp    ``sink``          :class:`SinkRecord` — what the timed Java work computed (keeps it alive)
timing/cycles   ``gauge``         :class:`GaugeRecord` — the machine-speed gauge's samples in that process
any             ``error``         :class:`ErrorRecord` — a usage or input error (exit 2)
any             ``unavailable``   :class:`UnavailableRecord` — the implementation cannot run here (exit 3)
==============  ===============  ===========================================================================

Fields that decide correctness (``roundtrip_ok``, the tallies, ``calls``, the deltas) have no defaults: a
record without one is a :class:`ProtocolError` naming the program, the record and the field.  Unknown extra
fields are ignored (a newer program may say more).
"""

from __future__ import annotations

from typing import Annotated, Literal, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from .backends.base import Completed

Op = Literal["null", "ekey", "dkey", "init", "encrypt", "decrypt"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class ImplFields(_Record):
    impl: str
    cipher: str
    strategy: str
    block_bytes: int = Field(gt=0)
    key_bits: list[int]
    ks_bytes: int
    table_bytes: int
    available: bool


class KatFail(_Record):
    type: Literal["kat_fail"]
    impl: str
    line: int  # 0: the n-block check
    key_bits: int
    mode: str
    iter: int
    direction: str
    reason: str
    expected: str | None = None
    got: str | None = None


class KatChecksum(_Record):
    type: Literal["kat_checksum"]
    impl: str
    key_bits: int
    checksum: str
    roundtrip_ok: bool


class KatSummary(ImplFields):
    type: Literal["kat_summary"]
    file: str
    records: int = Field(ge=0)
    passed: int = Field(ge=0)
    failed: int = Field(ge=0)
    skipped_key_size: int = Field(ge=0)
    multiblock_failed: int = Field(ge=0)
    sampled_out: int = Field(0, ge=0)  # long records a quick gate (kat --long-every N) did not check

    def facts(self) -> dict:
        return {"block_bytes": self.block_bytes, "ks_bytes": self.ks_bytes, "table_bytes": self.table_bytes,
                "key_bits": list(self.key_bits)}


class ImplRecord(ImplFields):
    type: Literal["impl"]


class UnavailableRecord(ImplFields):
    type: Literal["unavailable"]


class ErrorRecord(_Record):
    type: Literal["error"]
    program: str
    message: str
    detail: str | None = None

    def line(self) -> str:
        return self.message + (f" ({self.detail})" if self.detail else "")


class TimingOp(_Record):
    per_sample: int = Field(gt=0)
    ns: list[int] = Field(min_length=1)


class TimingRecord(ImplFields):
    type: Literal["timing"]
    key_size: int
    samples: int
    warmup: int
    blocks_per_call: int
    encrypt: TimingOp
    decrypt: TimingOp
    key_setup: TimingOp

    def ops(self) -> dict:
        """The stored form (lab.results.TimingProcess key_sizes[k]): {op: {per_sample, ns}}."""
        return {op: getattr(self, op).model_dump() for op in ("encrypt", "decrypt", "key_setup")}


class CounterRecord(_Record):
    type: Literal["counter"]
    counter: str
    unit: str
    ticks_per_second: float | None = None  # the marker counter has no rate


class CyclesRecord(_Record):
    type: Literal["cycles"]
    impl: str
    key_size: int
    op: Op
    n: int
    calls: int = Field(gt=0)
    counter: str
    unit: str
    deltas: list[int]

    def op_record(self) -> dict:
        """The stored form (lab.results.CycleOp)."""
        return self.model_dump(include={"key_size", "op", "n", "calls", "counter", "unit", "deltas"})


class CtRegionRecord(_Record):
    type: Literal["ct_region"]
    region: int = Field(ge=0)
    key_size: int
    op: str
    input: int = Field(ge=0)


class DudectRecord(_Record):
    type: Literal["dudect"]
    impl: str
    key_size: int
    op: str
    counter: str
    unit: str
    classes: str  # one '0' (fixed) or '1' (random) per measurement
    deltas: list[int]


class SterbenzLippRecord(_Record):
    type: Literal["sterbenz_lipp"]
    key_bits: int
    op: str
    per_sample: int = Field(gt=0)
    ns: list[int] = Field(min_length=1)

    def sample(self) -> dict:
        """The stored form (lab.results.SterbenzLippOp: per key size and operation)."""
        return {"key_size": self.key_bits, "op": self.op, "per_sample": self.per_sample, "ns": list(self.ns)}


class SinkRecord(_Record):
    type: Literal["sink"]
    value: int


class GaugeRecord(_Record):
    """The machine-speed gauge (c_src/harness/util.h): a fixed workload sampled once per round beside the cell's
    samples, with the same clock (timing) or counter (cycles)."""
    type: Literal["gauge"]
    workload: str
    per_sample: int = Field(gt=0)  # iterations of the workload in one sample
    unit: str
    samples: list[int] = Field(min_length=1)

    def stored(self) -> dict:
        """The stored form (lab.models.Gauge)."""
        return self.model_dump(exclude={"type"})


_MODELS = (KatFail, KatChecksum, KatSummary, ImplRecord, UnavailableRecord, ErrorRecord, TimingRecord, CounterRecord,
           CyclesRecord, GaugeRecord, CtRegionRecord, DudectRecord, SterbenzLippRecord, SinkRecord)
Record = Annotated[Union[_MODELS], Field(discriminator="type")]  # type: ignore[valid-type]
_ADAPTER: TypeAdapter = TypeAdapter(Record)
R = TypeVar("R")


class ProtocolError(ValueError):
    """A program printed a record the lab cannot read: the message names the program, the record and the field."""


def parse(rec: dict, program: str, index: int = 0) -> Record:
    try:
        return _ADAPTER.validate_python(rec)
    except ValidationError as e:
        err = e.errors()[0]
        kind = rec.get("type", "?")
        where = ".".join(str(x) for x in err["loc"][1:]) or "type"
        what = "missing field" if err["type"] == "missing" else err["msg"].lower()
        raise ProtocolError(f"{program}: record {index + 1} ({kind}) is unreadable: {what} '{where}'") from None


KINDS = frozenset(m.model_fields["type"].annotation.__args__[0] for m in _MODELS)  # type: ignore[union-attr]


def read(c: Completed, program: str) -> list[Record]:
    """Every record of a known kind the program printed, validated.  Non-JSON lines (a crash may cut the last)
    and JSON lines of another kind (a newer program may print more) are skipped."""
    return [parse(r, program, i) for i, r in enumerate(c.json_lines()) if r.get("type") in KINDS]


def of(records: list, kind: type[R]) -> list[R]:
    return [r for r in records if isinstance(r, kind)]


__all__ = ["Record", "KatFail", "KatChecksum", "KatSummary", "ImplRecord", "UnavailableRecord", "ErrorRecord",
           "TimingRecord", "TimingOp", "CounterRecord", "CyclesRecord", "GaugeRecord", "CtRegionRecord",
           "DudectRecord", "SterbenzLippRecord", "SinkRecord", "ProtocolError", "parse", "read", "of"]

"""Every quantity the lab stores, once: its name, unit, direction, kind and what it means.  Every module reads this
table (the quantities the programs' records become, the stored rows' descriptions, what compare, trends, history,
bisection and the calibration judge, which way is better); a new metric is one row.

Kinds: ``timed`` (measured by the clock or the cycle counter, with a run-to-run interval), ``exact`` (guest
instruction counts: deterministic, no interval), ``fact`` (a property of the build: sizes, known-answer counts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: how a timed quantity's headline is estimated over its measuring processes (a stored row's ``estimator``; an
#: exact count's is "exact", a fact has none); lab/stats.py computes each
ESTIMATORS = ("min", "median", "trimmed")
TIMED_ESTIMATORS = ESTIMATORS


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str                       # "Kbit/s", "keys/s", "counter units", "guest_insns", "bytes", "records"
    higher_is_better: bool
    kind: Literal["timed", "exact", "fact"]
    description: str
    op: str | None = None           # the program's operation it comes from (timing: encrypt, decrypt, key_setup;
    #                                  cycles and counts: ekey, dkey, init, encrypt, decrypt, null)
    program: Literal["timing", "cycles", "icount", "java", None] = None
    label: str = ""                 # how a sentence names it ("encrypt", "key setup (guest instructions)")
    judged: bool = True             # part of a cell's precision (the stop rule judges it)
    headline: bool = False          # what two runs are compared on by default (compare, the calibration, bench.aa)


def _cycles(name: str, op: str, what: str, label: str, judged: bool = True,
            headline: bool = True) -> tuple[Metric, Metric]:
    """A cycle-counter quantity and its guest-instruction twin (insn_<name>)."""
    return (Metric(name, "counter units", False, "timed", f"counter units {what}", op, "cycles", label, judged,
                   headline),
            Metric(f"insn_{name}", "guest_insns", False, "exact", f"guest instructions {what}, counted by qemu-user + "
                   "the icount plugin (deterministic)", op, "icount", f"{label} (guest instructions)", judged))


TABLE: tuple[Metric, ...] = (
    Metric("encrypt_speed", "Kbit/s", True, "timed", "Kbit/s encrypting (timing program)", "encrypt", "timing",
           "encrypt", headline=True),
    Metric("decrypt_speed", "Kbit/s", True, "timed", "Kbit/s decrypting (timing program)", "decrypt", "timing",
           "decrypt", headline=True),
    Metric("key_setup_speed", "keys/s", True, "timed", "keys/s; a key = mean of one encryption and one decryption "
           "key setup", "key_setup", "timing", "key setup", headline=True),
    *_cycles("ekey", "ekey", "per encryption key setup, overhead subtracted", "encryption key setup"),
    *_cycles("dkey", "dkey", "per decryption key setup, overhead subtracted", "decryption key setup"),
    *_cycles("init", "init", "per cipherInit, overhead subtracted", "cipherInit", headline=False),
    *_cycles("encrypt_per_block", "encrypt", "per block encrypting n_blocks in one call, overhead subtracted",
             "encrypt per block"),
    *_cycles("decrypt_per_block", "decrypt", "per block decrypting n_blocks in one call, overhead subtracted",
             "decrypt per block"),
    *_cycles("null_overhead", "null", "of an empty call between two counter reads (subtracted once per sample)",
             "empty call", judged=False, headline=False),
    Metric("sl_encrypt_speed", "Kbit/s", True, "timed", "Kbit/s by Sterbenz & Lipp's method (Java cells): a 1 KiB "
           "buffer encrypted 2048 times per sample; value = the mean of the samples within 3 sd", "encrypt", "java",
           "encrypt (Sterbenz & Lipp)", judged=False),
    Metric("sl_decrypt_speed", "Kbit/s", True, "timed", "Kbit/s by Sterbenz & Lipp's method (Java cells), decrypting",
           "decrypt", "java", "decrypt (Sterbenz & Lipp)", judged=False),
    Metric("sl_key_setup_speed_enc", "keys/s", True, "timed", "keys/s by Sterbenz & Lipp's method (Java cells): 32 "
           "random keys x 1024 key setups per sample, encryption keys", "ekey", "java",
           "encryption key setup (Sterbenz & Lipp)", judged=False),
    Metric("sl_key_setup_speed_dec", "keys/s", True, "timed", "keys/s by Sterbenz & Lipp's method (Java cells), "
           "decryption keys", "dkey", "java", "decryption key setup (Sterbenz & Lipp)", judged=False),
    Metric("table_bytes", "bytes", False, "fact", "static table bytes of the implementation", judged=False),
    Metric("key_schedule_bytes", "bytes", False, "fact", "bytes of one key schedule", judged=False),
    Metric("code_bytes", "bytes", False, "fact", "text+rodata bytes of the implementation's objects", judged=False),
    Metric("kat_passed", "records", True, "fact", "known-answer records passed", judged=False),
    Metric("kat_failed", "records", False, "fact", "known-answer records failed", judged=False),
)
BY_NAME: dict[str, Metric] = {m.name: m for m in TABLE}


def get(name: str) -> Metric:
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown metric '{name}' (lab/metrics.py TABLE)") from None


def higher_is_better(name: str) -> bool:
    """True for speeds (a ratio above 1 is faster), False for costs and counts."""
    return get(name).higher_is_better


def names(*, kind: str | None = None, program: str | None = None, judged: bool | None = None,
          headline: bool | None = None) -> tuple[str, ...]:
    """The metrics' names with these properties, in the table's order."""
    return tuple(m.name for m in TABLE if (kind is None or m.kind == kind) and (program is None or m.program == program)
                 and (judged is None or m.judged == judged) and (headline is None or m.headline == headline))


def by_op(program: str) -> dict[str, str]:
    """{operation: metric} of one program's quantities (timing: encrypt -> encrypt_speed; cycles: ekey -> ekey)."""
    return {m.op: m.name for m in TABLE if m.program == program and m.op}


def exact_twin(name: str) -> str | None:
    """The guest-instruction count of a timed quantity (encrypt_speed -> insn_encrypt_per_block: the speed's op at
    n blocks; ekey -> insn_ekey); None where there is none."""
    m = get(name)
    if m.kind != "timed" or m.program not in ("timing", "cycles"):
        return None
    op = {"key_setup": "ekey"}.get(m.op or "", m.op)
    twin = next((x.name for x in TABLE if x.program == "icount" and x.op == op), None)
    return twin


def label(name: str) -> str:
    m = BY_NAME.get(name)
    return m.label if m and m.label else name


#: the quantities two runs are compared on by default (compare, the calibration, bench.aa)
HEADLINE = names(kind="timed", headline=True)
#: the speeds of the timing program: the headline figures, trends' and bisection's timed quantities
SPEEDS = names(program="timing")

__all__ = ["ESTIMATORS", "TIMED_ESTIMATORS", "Metric", "TABLE", "BY_NAME", "get", "higher_is_better", "names", "by_op", "exact_twin", "label",
           "HEADLINE", "SPEEDS"]

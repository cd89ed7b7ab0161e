#!/usr/bin/env python3
"""Extracts the CAST-256 S-boxes S1..S4 from the specification text and writes
them into ref.c (between the GENERATED TABLES markers).

Source: shared/specs/cast256-aes-submission.txt, PDF pages 3-5 ("S-Box S1" ..
"S-Box S4", 256 hex words each, read left-to-right, top-to-bottom).  The text
layer of those pages is clean (specs/README.md); the script checks that each
box has exactly 256 words.  It also checks the key-schedule constants of p9
(cm = 2^30 * sqrt(2), mm = 2^30 * sqrt(3)) that ref.c uses.

    python3 gen_tables.py [--check | --print] [path/to/cast256-aes-submission.txt]   (../gentables.py)
"""
import math
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import gentables as gt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SPEC = os.path.join(HERE, "..", "..", "..", "..", "shared", "specs",
                            "cast256-aes-submission.txt")


def read_sboxes(path):
    with open(path, encoding="utf-8") as fh:
        pages = fh.read().split("\f")
    text = "\n".join(pages[2:5])  # PDF pages 3, 4, 5
    parts = re.split(r"S-Box S\s*([1-4])", text)
    boxes = {}
    for i in range(1, len(parts), 2):
        words = re.findall(r"\b[0-9a-f]{8}\b", parts[i + 1])
        if len(words) != 256:
            sys.exit(f"S{parts[i]}: found {len(words)} words, expected 256")
        boxes[int(parts[i])] = [int(w, 16) for w in words]
    if sorted(boxes) != [1, 2, 3, 4]:
        sys.exit(f"found S-boxes {sorted(boxes)}, expected 1..4")
    return boxes


def add_arguments(ap):
    ap.add_argument("spec", nargs="?", default=DEFAULT_SPEC, help="the specification's text layer")


def generate(args):
    boxes = read_sboxes(args.spec)
    assert int(2**30 * math.sqrt(2)) == 0x5A827999
    assert int(2**30 * math.sqrt(3)) == 0x6ED9EBA1
    # One array, S[k - 1] = Sk: the compilers then address all four boxes from one base register.
    body = gt.c_array_2d("static const uint32_t S[4][256]", [boxes[k] for k in range(1, 5)], "0x%08x", 6,
                         comment="S-boxes S1..S4 as S[0..3], CAST-256 AES submission pp. 3-5, extracted from the\n"
                                 "specification text by gen_tables.py.",
                         row_comments=[f"S{k}" for k in range(1, 5)])
    return [gt.Block("ref.c", body)]


if __name__ == "__main__":
    gt.main(__file__, generate, __doc__, add_arguments)

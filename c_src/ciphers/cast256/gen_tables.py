#!/usr/bin/env python3
"""Extracts the CAST-256 S-boxes S1..S4 from the specification text and writes
them into ref.c (between the GENERATED TABLES markers).

Source: shared/specs/cast256-aes-submission.txt, PDF pages 3-5 ("S-Box S1" ..
"S-Box S4", 256 hex words each, read left-to-right, top-to-bottom).  The text
layer of those pages is clean (specs/README.md); the script checks that each
box has exactly 256 words.  It also checks the key-schedule constants of p9
(cm = 2^30 * sqrt(2), mm = 2^30 * sqrt(3)) that ref.c uses.

    python3 gen_tables.py [path/to/cast256-aes-submission.txt]
"""
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SPEC = os.path.join(HERE, "..", "..", "..", "..", "shared", "specs",
                            "cast256-aes-submission.txt")
TARGET = os.path.join(HERE, "ref.c")
BEGIN = "/* BEGIN GENERATED TABLES (gen_tables.py) */"
END = "/* END GENERATED TABLES */"


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


def c_table(name, words):
    lines = [f"static const uint32_t {name}[256] = {{"]
    for i in range(0, 256, 6):
        lines.append("    " + " ".join(f"0x{w:08x}," for w in words[i:i + 6]))
    lines.append("};")
    return "\n".join(lines)


def main():
    spec = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_SPEC
    boxes = read_sboxes(spec)
    assert int(2**30 * math.sqrt(2)) == 0x5A827999
    assert int(2**30 * math.sqrt(3)) == 0x6ED9EBA1
    body = [BEGIN,
            "/* S-boxes S1..S4, CAST-256 AES submission pp. 3-5, extracted from the",
            " * specification text by gen_tables.py. */"]
    for k in range(1, 5):
        body.append(c_table(f"S{k}", boxes[k]))
    body.append(END)
    with open(TARGET, encoding="utf-8") as fh:
        src = fh.read()
    a, b = src.index(BEGIN), src.index(END) + len(END)
    src = src[:a] + "\n".join(body) + src[b:]
    with open(TARGET, "w", encoding="utf-8") as fh:
        fh.write(src)
    print(f"wrote S1..S4 into {TARGET}")


if __name__ == "__main__":
    main()

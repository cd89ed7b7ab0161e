#!/usr/bin/env python3
"""Generate the SAFER+ tables and the PHT network used by ref.c.

From Cylink's AES submission "Nomination of SAFER+ as Candidate Algorithm for
the AES" (Massey, Khachatrian, Kuregian; 12 June 1998),
shared/specs/saferplus-aes-submission.pdf (numbers read from the decoded text
layer saferplus-aes-submission.decoded.txt; PDF page numbers):

  * exp[x] = 45^x mod 257 (45^128 = 256 represented by 0) and log = its
    inverse (log 0 = 128): Sec. 2.1.1, p4;
  * bias words B2..B17:  B_ij = 45^(45^(17i+j) mod 257) mod 257,
    B18..B33:            B_ij = 45^(17i+j) mod 257  (256 -> 0), j = 1..16,
    Sec. 2.1.3 p8; checked against Table I (p9) when the decoded text is there;
  * the matrix M (p5): y = xM mod 256.  The script recovers the butterfly
    network behind it ("realized by 64 PHT butterflies arranged in four
    levels", Sec. 3, p22): M = H.S.H.S.H.S.H where H applies the 2-point
    PHT (a, b) -> (2a+b, a+b) to the byte pairs (1,2), (3,4), ... and S is a
    fixed shuffle, new[j] = old[sigma[j]].  sigma is found by search (it is
    unique) and the resulting matrix is compared with M entry by entry; the
    inverse network is checked against M^-1 as printed on p6.

Written between the GENERATED markers of ref.c: the exp/log tables, the
bias words, and two macros SAFERP_M / SAFERP_MINV that apply the network to
16 local variables named x0..x15 (byte j of the block = x<j>); ref.c defines
PHT, IPHT (one butterfly each on 8 pairs) and SAFERP_RENAME (x_j = the
j-th argument, a parallel assignment).

Usage:
  python3 gen_tables.py [--check | --print]     (see ../gentables.py)
"""
import itertools
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import gentables as gt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DECODED = os.path.join(HERE, "..", "..", "..", "..", "shared", "specs",
                       "saferplus-aes-submission.decoded.txt")

# Matrix M, Sec. 2.1.1 (PDF p5), row i = coefficients of x_(i+1).
M = [
    [2, 2, 1, 1, 16, 8, 2, 1, 4, 2, 4, 2, 1, 1, 4, 4],
    [1, 1, 1, 1, 8, 4, 2, 1, 2, 1, 4, 2, 1, 1, 2, 2],
    [1, 1, 4, 4, 2, 1, 4, 2, 4, 2, 16, 8, 2, 2, 1, 1],
    [1, 1, 2, 2, 2, 1, 2, 1, 4, 2, 8, 4, 1, 1, 1, 1],
    [4, 4, 2, 1, 4, 2, 4, 2, 16, 8, 1, 1, 1, 1, 2, 2],
    [2, 2, 2, 1, 2, 1, 4, 2, 8, 4, 1, 1, 1, 1, 1, 1],
    [1, 1, 4, 2, 4, 2, 16, 8, 2, 1, 2, 2, 4, 4, 1, 1],
    [1, 1, 2, 1, 4, 2, 8, 4, 2, 1, 1, 1, 2, 2, 1, 1],
    [2, 1, 16, 8, 1, 1, 2, 2, 1, 1, 4, 4, 4, 2, 4, 2],
    [2, 1, 8, 4, 1, 1, 1, 1, 1, 1, 2, 2, 4, 2, 2, 1],
    [4, 2, 4, 2, 4, 4, 1, 1, 2, 2, 1, 1, 16, 8, 2, 1],
    [2, 1, 4, 2, 2, 2, 1, 1, 1, 1, 1, 1, 8, 4, 2, 1],
    [4, 2, 2, 2, 1, 1, 4, 4, 1, 1, 4, 2, 2, 1, 16, 8],
    [4, 2, 1, 1, 1, 1, 2, 2, 1, 1, 2, 1, 2, 1, 8, 4],
    [16, 8, 1, 1, 2, 2, 1, 1, 4, 4, 2, 1, 4, 2, 4, 2],
    [8, 4, 1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 2, 1, 4, 2],
]
# First row of M^-1 (p6), as a spot check of the inverse network.
MINV_ROW0 = [2, 254, 1, 254, 1, 255, 4, 248, 2, 252, 1, 255, 1, 254, 1, 255]

# ---------------------------------------------------------------- exp / log
EXP = [pow(45, x, 257) % 256 for x in range(256)]  # 45^128 = 256 -> 0
LOG = [0] * 256
for _x, _y in enumerate(EXP):
    LOG[_y] = _x
assert sorted(EXP) == list(range(256)) and LOG[0] == 128 and EXP[128] == 0


# ------------------------------------------------------------- bias words
def bias(i, j):
    if i <= 17:
        return pow(45, pow(45, 17 * i + j, 257), 257) % 256
    return pow(45, 17 * i + j, 257) % 256


BIAS = [[bias(i, j) for j in range(1, 17)] for i in range(2, 34)]  # B2..B33


def check_bias_against_table():
    """Compare with Table I (PDF p9) in the decoded text, if it is available."""
    if not os.path.exists(DECODED):
        return False
    page = open(DECODED, encoding="utf-8", errors="replace").read().split("\f")[8]
    rows = []
    for line in page.split("\n"):
        nums = line.split()
        if len(nums) == 16 and all(n.isdigit() for n in nums):
            rows.append([int(n) for n in nums])
    assert rows == BIAS, "bias words differ from Table I"
    return True


# ------------------------------------------------------------ PHT network
def pht_layer(v):
    out = list(v)
    for m in range(8):
        a, b = v[2 * m], v[2 * m + 1]
        out[2 * m], out[2 * m + 1] = 2 * a + b, a + b
    return out


def network(x, sigma):
    v = pht_layer(x)
    for _ in range(3):
        v = [v[sigma[j]] for j in range(16)]
        v = pht_layer(v)
    return v


def undo_pair(c, d):
    a = [p - q for p, q in zip(c, d)]
    b = [2 * q - p for p, q in zip(c, d)]
    return (a, b) if min(a) >= 0 and min(b) >= 0 else None


def find_sigma():
    """Undo the last PHT layer of M (fixed pairs), then find which columns
    pair up as the outputs of the previous layer's butterflies (an ordered
    pairing with non-negative inverse), then try every assignment of those
    pairs to butterfly positions and keep the shuffles that rebuild M."""
    cols = [[M[i][j] for i in range(16)] for j in range(16)]
    level = []
    for m in range(8):
        a, b = undo_pair(cols[2 * m], cols[2 * m + 1])
        level += [a, b]

    def pairings(rem):
        if not rem:
            yield []
            return
        i = rem[0]
        for j in rem[1:]:
            rest = [k for k in rem if k not in (i, j)]
            for c, d in ((i, j), (j, i)):
                if undo_pair(level[c], level[d]):
                    for tail in pairings(rest):
                        yield [(c, d)] + tail

    found = []
    for pairs in pairings(list(range(16))):
        for order in itertools.permutations(range(8)):
            sigma = [0] * 16
            for m, p in enumerate(order):
                sigma[pairs[p][0]], sigma[pairs[p][1]] = 2 * m, 2 * m + 1
            if all(network([int(i == k) for i in range(16)], sigma) == M[k] for k in range(16)):
                found.append(sigma)
    assert len(found) == 1, found
    return found[0]


SIGMA = find_sigma()


def check_inverse(sigma):
    """The inverse network must give M^-1 (p6) mod 256."""
    inv = [0] * 16
    for j, s in enumerate(sigma):
        inv[s] = j

    def inverse_network(y):
        v = list(y)
        for level in range(4):
            for m in range(8):
                p, q = v[2 * m], v[2 * m + 1]
                a = (p - q) % 256
                v[2 * m], v[2 * m + 1] = a, (q - a) % 256
            if level < 3:
                v = [v[inv[j]] for j in range(16)]
        return v

    row0 = inverse_network([int(i == 0) for i in range(16)])
    assert row0 == MINV_ROW0, row0
    for k in range(16):
        e = [int(i == k) for i in range(16)]
        assert inverse_network([t % 256 for t in network(e, sigma)]) == e


check_inverse(SIGMA)


def network_code(sigma, inverse):
    """C statements over x0..x15.  Position p of the current level is held by
    variable name[p]; shuffles are renamings, so only PHTs emit code."""
    lines = []
    if not inverse:
        name = ["x%d" % i for i in range(16)]
        for level in range(4):
            lines.append("PHT(%s) " % ", ".join(
                "%s, %s" % (name[2 * m], name[2 * m + 1]) for m in range(8)))
            if level < 3:
                name = [name[sigma[j]] for j in range(16)]
        # the result for output byte j is in name[j]
        return lines, name
    # inverse: positions at the end are x0..x15 (output of the forward net);
    # walk back: undo layer 4 on final positions, then un-shuffle, ...
    name = ["x%d" % i for i in range(16)]
    inv = [0] * 16
    for j, s in enumerate(sigma):
        inv[s] = j
    for level in range(4):
        lines.append("IPHT(%s) " % ", ".join(
            "%s, %s" % (name[2 * m], name[2 * m + 1]) for m in range(8)))
        if level < 3:
            name = [name[inv[j]] for j in range(16)]
    return lines, name


def macro(mname, sigma, inverse, comment):
    lines, final = network_code(sigma, inverse)
    out = ["/* %s */" % comment, "#define %s \\" % mname]
    out += ["    %s\\" % ln for ln in lines]
    out.append("    SAFERP_RENAME(%s)" % ", ".join(final))
    return out


def render():
    out = [gt.c_array("static const uint8_t saferp_exp[256]", EXP, "%3d", 16, comment=(
               "exp[x] = 45^x mod 257 (256 -> 0), log = inverse (log 0 = 128); Sec. 2.1.1, PDF p4.  By gen_tables.py.")),
           gt.c_array("static const uint8_t saferp_log[256]", LOG, "%3d", 16),
           "",
           gt.c_array_2d("static const uint8_t saferp_bias[32][16]", BIAS, "%3d", 16, inline=True, comment=(
               "Bias words B2..B33 (bias[i-2] = B_i): formulas of Sec. 2.1.3 (PDF p8), equal to Table I (p9).\n"
               "By gen_tables.py.")),
           "",
           "/* y = xM (p5) as 4 levels of 8 PHT butterflies with the shuffle sigma = {%s}" % ", ".join(map(str, SIGMA)),
           " * (new[j] = old[sigma[j]], 0-based) between levels; sigma recovered from M by gen_tables.py. */"]
    out += macro("SAFERP_M", SIGMA, False, "y = xM on x0..x15 (byte j in xj); the result is renamed back into x0..x15")
    out.append("")
    out += macro("SAFERP_MINV", SIGMA, True, "x = yM^-1 (p6): the same network run backwards")
    return "\n".join(out)


def generate(args):
    if not check_bias_against_table():
        print("note: Table I not found, bias words not cross-checked", file=sys.stderr)
    return [gt.Block("ref.c", render())]


if __name__ == "__main__":
    gt.main(__file__, generate, __doc__)

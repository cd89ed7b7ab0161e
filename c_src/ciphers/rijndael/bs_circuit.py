"""Boolean circuits for the Rijndael S-box and inverse S-box (used by gen_tables.py for bitslice64.c).

Derived here from the mathematics, not taken from any published gate list:

* FIPS-197 Sec. 5.1.1 (PDF p19): S(x) = A * x^-1 + {63} in GF(2^8) = GF(2)[x]/(x^8+x^4+x^3+x+1),
  A the affine matrix of eq. 5.1; the inverse S-box is x -> (A^-1 (x + {63}))^-1 (Sec. 5.3.2).
* The inverse is computed in an isomorphic tower field (the idea of Rijmen's and Satoh et al.'s
  compact AES hardware, and Canright's "A very compact Rijndael S-box", 2005):
      GF(4)   = GF(2)[w]/(w^2 + w + 1)
      GF(16)  = GF(4)[z]/(z^2 + z + phi)
      GF(256) = GF(16)[y]/(y^2 + y + lam)
  all in polynomial bases, where for an element a = ah*t + al of a quadratic extension
  GF(q^2) = GF(q)[t]/(t^2 + t + n):
      a * (ah*t + ah + al) = ah^2 n + ah al + al^2 =: d   (in GF(q)),
      a^-1 = (ah d^-1) t + (ah + al) d^-1,  and 0 maps to 0 because d = 0 then.
  In GF(4) the inverse is the square, (a1 w + a0)^2 = a1 w + (a1 + a0), a linear map.
  A GF(4) product is 3 ANDs, a GF(16) product 3 GF(4) products (Karatsuba), so the GF(256) inverse is
  9 (d: ah*al) + 9 (d^-1) + 18 (two products by d^-1) = 36 ANDs plus XORs.
* The change of basis from FIPS-197's polynomial basis to the tower basis is the GF(2)-linear map
  x^i -> beta^i, beta a root of x^8+x^4+x^3+x+1 in the tower field.  It is merged with the affine map
  (S-box: output side; inverse S-box: input side), and each 8x8 matrix becomes XOR gates by Paar's
  greedy common-pair elimination.  phi, lam and beta are chosen to minimise the gate count.

Every signal carries its truth table over the 256 inputs (a 256-bit integer), so the circuits are
checked exhaustively against the S-box computed from the definition.
"""

from __future__ import annotations

from itertools import combinations


# ------------------------------------------------------------------ tower-field arithmetic on ints
# A GF(4) element is 2 bits (bit 1: coefficient of w), GF(16) 4 bits (bits 3..2: coefficient of z),
# GF(256) 8 bits (bits 7..4: coefficient of y).
def gf4_mul(a: int, b: int) -> int:
    a1, a0, b1, b0 = a >> 1, a & 1, b >> 1, b & 1
    p, q, r = a1 & b1, a0 & b0, (a1 ^ a0) & (b1 ^ b0)
    return ((r ^ q) << 1) | (p ^ q)


def gf16_mul(a: int, b: int, phi: int) -> int:
    ah, al, bh, bl = a >> 2, a & 3, b >> 2, b & 3
    hh, ll = gf4_mul(ah, bh), gf4_mul(al, bl)
    mid = gf4_mul(ah ^ al, bh ^ bl)
    return ((mid ^ ll) << 2) | (gf4_mul(hh, phi) ^ ll)


def gf256t_mul(a: int, b: int, phi: int, lam: int) -> int:
    ah, al, bh, bl = a >> 4, a & 15, b >> 4, b & 15
    hh, ll = gf16_mul(ah, bh, phi), gf16_mul(al, bl, phi)
    mid = gf16_mul(ah ^ al, bh ^ bl, phi)
    return ((mid ^ ll) << 4) | (gf16_mul(hh, lam, phi) ^ ll)


def irreducible(mul, n: int, size: int) -> bool:
    """t^2 + t + n has no root in the base field of `size` elements (so the extension is a field)."""
    return all(mul(t, t) ^ t ^ n for t in range(size))


# ------------------------------------------------------------------ circuits with truth tables
FULL = (1 << 256) - 1


class Circuit:
    """Gates over 64-bit planes; signal ids index self.ops, self.tt holds each truth table."""

    def __init__(self) -> None:
        self.ops: list[tuple] = []      # ("in", i) / ("xor", a, b) / ("and", a, b) / ("not", a)
        self.tt: list[int] = []
        self.memo: dict[tuple, int] = {}

    def _add(self, op: tuple, tt: int) -> int:
        if op in self.memo:
            return self.memo[op]
        self.ops.append(op)
        self.tt.append(tt)
        self.memo[op] = len(self.ops) - 1
        return len(self.ops) - 1

    def input(self, i: int) -> int:
        tt = sum(1 << x for x in range(256) if (x >> i) & 1)
        return self._add(("in", i), tt)

    def xor(self, a: int, b: int) -> int:
        a, b = min(a, b), max(a, b)
        return self._add(("xor", a, b), self.tt[a] ^ self.tt[b])

    def and_(self, a: int, b: int) -> int:
        a, b = min(a, b), max(a, b)
        return self._add(("and", a, b), self.tt[a] & self.tt[b])

    def not_(self, a: int) -> int:
        return self._add(("not", a), self.tt[a] ^ FULL)

    # GF(4) values are (hi, lo) pairs of signals
    def gf4_mul(self, a, b):
        p, q = self.and_(a[0], b[0]), self.and_(a[1], b[1])
        r = self.and_(self.xor(a[0], a[1]), self.xor(b[0], b[1]))
        return (self.xor(r, q), self.xor(p, q))

    def gf4_sq(self, a):
        return (a[0], self.xor(a[0], a[1]))

    def gf4_scale(self, a, c: int):
        """a times the constant c of GF(4) (a linear map)."""
        if c == 1:
            return a
        if c == 2:   # w (a1 w + a0) = a1 (w + 1) + a0 w = (a1 + a0) w + a1
            return (self.xor(a[0], a[1]), a[0])
        if c == 3:   # (w + 1) a = w a + a
            return (a[1], self.xor(a[0], a[1]))
        raise ValueError(c)

    # GF(16) values are (hi, lo) pairs of GF(4) values
    def gf4_add(self, a, b):
        return (self.xor(a[0], b[0]), self.xor(a[1], b[1]))

    def gf16_mul(self, a, b, phi):
        hh, ll = self.gf4_mul(a[0], b[0]), self.gf4_mul(a[1], b[1])
        mid = self.gf4_mul(self.gf4_add(a[0], a[1]), self.gf4_add(b[0], b[1]))
        return (self.gf4_add(mid, ll), self.gf4_add(self.gf4_scale(hh, phi), ll))

    def gf16_sq_scale(self, a, phi, lam):
        """a^2 * lam for a in GF(16), lam a constant: linear over GF(2), built from its matrix."""
        return self.linear4(a, lambda v: gf16_mul(gf16_mul(v, v, phi), lam, phi))

    def linear4(self, a, fn):
        bits = [a[0][0], a[0][1], a[1][0], a[1][1]]           # bit 3, 2, 1, 0
        out = []
        for ob in (3, 2, 1, 0):
            terms = [bits[3 - ib] for ib in range(4) if (fn(1 << ib) >> ob) & 1]
            out.append(self.xor_all(terms))
        return ((out[0], out[1]), (out[2], out[3]))

    def xor_all(self, terms):
        assert terms
        s = terms[0]
        for t in terms[1:]:
            s = self.xor(s, t)
        return s

    def gf16_inv(self, a, phi):
        # d = ah^2 phi + ah al + al^2 in GF(4); d^-1 = d^2
        ah, al = a
        d = self.gf4_add(self.gf4_add(self.gf4_scale(self.gf4_sq(ah), phi), self.gf4_mul(ah, al)),
                         self.gf4_sq(al))
        di = self.gf4_sq(d)
        return (self.gf4_mul(ah, di), self.gf4_mul(self.gf4_add(ah, al), di))

    def gf16_add(self, a, b):
        return (self.gf4_add(a[0], b[0]), self.gf4_add(a[1], b[1]))

    def gf256_inv(self, bits, phi, lam):
        """bits: 8 signals, bits[i] = tower bit i; returns 8 signals of the inverse."""
        ah = ((bits[7], bits[6]), (bits[5], bits[4]))
        al = ((bits[3], bits[2]), (bits[1], bits[0]))
        d = self.gf16_add(self.gf16_add(self.gf16_sq_scale(ah, phi, lam), self.gf16_mul(ah, al, phi)),
                          self.gf16_sq(al, phi))
        di = self.gf16_inv(d, phi)
        oh = self.gf16_mul(ah, di, phi)
        ol = self.gf16_mul(self.gf16_add(ah, al), di, phi)
        return [ol[1][1], ol[1][0], ol[0][1], ol[0][0], oh[1][1], oh[1][0], oh[0][1], oh[0][0]]

    def gf16_sq(self, a, phi):
        return self.linear4(a, lambda v: gf16_mul(v, v, phi))

    def linear8(self, ins, matrix, const=0):
        """out bit r = XOR of ins[c] for matrix[r] bit c (+ const bit r, a NOT), Paar's greedy
        elimination: repeatedly give the pair of signals shared by the most rows its own gate."""
        rows = [{ins[c] for c in range(8) if (matrix[r] >> c) & 1} for r in range(8)]
        while True:
            count: dict[tuple, int] = {}
            for row in rows:
                for p in combinations(sorted(row), 2):
                    count[p] = count.get(p, 0) + 1
            if not count or max(count.values()) < 2:
                break
            best = max(sorted(count), key=lambda p: count[p])
            g = self.xor(*best)
            for row in rows:
                if best[0] in row and best[1] in row:
                    row -= set(best)
                    row.add(g)
        out = []
        for r, row in enumerate(rows):
            s = self.xor_all(sorted(row))
            out.append(self.not_(s) if (const >> r) & 1 else s)
        return out


# ------------------------------------------------------------------ GF(2) matrices
def mat_apply(m: list[int], v: int) -> int:
    return sum(((bin(m[r] & v).count("1") & 1) << r) for r in range(8))


def mat_from_fn(fn) -> list[int]:
    """Row r bit c = bit r of fn(1 << c)."""
    cols = [fn(1 << c) for c in range(8)]
    return [sum(((cols[c] >> r) & 1) << c for c in range(8)) for r in range(8)]


def mat_inv(m: list[int]) -> list[int]:
    table = {mat_apply(m, v): v for v in range(256)}
    assert len(table) == 256, "singular matrix"
    return mat_from_fn(lambda v: table[v])


# ------------------------------------------------------------------ building and choosing
def build(sbox: list[int], gmul, affine, phi: int, lam: int, beta: int, inverse: bool) -> Circuit:
    tmul = lambda a, b: gf256t_mul(a, b, phi, lam)  # noqa: E731
    powers = [1]
    for _ in range(7):
        powers.append(tmul(powers[-1], beta))
    # M: FIPS-197 basis -> tower basis (x^i -> beta^i)
    M = mat_from_fn(lambda v: _xor_reduce(powers[i] for i in range(8) if (v >> i) & 1))
    Mi = mat_inv(M)
    A = mat_from_fn(lambda v: affine(v) ^ affine(0))
    Ai = mat_inv(A)
    c = Circuit()
    ins = [c.input(i) for i in range(8)]
    if not inverse:   # S(x) = A M^-1 inv(M x) + 63
        t = c.linear8(ins, M)
        u = c.gf256_inv(t, phi, lam)
        out = c.linear8(u, mat_mul(A, Mi), affine(0))
    else:             # Si(x) = M^-1 inv(M A^-1 x + M A^-1 63)
        MAi = mat_mul(M, Ai)
        t = c.linear8(ins, MAi, mat_apply(MAi, affine(0)))
        u = c.gf256_inv(t, phi, lam)
        out = c.linear8(u, Mi)
    c.outputs = out
    want = sbox if not inverse else _inverse_perm(sbox)
    for i, o in enumerate(out):
        expect = sum(1 << x for x in range(256) if (want[x] >> i) & 1)
        assert c.tt[o] == expect, f"circuit output bit {i} differs from the S-box"
    return c


def mat_mul(a: list[int], b: list[int]) -> list[int]:
    return mat_from_fn(lambda v: mat_apply(a, mat_apply(b, v)))


def _xor_reduce(it) -> int:
    r = 0
    for x in it:
        r ^= x
    return r


def _inverse_perm(s: list[int]) -> list[int]:
    inv = [0] * 256
    for x, y in enumerate(s):
        inv[y] = x
    return inv


def live_gates(c: Circuit) -> list[int]:
    """Gate ids the outputs depend on, in creation (topological) order."""
    need = set()
    stack = list(c.outputs)
    while stack:
        g = stack.pop()
        if g in need:
            continue
        need.add(g)
        stack.extend(x for x in c.ops[g][1:] if c.ops[g][0] != "in")
    return sorted(need)


def cost(c: Circuit) -> tuple[int, int, int]:
    ops = [c.ops[g][0] for g in live_gates(c)]
    return ops.count("and"), ops.count("xor"), ops.count("not")


def best_circuits(sbox, gmul, affine):
    """Try every phi, lam that give a field and every root beta; keep the fewest gates (S + S^-1)."""
    best = None
    for phi in (2, 3):
        if not irreducible(gf4_mul, phi, 4):
            continue
        for lam in range(1, 16):
            if not irreducible(lambda a, b: gf16_mul(a, b, phi), lam, 16):
                continue
            tmul = lambda a, b: gf256t_mul(a, b, phi, lam)  # noqa: E731
            for beta in range(2, 256):
                # x^8 + x^4 + x^3 + x + 1 evaluated at beta
                p = [1]
                for _ in range(8):
                    p.append(tmul(p[-1], beta))
                if p[8] ^ p[4] ^ p[3] ^ p[1] ^ p[0]:
                    continue
                enc = build(sbox, gmul, affine, phi, lam, beta, False)
                dec = build(sbox, gmul, affine, phi, lam, beta, True)
                total = sum(cost(enc)) + sum(cost(dec))
                if best is None or total < best[0]:
                    best = (total, phi, lam, beta, enc, dec)
    assert best is not None
    return best


def to_c(c: Circuit, name: str, doc: str) -> str:
    """A static function transforming q[0..7] (plane i = bit i of every byte) in place."""
    gates = live_gates(c)
    names: dict[int, str] = {}
    lines = [f"/* {doc} */", f"static void {name}(uint64_t *q)", "{"]
    body = []
    k = 0
    for g in gates:
        op = c.ops[g]
        if op[0] == "in":
            names[g] = f"x{op[1]}"
            body.append(f"    const uint64_t x{op[1]} = q[{op[1]}];")
            continue
        names[g] = f"t{k}"
        k += 1
        if op[0] == "not":
            expr = f"~{names[op[1]]}"
        else:
            expr = f"{names[op[1]]} {'^' if op[0] == 'xor' else '&'} {names[op[2]]}"
        body.append(f"    const uint64_t {names[g]} = {expr};")
    body.sort(key=lambda s: 0 if " x" in s.split("=")[0] else 1)   # inputs first
    lines += body
    lines += [f"    q[{i}] = {names[o]};" for i, o in enumerate(c.outputs)]
    lines.append("}")
    return "\n".join(lines)


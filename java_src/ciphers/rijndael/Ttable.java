package cipherlab.ciphers.rijndael;

import cipherlab.BlockCipher;
import cipherlab.Bytes;

/**
 * Rijndael / AES with 32-bit T-tables (see BlockCipher), written from FIPS-197 and Daemen & Rijmen's AES
 * proposal (1998), Sec. 5.2.1 (ByteSub, ShiftRow and MixColumn as four lookups per column) and Sec. 5.3 (the
 * equivalent inverse cipher: InvMixColumns folded into the decryption round keys, FIPS-197 Fig. 15).
 *
 * <p>Column c of the state is the big-endian word at in[4c..4c+3] (row 0 the most significant byte), so
 * RotWord is a rotation by 8.  Tables are computed when the class loads from the definitions of FIPS-197
 * Sec. 5.1.1 (S-box: GF(2^8) inverse then the affine map) and Sec. 5.1.3 / 5.3.3 (MixColumns and
 * InvMixColumns coefficients), one flat int[4*256] array per direction (see TE below), two rounds per loop
 * turn as in c_src/ciphers/rijndael/ttable.c.
 * Not constant time: table indices depend on key and data.
 */
public final class Ttable implements BlockCipher {
    private static final int[] S = new int[256], SI = new int[256];
    // TE[256 * j + x] = Te_j[x] (the column of MixColumns of S[x] rotated right by 8j), TD likewise for the inverse
    // cipher, SE[256 * j + x] = S[x] in row j (shifted to its byte), so the last round needs no shifts.  One
    // array per kind, not four: C2 keeps one base register per array, and four table bases, the round key and the
    // eight state words do not fit the registers x86-64 leaves it (with the four of them it spilled).  The arrays
    // are static final, so C2 knows their length and drops the bounds checks of indices it can bound
    // (256 * j + a byte).
    private static final int[] TE = new int[1024], TD = new int[1024], SE = new int[1024];
    private static int mul(int a, int b) { // GF(2^8) product modulo x^8+x^4+x^3+x+1 (FIPS-197 Sec. 4.2)
        int p = 0;
        for (; b != 0; b >>>= 1) {
            if ((b & 1) != 0)
                p ^= a;
            a = (a << 1) ^ ((a & 0x80) != 0 ? 0x11b : 0);
        }
        return p;
    }

    static {
        for (int x = 0; x < 256; x++) {
            int inv = 0;
            for (int y = 1; y < 256 && x != 0; y++)
                if (mul(x, y) == 1)
                    inv = y;
            int s = inv;
            for (int i = 1; i <= 4; i++) // b'_i = b_i ^ b_(i+4) ^ b_(i+5) ^ b_(i+6) ^ b_(i+7) ^ c_i, c = 0x63
                s ^= ((inv << i) | (inv >>> (8 - i))) & 0xff;
            s ^= 0x63;
            S[x] = s;
            SI[s] = x;
        }
        for (int x = 0; x < 256; x++) {
            int s = S[x], si = SI[x];
            int te = (mul(s, 2) << 24) | (s << 16) | (s << 8) | mul(s, 3);
            int td = (mul(si, 14) << 24) | (mul(si, 9) << 16) | (mul(si, 13) << 8) | mul(si, 11);
            for (int j = 0; j < 4; j++) {
                TE[256 * j + x] = Integer.rotateRight(te, 8 * j);
                TD[256 * j + x] = Integer.rotateRight(td, 8 * j);
                SE[256 * j + x] = s << (24 - 8 * j);
            }
        }
    }

    private final int[] rk = new int[60], tmp = new int[60];
    private int rounds;

    @Override
    public int blockBytes() {
        return 16;
    }

    @Override
    public int[] keyBits() {
        return new int[] {128, 192, 256};
    }

    @Override
    public int tableBytes() {
        return 3 * 1024 * 4 + 2 * 256 * 4;
    }

    @Override
    public int scheduleBytes() {
        return rk.length * 4 + 4;
    }

    private static int subWord(int w) {
        return (S[w >>> 24] << 24) | (S[(w >>> 16) & 0xff] << 16) | (S[(w >>> 8) & 0xff] << 8) | S[w & 0xff];
    }

    /** KeyExpansion, FIPS-197 Fig. 11; returns the number of rounds or 0 for a bad length. */
    private int expand(byte[] key, int bits) {
        if (bits != 128 && bits != 192 && bits != 256)
            return 0;
        int nk = bits / 32, nr = nk + 6;
        for (int i = 0; i < nk; i++)
            rk[i] = Bytes.load32be(key, 4 * i);
        int rcon = 1;
        for (int i = nk; i < 4 * (nr + 1); i++) {
            int t = rk[i - 1];
            if (i % nk == 0) {
                t = subWord(Integer.rotateLeft(t, 8)) ^ (rcon << 24);
                rcon = mul(rcon, 2);
            } else if (nk > 6 && i % nk == 4) {
                t = subWord(t);
            }
            rk[i] = rk[i - nk] ^ t;
        }
        return nr;
    }

    @Override
    public int setEncryptKey(byte[] key, int bits) {
        rounds = expand(key, bits);
        return rounds == 0 ? BAD_KEY_LENGTH : OK;
    }

    @Override
    public int setDecryptKey(byte[] key, int bits) {
        int nr = expand(key, bits);
        if (nr == 0)
            return BAD_KEY_LENGTH;
        // equivalent inverse cipher: round keys in reverse order, InvMixColumns on rounds 1..Nr-1
        int[] w = tmp;
        System.arraycopy(rk, 0, w, 0, rk.length);
        for (int r = 0; r <= nr; r++)
            for (int j = 0; j < 4; j++) {
                int k = w[4 * (nr - r) + j];
                if (r > 0 && r < nr)
                    k = TD[S[k >>> 24]] ^ TD[256 + S[(k >>> 16) & 0xff]] ^ TD[512 + S[(k >>> 8) & 0xff]]
                            ^ TD[768 + S[k & 0xff]];
                rk[4 * r + j] = k;
            }
        rounds = nr;
        return OK;
    }

    @Override
    public void encrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        final int[] k = rk, te = TE, se = SE;
        final int half = rounds >>> 1;
        for (int b = 0; b < nblocks; b++, inOff += 16, outOff += 16) {
            int s0 = Bytes.load32be(in, inOff) ^ k[0], s1 = Bytes.load32be(in, inOff + 4) ^ k[1];
            int s2 = Bytes.load32be(in, inOff + 8) ^ k[2], s3 = Bytes.load32be(in, inOff + 12) ^ k[3];
            int t0, t1, t2, t3, i = 4;
            // Nr-1 full rounds, two per turn (s -> t -> s), the last one (t) leaves the loop before the second half
            for (int r = half;;) {
                t0 = te[s0 >>> 24] ^ te[256 + ((s1 >>> 16) & 0xff)] ^ te[512 + ((s2 >>> 8) & 0xff)] ^ te[768 + (s3 & 0xff)] ^ k[i];
                t1 = te[s1 >>> 24] ^ te[256 + ((s2 >>> 16) & 0xff)] ^ te[512 + ((s3 >>> 8) & 0xff)] ^ te[768 + (s0 & 0xff)] ^ k[i + 1];
                t2 = te[s2 >>> 24] ^ te[256 + ((s3 >>> 16) & 0xff)] ^ te[512 + ((s0 >>> 8) & 0xff)] ^ te[768 + (s1 & 0xff)] ^ k[i + 2];
                t3 = te[s3 >>> 24] ^ te[256 + ((s0 >>> 16) & 0xff)] ^ te[512 + ((s1 >>> 8) & 0xff)] ^ te[768 + (s2 & 0xff)] ^ k[i + 3];
                i += 8;
                if (--r == 0)
                    break;
                s0 = te[t0 >>> 24] ^ te[256 + ((t1 >>> 16) & 0xff)] ^ te[512 + ((t2 >>> 8) & 0xff)] ^ te[768 + (t3 & 0xff)] ^ k[i - 4];
                s1 = te[t1 >>> 24] ^ te[256 + ((t2 >>> 16) & 0xff)] ^ te[512 + ((t3 >>> 8) & 0xff)] ^ te[768 + (t0 & 0xff)] ^ k[i - 3];
                s2 = te[t2 >>> 24] ^ te[256 + ((t3 >>> 16) & 0xff)] ^ te[512 + ((t0 >>> 8) & 0xff)] ^ te[768 + (t1 & 0xff)] ^ k[i - 2];
                s3 = te[t3 >>> 24] ^ te[256 + ((t0 >>> 16) & 0xff)] ^ te[512 + ((t1 >>> 8) & 0xff)] ^ te[768 + (t2 & 0xff)] ^ k[i - 1];
            }
            i -= 4; // the last round key (SubBytes and ShiftRows from SE: each byte already in its row)
            Bytes.store32be(out, outOff, (se[t0 >>> 24] ^ se[256 + ((t1 >>> 16) & 0xff)] ^ se[512 + ((t2 >>> 8) & 0xff)] ^ se[768 + (t3 & 0xff)]) ^ k[i]);
            Bytes.store32be(out, outOff + 4, (se[t1 >>> 24] ^ se[256 + ((t2 >>> 16) & 0xff)] ^ se[512 + ((t3 >>> 8) & 0xff)] ^ se[768 + (t0 & 0xff)]) ^ k[i + 1]);
            Bytes.store32be(out, outOff + 8, (se[t2 >>> 24] ^ se[256 + ((t3 >>> 16) & 0xff)] ^ se[512 + ((t0 >>> 8) & 0xff)] ^ se[768 + (t1 & 0xff)]) ^ k[i + 2]);
            Bytes.store32be(out, outOff + 12, (se[t3 >>> 24] ^ se[256 + ((t0 >>> 16) & 0xff)] ^ se[512 + ((t1 >>> 8) & 0xff)] ^ se[768 + (t2 & 0xff)]) ^ k[i + 3]);
        }
    }

    private static int lastDec(int a, int b, int c, int d) {
        return (SI[a >>> 24] << 24) | (SI[(b >>> 16) & 0xff] << 16) | (SI[(c >>> 8) & 0xff] << 8) | SI[d & 0xff];
    }

    @Override
    public void decrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        final int[] k = rk, td = TD;
        final int half = rounds >>> 1;
        for (int b = 0; b < nblocks; b++, inOff += 16, outOff += 16) {
            int s0 = Bytes.load32be(in, inOff) ^ k[0], s1 = Bytes.load32be(in, inOff + 4) ^ k[1];
            int s2 = Bytes.load32be(in, inOff + 8) ^ k[2], s3 = Bytes.load32be(in, inOff + 12) ^ k[3];
            int t0, t1, t2, t3, i = 4;
            for (int r = half;;) {
                t0 = td[s0 >>> 24] ^ td[256 + ((s3 >>> 16) & 0xff)] ^ td[512 + ((s2 >>> 8) & 0xff)] ^ td[768 + (s1 & 0xff)] ^ k[i];
                t1 = td[s1 >>> 24] ^ td[256 + ((s0 >>> 16) & 0xff)] ^ td[512 + ((s3 >>> 8) & 0xff)] ^ td[768 + (s2 & 0xff)] ^ k[i + 1];
                t2 = td[s2 >>> 24] ^ td[256 + ((s1 >>> 16) & 0xff)] ^ td[512 + ((s0 >>> 8) & 0xff)] ^ td[768 + (s3 & 0xff)] ^ k[i + 2];
                t3 = td[s3 >>> 24] ^ td[256 + ((s2 >>> 16) & 0xff)] ^ td[512 + ((s1 >>> 8) & 0xff)] ^ td[768 + (s0 & 0xff)] ^ k[i + 3];
                i += 8;
                if (--r == 0)
                    break;
                s0 = td[t0 >>> 24] ^ td[256 + ((t3 >>> 16) & 0xff)] ^ td[512 + ((t2 >>> 8) & 0xff)] ^ td[768 + (t1 & 0xff)] ^ k[i - 4];
                s1 = td[t1 >>> 24] ^ td[256 + ((t0 >>> 16) & 0xff)] ^ td[512 + ((t3 >>> 8) & 0xff)] ^ td[768 + (t2 & 0xff)] ^ k[i - 3];
                s2 = td[t2 >>> 24] ^ td[256 + ((t1 >>> 16) & 0xff)] ^ td[512 + ((t0 >>> 8) & 0xff)] ^ td[768 + (t3 & 0xff)] ^ k[i - 2];
                s3 = td[t3 >>> 24] ^ td[256 + ((t2 >>> 16) & 0xff)] ^ td[512 + ((t1 >>> 8) & 0xff)] ^ td[768 + (t0 & 0xff)] ^ k[i - 1];
            }
            i -= 4;
            Bytes.store32be(out, outOff, lastDec(t0, t3, t2, t1) ^ k[i]);
            Bytes.store32be(out, outOff + 4, lastDec(t1, t0, t3, t2) ^ k[i + 1]);
            Bytes.store32be(out, outOff + 8, lastDec(t2, t1, t0, t3) ^ k[i + 2]);
            Bytes.store32be(out, outOff + 12, lastDec(t3, t2, t1, t0) ^ k[i + 3]);
        }
    }
}

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
 * InvMixColumns coefficients), in four separate int arrays per direction (a Java array access carries a
 * bounds check against its own length, so one flat [4*256] array would cost an add per lookup).
 * Not constant time: table indices depend on key and data.
 */
public final class Ttable implements BlockCipher {
    private static final int[] S = new int[256], SI = new int[256];
    private static final int[] TE0 = new int[256], TE1 = new int[256], TE2 = new int[256], TE3 = new int[256];
    private static final int[] TD0 = new int[256], TD1 = new int[256], TD2 = new int[256], TD3 = new int[256];

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
            TE0[x] = te;
            TE1[x] = Integer.rotateRight(te, 8);
            TE2[x] = Integer.rotateRight(te, 16);
            TE3[x] = Integer.rotateRight(te, 24);
            TD0[x] = td;
            TD1[x] = Integer.rotateRight(td, 8);
            TD2[x] = Integer.rotateRight(td, 16);
            TD3[x] = Integer.rotateRight(td, 24);
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
        return 8 * 1024 + 2 * 256 * 4;
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
                    k = TD0[S[k >>> 24]] ^ TD1[S[(k >>> 16) & 0xff]] ^ TD2[S[(k >>> 8) & 0xff]] ^ TD3[S[k & 0xff]];
                rk[4 * r + j] = k;
            }
        rounds = nr;
        return OK;
    }

    @Override
    public void encrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        final int[] k = rk;
        final int nr = rounds;
        for (int b = 0; b < nblocks; b++, inOff += 16, outOff += 16) {
            int s0 = Bytes.load32be(in, inOff) ^ k[0], s1 = Bytes.load32be(in, inOff + 4) ^ k[1];
            int s2 = Bytes.load32be(in, inOff + 8) ^ k[2], s3 = Bytes.load32be(in, inOff + 12) ^ k[3];
            int i = 4;
            for (int r = 1; r < nr; r++, i += 4) {
                int t0 = TE0[s0 >>> 24] ^ TE1[(s1 >>> 16) & 0xff] ^ TE2[(s2 >>> 8) & 0xff] ^ TE3[s3 & 0xff] ^ k[i];
                int t1 = TE0[s1 >>> 24] ^ TE1[(s2 >>> 16) & 0xff] ^ TE2[(s3 >>> 8) & 0xff] ^ TE3[s0 & 0xff] ^ k[i + 1];
                int t2 = TE0[s2 >>> 24] ^ TE1[(s3 >>> 16) & 0xff] ^ TE2[(s0 >>> 8) & 0xff] ^ TE3[s1 & 0xff] ^ k[i + 2];
                int t3 = TE0[s3 >>> 24] ^ TE1[(s0 >>> 16) & 0xff] ^ TE2[(s1 >>> 8) & 0xff] ^ TE3[s2 & 0xff] ^ k[i + 3];
                s0 = t0;
                s1 = t1;
                s2 = t2;
                s3 = t3;
            }
            Bytes.store32be(out, outOff, lastEnc(s0, s1, s2, s3) ^ k[i]);
            Bytes.store32be(out, outOff + 4, lastEnc(s1, s2, s3, s0) ^ k[i + 1]);
            Bytes.store32be(out, outOff + 8, lastEnc(s2, s3, s0, s1) ^ k[i + 2]);
            Bytes.store32be(out, outOff + 12, lastEnc(s3, s0, s1, s2) ^ k[i + 3]);
        }
    }

    private static int lastEnc(int a, int b, int c, int d) { // SubBytes + ShiftRows of one column
        return (S[a >>> 24] << 24) | (S[(b >>> 16) & 0xff] << 16) | (S[(c >>> 8) & 0xff] << 8) | S[d & 0xff];
    }

    private static int lastDec(int a, int b, int c, int d) {
        return (SI[a >>> 24] << 24) | (SI[(b >>> 16) & 0xff] << 16) | (SI[(c >>> 8) & 0xff] << 8) | SI[d & 0xff];
    }

    @Override
    public void decrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        final int[] k = rk;
        final int nr = rounds;
        for (int b = 0; b < nblocks; b++, inOff += 16, outOff += 16) {
            int s0 = Bytes.load32be(in, inOff) ^ k[0], s1 = Bytes.load32be(in, inOff + 4) ^ k[1];
            int s2 = Bytes.load32be(in, inOff + 8) ^ k[2], s3 = Bytes.load32be(in, inOff + 12) ^ k[3];
            int i = 4;
            for (int r = 1; r < nr; r++, i += 4) {
                int t0 = TD0[s0 >>> 24] ^ TD1[(s3 >>> 16) & 0xff] ^ TD2[(s2 >>> 8) & 0xff] ^ TD3[s1 & 0xff] ^ k[i];
                int t1 = TD0[s1 >>> 24] ^ TD1[(s0 >>> 16) & 0xff] ^ TD2[(s3 >>> 8) & 0xff] ^ TD3[s2 & 0xff] ^ k[i + 1];
                int t2 = TD0[s2 >>> 24] ^ TD1[(s1 >>> 16) & 0xff] ^ TD2[(s0 >>> 8) & 0xff] ^ TD3[s3 & 0xff] ^ k[i + 2];
                int t3 = TD0[s3 >>> 24] ^ TD1[(s2 >>> 16) & 0xff] ^ TD2[(s1 >>> 8) & 0xff] ^ TD3[s0 & 0xff] ^ k[i + 3];
                s0 = t0;
                s1 = t1;
                s2 = t2;
                s3 = t3;
            }
            Bytes.store32be(out, outOff, lastDec(s0, s3, s2, s1) ^ k[i]);
            Bytes.store32be(out, outOff + 4, lastDec(s1, s0, s3, s2) ^ k[i + 1]);
            Bytes.store32be(out, outOff + 8, lastDec(s2, s1, s0, s3) ^ k[i + 2]);
            Bytes.store32be(out, outOff + 12, lastDec(s3, s2, s1, s0) ^ k[i + 3]);
        }
    }
}

package cipherlab.ciphers.loki97;

import cipherlab.BlockCipher;
import cipherlab.Bytes;

/**
 * LOKI97 with 64-bit arithmetic (see BlockCipher), written from L. Brown, J. Pieprzyk, "Introducing the new
 * LOKI97 Block Cipher" (June 12 1998), shared/specs/loki97-aes-submission.pdf, as c_src/ciphers/loki97/ref.c
 * reads it: data computation (16-round Feistel on two 64-bit halves, output [R16|L16]) Sec. 2.1 p1-p3; key
 * schedule (48 rounds, Delta = 9E3779B97F4A7C15) Sec. 2.2 p3; f(A,B) = Sb(P(Sa(E(KP(A,B)))), B) Sec. 2.3 p4-p5;
 * S1 = ((x ^ 1FFF)^3 mod 2911) &amp; FF in GF(2^13), S2 = ((x ^ 7FF)^3 mod AA7) &amp; FF in GF(2^11) Sec. 2.4 p5
 * (computed when the class loads).
 *
 * <p>Big-endian 64-bit halves (L = bytes 0..7, R = bytes 8..15; key [Ka|Kb|Kc|Kd] likewise).  f works on the
 * bit fields of one long; P is merged into the S2 outputs (S2P) and applied to S1 outputs through SPREAD.
 * Decryption runs the encryption loop on a schedule in decryption order with additive inverses (p3).
 */
public final class Ref implements BlockCipher {
    private static final long DELTA = 0x9E3779B97F4A7C15L; // floor((sqrt(5)-1) * 2^63), p3
    private static final int[] S1 = new int[8192], S2 = new int[2048];
    private static final long[] SPREAD = new long[256], S2P = new long[2048]; // bit j of v at bit 8j

    private static int cube(int x, int poly, int bits) { // x^3 modulo poly in GF(2^bits)
        int sq = mul(x, x, poly, bits);
        return mul(sq, x, poly, bits);
    }

    private static int mul(int a, int b, int poly, int bits) {
        int p = 0;
        for (; b != 0; b >>>= 1) {
            if ((b & 1) != 0)
                p ^= a;
            a <<= 1;
            if ((a >>> bits) != 0)
                a ^= poly;
        }
        return p;
    }

    static {
        for (int x = 0; x < 8192; x++)
            S1[x] = cube(x ^ 0x1FFF, 0x2911, 13) & 0xFF;
        for (int x = 0; x < 2048; x++)
            S2[x] = cube(x ^ 0x7FF, 0xAA7, 11) & 0xFF;
        for (int v = 0; v < 256; v++) {
            long s = 0;
            for (int j = 0; j < 8; j++)
                s |= (long) ((v >>> j) & 1) << (8 * j);
            SPREAD[v] = s;
        }
        for (int x = 0; x < 2048; x++)
            S2P[x] = SPREAD[S2[x]];
    }

    private final long[] sk = new long[48]; // three subkeys per round, in the order the loop uses them

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
        return (8192 + 2048) * 4 + (256 + 2048) * 8;
    }

    @Override
    public int scheduleBytes() {
        return 48 * 8;
    }

    /** f(A, B), Sec. 2.3 (p4-p5); bit 0 the least significant. */
    private static long f(long a, long b) {
        long m = (a ^ (a >>> 32)) & (b & 0xFFFFFFFFL); // KP: swap the bits of A's halves selected by B[31-0]
        a ^= m ^ (m << 32);
        // E selects [4-0,63-56] [58-48] [52-40] [42-32] [34-24] [28-16] [18-8] [12-0]; Sa = [S1,S2,S1,S2,S2,S1,
        // S2,S1]; P sends bit j of the a-th output to bit 8j+a
        long p = SPREAD[S1[(int) (Long.rotateLeft(a, 8) & 0x1FFF)]]
                | S2P[(int) ((a >>> 48) & 0x7FF)] << 1
                | SPREAD[S1[(int) ((a >>> 40) & 0x1FFF)]] << 2
                | S2P[(int) ((a >>> 32) & 0x7FF)] << 3
                | S2P[(int) ((a >>> 24) & 0x7FF)] << 4
                | SPREAD[S1[(int) ((a >>> 16) & 0x1FFF)]] << 5
                | S2P[(int) ((a >>> 8) & 0x7FF)] << 6
                | SPREAD[S1[(int) (a & 0x1FFF)]] << 7;
        // Sb = [S2,S2,S1,S1,S2,S2,S1,S1], top input bits B[63-61], B[60-58], B[57-53], B[52-48], B[47-45],
        // B[44-42], B[41-37], B[36-32] (Fig. p4)
        int hb = (int) (b >>> 32);
        return (long) S2[((hb >>> 21) & 0x700) | (int) (p >>> 56)] << 56
                | (long) S2[((hb >>> 18) & 0x700) | ((int) (p >>> 48) & 0xFF)] << 48
                | (long) S1[((hb >>> 13) & 0x1F00) | ((int) (p >>> 40) & 0xFF)] << 40
                | (long) S1[((hb >>> 8) & 0x1F00) | ((int) (p >>> 32) & 0xFF)] << 32
                | (long) S2[((hb >>> 5) & 0x700) | ((int) (p >>> 24) & 0xFF)] << 24
                | (long) S2[((hb >>> 2) & 0x700) | ((int) (p >>> 16) & 0xFF)] << 16
                | (long) S1[((hb << 3) & 0x1F00) | ((int) (p >>> 8) & 0xFF)] << 8
                | (long) S1[((hb << 8) & 0x1F00) | ((int) p & 0xFF)];
    }

    private static long load64be(byte[] b, int off) {
        return ((long) Bytes.load32be(b, off) << 32) | (Bytes.load32be(b, off + 4) & 0xffffffffL);
    }

    private static void store64be(byte[] b, int off, long v) {
        Bytes.store32be(b, off, (int) (v >>> 32));
        Bytes.store32be(b, off + 4, (int) v);
    }

    /** Sec. 2.2 (p3): SK_i = K4 ^ f(K1 + K3 + i*Delta, K2), then (K4, K3, K2, K1) = (K3, K2, K1, SK_i). */
    private static boolean subkeys(long[] out, byte[] key, int bits) {
        long k4 = load64be(key, 0), k3 = load64be(key, 8), k2, k1; // Ka, Kb
        switch (bits) {
            case 256: k2 = load64be(key, 16); k1 = load64be(key, 24); break;
            case 192: k2 = load64be(key, 16); k1 = f(k4, k3); break;
            case 128: k2 = f(k3, k4); k1 = f(k4, k3); break;
            default: return false;
        }
        long deltaI = 0;
        for (int i = 0; i < 48; i++) {
            deltaI += DELTA;
            long s = k4 ^ f(k1 + k3 + deltaI, k2);
            k4 = k3;
            k3 = k2;
            k2 = k1;
            k1 = s;
            out[i] = s;
        }
        return true;
    }

    @Override
    public int setEncryptKey(byte[] key, int bits) {
        return bits == 128 || bits == 192 || bits == 256 ? (subkeys(sk, key, bits) ? OK : BAD_KEY_LENGTH)
                : BAD_KEY_LENGTH;
    }

    /** Round i of decryption = an encryption round with (-SK_3i, SK_3i-1, -SK_3i-2), i = 16..1 (p3). */
    @Override
    public int setDecryptKey(byte[] key, int bits) {
        if (bits != 128 && bits != 192 && bits != 256)
            return BAD_KEY_LENGTH;
        long[] s = new long[48];
        subkeys(s, key, bits);
        for (int r = 0; r < 16; r++) {
            int at = 3 * (15 - r);
            sk[3 * r] = -s[at + 2];
            sk[3 * r + 1] = s[at + 1];
            sk[3 * r + 2] = -s[at];
        }
        return OK;
    }

    /** R_i = L_(i-1) ^ f(R_(i-1) + SK_3i-2, SK_3i-1); L_i = R_(i-1) + SK_3i-2 + SK_3i (p2); two rounds per turn. */
    private void crypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        final long[] k = sk;
        for (int n = 0; n < nblocks; n++, inOff += 16, outOff += 16) {
            long l = load64be(in, inOff), r = load64be(in, inOff + 8), t;
            for (int i = 0; i < 48; i += 6) {
                t = r + k[i];
                l ^= f(t, k[i + 1]);
                r = t + k[i + 2];
                t = l + k[i + 3];
                r ^= f(t, k[i + 4]);
                l = t + k[i + 5];
            }
            store64be(out, outOff, r); // ciphertext [R16|L16]
            store64be(out, outOff + 8, l);
        }
    }

    @Override
    public void encrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        crypt(in, inOff, out, outOff, nblocks);
    }

    @Override
    public void decrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        crypt(in, inOff, out, outOff, nblocks);
    }
}

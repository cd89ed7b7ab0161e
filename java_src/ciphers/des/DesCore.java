package cipherlab.ciphers.des;

import cipherlab.Bytes;

/**
 * The DES core shared by des and 3des (FIPS PUB 46-3, shared/specs/des-fips46-3; PDF pages): IP p14, E p17,
 * P p19, S1..S8 Appendix 1 p21-p22, PC-1 p23, shifts and PC-2 p25.  Bits are numbered 1..n from the most
 * significant, as in the standard.
 *
 * <p>Representation (the classic one for fast software DES): each 32-bit half is kept rotated left by one bit,
 * so the eight 6-bit groups of E(R) are contiguous fields (S2, S4, S6, S8 at bits 29..24, 21..16, 13..8, 5..0
 * of the rotated half; S1, S3, S5, S7 at the same fields of it rotated right by 4), and S-box i and P are one
 * 64-entry table SP[i] in that rotated form.  IP and IP^-1 are bit-swap sequences.  A key schedule is 32 ints,
 * two per round (the S1,S3,S5,S7 key groups one per byte, then S2,S4,S6,S8), in the order applied.
 * The tables are computed when the class loads from the standard's tables below.
 */
public final class DesCore {
    private DesCore() {
    }

    private static final int[] P = {16, 7, 20, 21, 29, 12, 28, 17, 1, 15, 23, 26, 5, 18, 31, 10,
        2, 8, 24, 14, 32, 27, 3, 9, 19, 13, 30, 6, 22, 11, 4, 25};
    private static final int[][] S = {
        {14, 4, 13, 1, 2, 15, 11, 8, 3, 10, 6, 12, 5, 9, 0, 7, 0, 15, 7, 4, 14, 2, 13, 1, 10, 6, 12, 11, 9, 5, 3, 8,
            4, 1, 14, 8, 13, 6, 2, 11, 15, 12, 9, 7, 3, 10, 5, 0, 15, 12, 8, 2, 4, 9, 1, 7, 5, 11, 3, 14, 10, 0, 6, 13},
        {15, 1, 8, 14, 6, 11, 3, 4, 9, 7, 2, 13, 12, 0, 5, 10, 3, 13, 4, 7, 15, 2, 8, 14, 12, 0, 1, 10, 6, 9, 11, 5,
            0, 14, 7, 11, 10, 4, 13, 1, 5, 8, 12, 6, 9, 3, 2, 15, 13, 8, 10, 1, 3, 15, 4, 2, 11, 6, 7, 12, 0, 5, 14, 9},
        {10, 0, 9, 14, 6, 3, 15, 5, 1, 13, 12, 7, 11, 4, 2, 8, 13, 7, 0, 9, 3, 4, 6, 10, 2, 8, 5, 14, 12, 11, 15, 1,
            13, 6, 4, 9, 8, 15, 3, 0, 11, 1, 2, 12, 5, 10, 14, 7, 1, 10, 13, 0, 6, 9, 8, 7, 4, 15, 14, 3, 11, 5, 2, 12},
        {7, 13, 14, 3, 0, 6, 9, 10, 1, 2, 8, 5, 11, 12, 4, 15, 13, 8, 11, 5, 6, 15, 0, 3, 4, 7, 2, 12, 1, 10, 14, 9,
            10, 6, 9, 0, 12, 11, 7, 13, 15, 1, 3, 14, 5, 2, 8, 4, 3, 15, 0, 6, 10, 1, 13, 8, 9, 4, 5, 11, 12, 7, 2, 14},
        {2, 12, 4, 1, 7, 10, 11, 6, 8, 5, 3, 15, 13, 0, 14, 9, 14, 11, 2, 12, 4, 7, 13, 1, 5, 0, 15, 10, 3, 9, 8, 6,
            4, 2, 1, 11, 10, 13, 7, 8, 15, 9, 12, 5, 6, 3, 0, 14, 11, 8, 12, 7, 1, 14, 2, 13, 6, 15, 0, 9, 10, 4, 5, 3},
        {12, 1, 10, 15, 9, 2, 6, 8, 0, 13, 3, 4, 14, 7, 5, 11, 10, 15, 4, 2, 7, 12, 9, 5, 6, 1, 13, 14, 0, 11, 3, 8,
            9, 14, 15, 5, 2, 8, 12, 3, 7, 0, 4, 10, 1, 13, 11, 6, 4, 3, 2, 12, 9, 5, 15, 10, 11, 14, 1, 7, 6, 0, 8, 13},
        {4, 11, 2, 14, 15, 0, 8, 13, 3, 12, 9, 7, 5, 10, 6, 1, 13, 0, 11, 7, 4, 9, 1, 10, 14, 3, 5, 12, 2, 15, 8, 6,
            1, 4, 11, 13, 12, 3, 7, 14, 10, 15, 6, 8, 0, 5, 9, 2, 6, 11, 13, 8, 1, 4, 10, 7, 9, 5, 0, 15, 14, 2, 3, 12},
        {13, 2, 8, 4, 6, 15, 11, 1, 10, 9, 3, 14, 5, 0, 12, 7, 1, 15, 13, 8, 10, 3, 7, 4, 12, 5, 6, 11, 0, 14, 9, 2,
            7, 11, 4, 1, 9, 12, 14, 2, 0, 6, 10, 13, 15, 3, 5, 8, 2, 1, 14, 7, 4, 10, 8, 13, 15, 12, 9, 0, 3, 5, 6, 11}};
    private static final int[] PC1 = {57, 49, 41, 33, 25, 17, 9, 1, 58, 50, 42, 34, 26, 18,
        10, 2, 59, 51, 43, 35, 27, 19, 11, 3, 60, 52, 44, 36,
        63, 55, 47, 39, 31, 23, 15, 7, 62, 54, 46, 38, 30, 22,
        14, 6, 61, 53, 45, 37, 29, 21, 13, 5, 28, 20, 12, 4};
    private static final int[] SHIFTS = {1, 1, 2, 2, 2, 2, 2, 2, 1, 2, 2, 2, 2, 2, 2, 1};
    private static final int[] PC2 = {14, 17, 11, 24, 1, 5, 3, 28, 15, 6, 21, 10,
        23, 19, 12, 4, 26, 8, 16, 7, 27, 20, 13, 2,
        41, 52, 31, 37, 47, 55, 30, 40, 51, 45, 33, 48,
        44, 49, 39, 56, 34, 53, 46, 42, 50, 36, 29, 32};

    static final int[] SP0 = new int[64], SP1 = new int[64], SP2 = new int[64], SP3 = new int[64],
            SP4 = new int[64], SP5 = new int[64], SP6 = new int[64], SP7 = new int[64];
    public static final int TABLE_BYTES = 8 * 64 * 4;

    /** Bit i of the result (1 = MSB of table.length bits) is bit table[i] of x (nin bits). */
    private static long permute(long x, int[] table, int nin) {
        long out = 0;
        for (int src : table)
            out = (out << 1) | ((x >>> (nin - src)) & 1);
        return out;
    }

    static {
        int[][] sp = {SP0, SP1, SP2, SP3, SP4, SP5, SP6, SP7};
        for (int i = 0; i < 8; i++)
            for (int b = 0; b < 64; b++) {
                int v = S[i][16 * (((b >> 4) & 2) | (b & 1)) + ((b >> 1) & 15)]; // row: outer bits, column: middle
                sp[i][b] = Integer.rotateLeft((int) permute((long) v << (28 - 4 * i), P, 32), 1);
            }
    }

    /** Round keys of the 8-byte key at key[off] (parity bits ignored) into sk[0..31], encryption order. */
    public static void schedule(byte[] key, int off, int[] sk, boolean decrypt) {
        long cd = permute(((long) Bytes.load32be(key, off) << 32) | (Bytes.load32be(key, off + 4) & 0xffffffffL), PC1, 64);
        int c = (int) (cd >>> 28), d = (int) (cd & 0xfffffff);
        for (int n = 0; n < 16; n++) {
            int s = SHIFTS[n];
            c = ((c << s) | (c >>> (28 - s))) & 0xfffffff;
            d = ((d << s) | (d >>> (28 - s))) & 0xfffffff;
            long k = permute(((long) c << 28) | d, PC2, 56);
            int g0 = (int) (k >>> 42) & 63, g1 = (int) (k >>> 36) & 63, g2 = (int) (k >>> 30) & 63, g3 = (int) (k >>> 24) & 63;
            int g4 = (int) (k >>> 18) & 63, g5 = (int) (k >>> 12) & 63, g6 = (int) (k >>> 6) & 63, g7 = (int) k & 63;
            int at = decrypt ? 2 * (15 - n) : 2 * n;
            sk[at] = g0 << 24 | g2 << 16 | g4 << 8 | g6;
            sk[at + 1] = g1 << 24 | g3 << 16 | g5 << 8 | g7;
        }
    }

    /**
     * f(R, K) on the rotated half.  The eight lookups are XORed as a balanced tree, not left to right: javac and
     * C2 keep the order written, and a left-to-right chain puts eight dependent XORs after the loads on the
     * round's critical path, a tree three.  DES is latency-bound (each round waits for the one before: one block
     * per call, and the 1024-block calls nearly so: the tree gains as much there), so its latency is its cost.
     */
    private static int f(int r, int k0, int k1) {
        int t = Integer.rotateRight(r, 4) ^ k0, u = r ^ k1;
        return ((SP0[(t >>> 24) & 63] ^ SP2[(t >>> 16) & 63]) ^ (SP4[(t >>> 8) & 63] ^ SP6[t & 63]))
                ^ ((SP1[(u >>> 24) & 63] ^ SP3[(u >>> 16) & 63]) ^ (SP5[(u >>> 8) & 63] ^ SP7[u & 63]));
    }

    /** Sixteen rounds on rotated halves (l, r); returns the preoutput (R16, L16) packed as (high, low). */
    public static long rounds(int l, int r, int[] sk) {
        for (int i = 0; i < 32; i += 4) {
            l ^= f(r, sk[i], sk[i + 1]);
            r ^= f(l, sk[i + 2], sk[i + 3]);
        }
        return ((long) r << 32) | (l & 0xffffffffL);
    }

    /** IP on the block at in[off]: the halves rotated left by one, packed (high, low). */
    public static long ip(byte[] in, int off) {
        int l = Bytes.load32be(in, off), r = Bytes.load32be(in, off + 4), t;
        t = ((l >>> 4) ^ r) & 0x0f0f0f0f; r ^= t; l ^= t << 4;
        t = ((l >>> 16) ^ r) & 0x0000ffff; r ^= t; l ^= t << 16;
        t = ((r >>> 2) ^ l) & 0x33333333; l ^= t; r ^= t << 2;
        t = ((r >>> 8) ^ l) & 0x00ff00ff; l ^= t; r ^= t << 8;
        r = Integer.rotateLeft(r, 1);
        t = (l ^ r) & 0xaaaaaaaa; l ^= t; r ^= t;
        l = Integer.rotateLeft(l, 1);
        return ((long) l << 32) | (r & 0xffffffffL);
    }

    /** IP^-1 of the packed rotated halves, stored at out[off]. */
    public static void fp(long lr, byte[] out, int off) {
        int l = (int) (lr >>> 32), r = (int) lr, t;
        l = Integer.rotateRight(l, 1);
        t = (l ^ r) & 0xaaaaaaaa; l ^= t; r ^= t;
        r = Integer.rotateRight(r, 1);
        t = ((r >>> 8) ^ l) & 0x00ff00ff; l ^= t; r ^= t << 8;
        t = ((r >>> 2) ^ l) & 0x33333333; l ^= t; r ^= t << 2;
        t = ((l >>> 16) ^ r) & 0x0000ffff; r ^= t; l ^= t << 16;
        t = ((l >>> 4) ^ r) & 0x0f0f0f0f; r ^= t; l ^= t << 4;
        Bytes.store32be(out, off, l);
        Bytes.store32be(out, off + 4, r);
    }

    /** Single DES of nblocks blocks with the schedule sk (its order decides the direction). */
    public static void crypt(int[] sk, byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        for (int n = 0; n < nblocks; n++, inOff += 8, outOff += 8) {
            long lr = ip(in, inOff);
            fp(rounds((int) (lr >>> 32), (int) lr, sk), out, outOff);
        }
    }

    /** Three DES passes (EDE or its inverse: the schedules' orders decide), IP once and IP^-1 once. */
    public static void crypt3(int[] a, int[] b, int[] c, byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        for (int n = 0; n < nblocks; n++, inOff += 8, outOff += 8) {
            long lr = ip(in, inOff);
            lr = rounds((int) (lr >>> 32), (int) lr, a);
            lr = rounds((int) (lr >>> 32), (int) lr, b);
            fp(rounds((int) (lr >>> 32), (int) lr, c), out, outOff);
        }
    }
}

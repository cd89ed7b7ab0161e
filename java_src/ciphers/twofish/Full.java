package cipherlab.ciphers.twofish;

import cipherlab.BlockCipher;
import cipherlab.Bytes;

/**
 * Twofish with full keying (see BlockCipher), written from the Twofish AES submission (Schneier et al.,
 * 15 June 1998): words little-endian, whitening, 16 rounds and the output swap Sec. 4 (p7); F and g
 * Sec. 4.1-4.2; MDS p8; key schedule Sec. 4.3 (p8-p10) with q0/q1 built from their 4-bit t-boxes
 * (Sec. 4.3.5); "full keying" (Sec. 5.1): each key-dependent S-box s_j, times MDS column j, is one 256-int
 * table, so g is four lookups and three xors.  q0, q1 and the GF(2^8) products are computed when the class
 * loads.  Encryption and decryption use the same schedule.
 */
public final class Full implements BlockCipher {
    private static final int[] Q0 = q(new int[][] {
        {0x8, 0x1, 0x7, 0xD, 0x6, 0xF, 0x3, 0x2, 0x0, 0xB, 0x5, 0x9, 0xE, 0xC, 0xA, 0x4},
        {0xE, 0xC, 0xB, 0x8, 0x1, 0x2, 0x3, 0x5, 0xF, 0x4, 0xA, 0x6, 0x7, 0x0, 0x9, 0xD},
        {0xB, 0xA, 0x5, 0xE, 0x6, 0xD, 0x9, 0x0, 0xC, 0x8, 0xF, 0x3, 0x2, 0x4, 0x7, 0x1},
        {0xD, 0x7, 0xF, 0x4, 0x1, 0x2, 0x6, 0xE, 0x9, 0xB, 0x3, 0x0, 0x8, 0x5, 0xC, 0xA}});
    private static final int[] Q1 = q(new int[][] {
        {0x2, 0x8, 0xB, 0xD, 0xF, 0x7, 0x6, 0xE, 0x3, 0x1, 0x9, 0x4, 0x0, 0xA, 0xC, 0x5},
        {0x1, 0xE, 0x2, 0xB, 0x4, 0xC, 0x3, 0x7, 0x6, 0xD, 0xA, 0x5, 0xF, 0x9, 0x0, 0x8},
        {0x4, 0xC, 0x7, 0x5, 0x1, 0x6, 0x9, 0xA, 0x0, 0xE, 0xD, 0x8, 0x2, 0xB, 0x3, 0xF},
        {0xB, 0x9, 0x5, 0x1, 0xC, 0x3, 0xD, 0xE, 0x6, 0x4, 0x7, 0xF, 0x2, 0x0, 0x8, 0xA}});
    private static final int[][] MDS = {{0x01, 0xEF, 0x5B, 0x5B}, {0x5B, 0xEF, 0xEF, 0x01},
        {0xEF, 0x5B, 0x01, 0xEF}, {0xEF, 0x01, 0xEF, 0x5B}}; // p8, over GF(2^8)/0x169
    private static final int[][] RS = {{0x01, 0xA4, 0x55, 0x87, 0x5A, 0x58, 0xDB, 0x9E},
        {0xA4, 0x56, 0x82, 0xF3, 0x1E, 0xC6, 0x68, 0xE5}, {0x02, 0xA1, 0xFC, 0xC1, 0x47, 0xAE, 0x3D, 0x19},
        {0xA4, 0x55, 0x87, 0x5A, 0x58, 0xDB, 0x9E, 0x03}}; // p9, over GF(2^8)/0x14D
    /** MC[j][v]: MDS column j times byte v, as the word whose byte i is MDS[i][j] * v. */
    private static final int[][] MC = new int[4][256];
    /** MQ[256 j + y]: MC[j][Q_OUT[j][y]], the last q stage of lane j and its MDS column in one lookup. */
    private static final int[] MQ = new int[1024];
    /** RSC[256 c + v]: RS column c times key byte v, as the word whose byte r is RS[r][c] * v (Sec. 4.3, p9):
     *  S_i is the xor of eight lookups instead of 32 products over GF(2^8). */
    private static final int[] RSC = new int[2048];

    private static int[] q(int[][] t) { // Sec. 4.3.5
        int[] out = new int[256];
        for (int x = 0; x < 256; x++) {
            int a0 = x >>> 4, b0 = x & 15;
            int a1 = a0 ^ b0, b1 = (a0 ^ ((b0 >>> 1) | (b0 << 3)) ^ (8 * a0)) & 15;
            int a2 = t[0][a1], b2 = t[1][b1];
            int a3 = a2 ^ b2, b3 = (a2 ^ ((b2 >>> 1) | (b2 << 3)) ^ (8 * a2)) & 15;
            out[x] = (t[3][b3] << 4) | t[2][a3];
        }
        return out;
    }

    private static int gmul(int a, int b, int poly) {
        int p = 0;
        for (; b != 0; b >>>= 1) {
            if ((b & 1) != 0)
                p ^= a;
            a <<= 1;
            if ((a & 0x100) != 0)
                a ^= poly;
        }
        return p;
    }

    static {
        for (int j = 0; j < 4; j++)
            for (int v = 0; v < 256; v++)
                for (int i = 0; i < 4; i++)
                    MC[j][v] |= gmul(MDS[i][j], v, 0x169) << (8 * i);
        for (int c = 0; c < 8; c++)
            for (int v = 0; v < 256; v++)
                for (int r = 0; r < 4; r++)
                    RSC[256 * c + v] |= gmul(RS[r][c], v, 0x14D) << (8 * r);
    }

    // the four key-dependent S-box tables with their MDS column, table j at [256 * j]: one array, so C2 keeps one
    // base register for them instead of four (with four, the state, the round keys and the bases did not fit)
    private final int[] sb = new int[1024];
    private final int[] kw = new int[40];
    private final int[] me = new int[4], mo = new int[4], s = new int[4]; // key setup's words: no allocation per key

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
        return 2 * 256 * 4 + 4 * 256 * 4 + 1024 * 4 + 2048 * 4; // q0, q1 (as ints), the MDS columns, MQ and RSC:
                                                               // key setup only
    }

    @Override
    public int scheduleBytes() {
        return 4 * 256 * 4 + 40 * 4;
    }

    // The q permutation of each stage of h per lane j (Sec. 4.3.2, Fig. 2), outermost last: the stage of L_3
    // (k = 4), of L_2 (k >= 3), then of L_1, of L_0 and the last one before the MDS.
    private static final int[][] Q_L3 = {Q1, Q0, Q0, Q1}, Q_L2 = {Q1, Q1, Q0, Q0}, Q_L1 = {Q0, Q1, Q0, Q1},
            Q_L0 = {Q0, Q0, Q1, Q1}, Q_OUT = {Q1, Q0, Q1, Q0};

    static {
        for (int j = 0; j < 4; j++)
            for (int y = 0; y < 256; y++)
                MQ[256 * j + y] = MC[j][Q_OUT[j][y]];
    }

    /** Lane j of h through MDS (Sec. 4.3.2): byte x through the q stages with list l (l[i] = word L_i). */
    private static int lane(int x, int j, int k, int[] l) {
        final int sh = 8 * j;
        if (k == 4)
            x = Q_L3[j][x] ^ ((l[3] >>> sh) & 0xff);
        if (k >= 3)
            x = Q_L2[j][x] ^ ((l[2] >>> sh) & 0xff);
        return MQ[256 * j + (Q_L0[j][Q_L1[j][x] ^ ((l[1] >>> sh) & 0xff)] ^ ((l[0] >>> sh) & 0xff))];
    }

    private static int h(int x, int k, int[] l) {
        return lane(x & 0xff, 0, k, l) ^ lane((x >>> 8) & 0xff, 1, k, l) ^ lane((x >>> 16) & 0xff, 2, k, l)
                ^ lane(x >>> 24, 3, k, l);
    }

    private int setKey(byte[] key, int bits) {
        if (bits != 128 && bits != 192 && bits != 256)
            return BAD_KEY_LENGTH;
        final int k = bits / 64;
        final int[] me = this.me, mo = this.mo, s = this.s, rsc = RSC;
        for (int i = 0; i < k; i++) {
            final int o = 8 * i;
            me[i] = Bytes.load32le(key, o);
            mo[i] = Bytes.load32le(key, o + 4);
            // S_i = RS . (m_8i .. m_8i+7); the list S is (S_k-1, ..., S_0)
            s[k - 1 - i] = rsc[key[o] & 0xff] ^ rsc[256 + (key[o + 1] & 0xff)] ^ rsc[512 + (key[o + 2] & 0xff)]
                    ^ rsc[768 + (key[o + 3] & 0xff)] ^ rsc[1024 + (key[o + 4] & 0xff)]
                    ^ rsc[1280 + (key[o + 5] & 0xff)] ^ rsc[1536 + (key[o + 6] & 0xff)]
                    ^ rsc[1792 + (key[o + 7] & 0xff)];
        }
        final int rho = 0x01010101;
        for (int i = 0; i < 20; i++) {
            int a = h(2 * i * rho, k, me), b = Integer.rotateLeft(h((2 * i + 1) * rho, k, mo), 8);
            kw[2 * i] = a + b;
            kw[2 * i + 1] = Integer.rotateLeft(a + 2 * b, 9);
        }
        final int[] sb = this.sb, mq = MQ;
        for (int j = 0; j < 4; j++) { // lane by lane: its tables and key bytes hoisted out of the 256 bytes
            final int sh = 8 * j, l0 = (s[0] >>> sh) & 0xff, l1 = (s[1] >>> sh) & 0xff, base = 256 * j;
            final int[] q1 = Q_L1[j], q0 = Q_L0[j];
            if (k == 2) { // one loop per key length: no test per byte
                for (int x = 0; x < 256; x++)
                    sb[base + x] = mq[base + (q0[q1[x] ^ l1] ^ l0)];
            } else if (k == 3) {
                final int l2 = (s[2] >>> sh) & 0xff;
                final int[] q2 = Q_L2[j];
                for (int x = 0; x < 256; x++)
                    sb[base + x] = mq[base + (q0[q1[q2[x] ^ l2] ^ l1] ^ l0)];
            } else {
                final int l2 = (s[2] >>> sh) & 0xff, l3 = (s[3] >>> sh) & 0xff;
                final int[] q2 = Q_L2[j], q3 = Q_L3[j];
                for (int x = 0; x < 256; x++)
                    sb[base + x] = mq[base + (q0[q1[q2[q3[x] ^ l3] ^ l2] ^ l1] ^ l0)];
            }
        }
        return OK;
    }

    @Override
    public int setEncryptKey(byte[] key, int bits) {
        return setKey(key, bits);
    }

    @Override
    public int setDecryptKey(byte[] key, int bits) {
        return setKey(key, bits);
    }

    /** g (Sec. 4.2) of the round's first word, g0, and of its second, g1, whose rotation by 8 is folded into
     *  the byte order of its lookups. */
    private static int g0(int[] sb, int r) {
        return sb[r & 0xff] ^ sb[256 + ((r >>> 8) & 0xff)] ^ sb[512 + ((r >>> 16) & 0xff)] ^ sb[768 + (r >>> 24)];
    }

    private static int g1(int[] sb, int r) {
        return sb[r >>> 24] ^ sb[256 + (r & 0xff)] ^ sb[512 + ((r >>> 8) & 0xff)] ^ sb[768 + ((r >>> 16) & 0xff)];
    }

    @Override
    public void encrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        final int[] sb = this.sb, k = this.kw;
        int n = 0;
        // two blocks side by side: their table loads and adds overlap (a lone block's rounds are one chain)
        for (; n + 2 <= nblocks; n += 2, inOff += 32, outOff += 32) {
            int a0 = Bytes.load32le(in, inOff) ^ k[0], a1 = Bytes.load32le(in, inOff + 4) ^ k[1];
            int a2 = Bytes.load32le(in, inOff + 8) ^ k[2], a3 = Bytes.load32le(in, inOff + 12) ^ k[3];
            int b0 = Bytes.load32le(in, inOff + 16) ^ k[0], b1 = Bytes.load32le(in, inOff + 20) ^ k[1];
            int b2 = Bytes.load32le(in, inOff + 24) ^ k[2], b3 = Bytes.load32le(in, inOff + 28) ^ k[3];
            for (int i = 8; i < 40; i += 4) {
                int ta0 = g0(sb, a0), ta1 = g1(sb, a1), tb0 = g0(sb, b0), tb1 = g1(sb, b1);
                a2 = Integer.rotateRight(a2 ^ (ta0 + ta1 + k[i]), 1);
                a3 = Integer.rotateLeft(a3, 1) ^ (ta0 + 2 * ta1 + k[i + 1]);
                b2 = Integer.rotateRight(b2 ^ (tb0 + tb1 + k[i]), 1);
                b3 = Integer.rotateLeft(b3, 1) ^ (tb0 + 2 * tb1 + k[i + 1]);
                ta0 = g0(sb, a2); ta1 = g1(sb, a3); tb0 = g0(sb, b2); tb1 = g1(sb, b3);
                a0 = Integer.rotateRight(a0 ^ (ta0 + ta1 + k[i + 2]), 1);
                a1 = Integer.rotateLeft(a1, 1) ^ (ta0 + 2 * ta1 + k[i + 3]);
                b0 = Integer.rotateRight(b0 ^ (tb0 + tb1 + k[i + 2]), 1);
                b1 = Integer.rotateLeft(b1, 1) ^ (tb0 + 2 * tb1 + k[i + 3]);
            }
            Bytes.store32le(out, outOff, a2 ^ k[4]);
            Bytes.store32le(out, outOff + 4, a3 ^ k[5]);
            Bytes.store32le(out, outOff + 8, a0 ^ k[6]);
            Bytes.store32le(out, outOff + 12, a1 ^ k[7]);
            Bytes.store32le(out, outOff + 16, b2 ^ k[4]);
            Bytes.store32le(out, outOff + 20, b3 ^ k[5]);
            Bytes.store32le(out, outOff + 24, b0 ^ k[6]);
            Bytes.store32le(out, outOff + 28, b1 ^ k[7]);
        }
        for (; n < nblocks; n++, inOff += 16, outOff += 16) {
            int r0 = Bytes.load32le(in, inOff) ^ k[0], r1 = Bytes.load32le(in, inOff + 4) ^ k[1];
            int r2 = Bytes.load32le(in, inOff + 8) ^ k[2], r3 = Bytes.load32le(in, inOff + 12) ^ k[3];
            for (int i = 8; i < 40; i += 4) { // two rounds per turn: the swap becomes a change of names
                int t0 = g0(sb, r0);
                int t1 = g1(sb, r1);
                r2 = Integer.rotateRight(r2 ^ (t0 + t1 + k[i]), 1);
                r3 = Integer.rotateLeft(r3, 1) ^ (t0 + 2 * t1 + k[i + 1]);
                t0 = g0(sb, r2);
                t1 = g1(sb, r3);
                r0 = Integer.rotateRight(r0 ^ (t0 + t1 + k[i + 2]), 1);
                r1 = Integer.rotateLeft(r1, 1) ^ (t0 + 2 * t1 + k[i + 3]);
            }
            Bytes.store32le(out, outOff, r2 ^ k[4]); // output whitening undoes the last swap
            Bytes.store32le(out, outOff + 4, r3 ^ k[5]);
            Bytes.store32le(out, outOff + 8, r0 ^ k[6]);
            Bytes.store32le(out, outOff + 12, r1 ^ k[7]);
        }
    }

    @Override
    public void decrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        final int[] sb = this.sb, k = this.kw;
        int n = 0;
        for (; n + 2 <= nblocks; n += 2, inOff += 32, outOff += 32) { // two blocks side by side, as encrypt
            int a2 = Bytes.load32le(in, inOff) ^ k[4], a3 = Bytes.load32le(in, inOff + 4) ^ k[5];
            int a0 = Bytes.load32le(in, inOff + 8) ^ k[6], a1 = Bytes.load32le(in, inOff + 12) ^ k[7];
            int b2 = Bytes.load32le(in, inOff + 16) ^ k[4], b3 = Bytes.load32le(in, inOff + 20) ^ k[5];
            int b0 = Bytes.load32le(in, inOff + 24) ^ k[6], b1 = Bytes.load32le(in, inOff + 28) ^ k[7];
            for (int i = 36; i >= 8; i -= 4) {
                int ta0 = g0(sb, a2), ta1 = g1(sb, a3), tb0 = g0(sb, b2), tb1 = g1(sb, b3);
                a0 = Integer.rotateLeft(a0, 1) ^ (ta0 + ta1 + k[i + 2]);
                a1 = Integer.rotateRight(a1 ^ (ta0 + 2 * ta1 + k[i + 3]), 1);
                b0 = Integer.rotateLeft(b0, 1) ^ (tb0 + tb1 + k[i + 2]);
                b1 = Integer.rotateRight(b1 ^ (tb0 + 2 * tb1 + k[i + 3]), 1);
                ta0 = g0(sb, a0); ta1 = g1(sb, a1); tb0 = g0(sb, b0); tb1 = g1(sb, b1);
                a2 = Integer.rotateLeft(a2, 1) ^ (ta0 + ta1 + k[i]);
                a3 = Integer.rotateRight(a3 ^ (ta0 + 2 * ta1 + k[i + 1]), 1);
                b2 = Integer.rotateLeft(b2, 1) ^ (tb0 + tb1 + k[i]);
                b3 = Integer.rotateRight(b3 ^ (tb0 + 2 * tb1 + k[i + 1]), 1);
            }
            Bytes.store32le(out, outOff, a0 ^ k[0]);
            Bytes.store32le(out, outOff + 4, a1 ^ k[1]);
            Bytes.store32le(out, outOff + 8, a2 ^ k[2]);
            Bytes.store32le(out, outOff + 12, a3 ^ k[3]);
            Bytes.store32le(out, outOff + 16, b0 ^ k[0]);
            Bytes.store32le(out, outOff + 20, b1 ^ k[1]);
            Bytes.store32le(out, outOff + 24, b2 ^ k[2]);
            Bytes.store32le(out, outOff + 28, b3 ^ k[3]);
        }
        for (; n < nblocks; n++, inOff += 16, outOff += 16) {
            int r2 = Bytes.load32le(in, inOff) ^ k[4], r3 = Bytes.load32le(in, inOff + 4) ^ k[5];
            int r0 = Bytes.load32le(in, inOff + 8) ^ k[6], r1 = Bytes.load32le(in, inOff + 12) ^ k[7];
            for (int i = 36; i >= 8; i -= 4) {
                int t0 = g0(sb, r2);
                int t1 = g1(sb, r3);
                r0 = Integer.rotateLeft(r0, 1) ^ (t0 + t1 + k[i + 2]);
                r1 = Integer.rotateRight(r1 ^ (t0 + 2 * t1 + k[i + 3]), 1);
                t0 = g0(sb, r0);
                t1 = g1(sb, r1);
                r2 = Integer.rotateLeft(r2, 1) ^ (t0 + t1 + k[i]);
                r3 = Integer.rotateRight(r3 ^ (t0 + 2 * t1 + k[i + 1]), 1);
            }
            Bytes.store32le(out, outOff, r0 ^ k[0]);
            Bytes.store32le(out, outOff + 4, r1 ^ k[1]);
            Bytes.store32le(out, outOff + 8, r2 ^ k[2]);
            Bytes.store32le(out, outOff + 12, r3 ^ k[3]);
        }
    }
}

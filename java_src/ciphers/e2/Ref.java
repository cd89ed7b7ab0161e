package cipherlab.ciphers.e2;

import cipherlab.BlockCipher;
import cipherlab.Bytes;

/**
 * E2 (NTT, AES round-1 candidate), table-driven with 32-bit words (see BlockCipher), written from "Specification
 * of E2 - a 128-bit Block Cipher", NTT, June 14 1998 (shared/specs/e2-ntt-spec.pdf): encryption/decryption
 * p4-p6, key schedule p6, IT/F/FT/BRL p7, S and s-box p8-p9, P p9-p10, G and f p11-p12, the multiply operators
 * and BP p12-p13; the same reading as c_src/ciphers/e2/ref.c.
 *
 * <p>Byte order: a word (b3,b2,b1,b0) is the integer sum b_i 2^(8i), its left-most byte the most significant
 * (p3, item 13), so each 4-byte group of a block is loaded big-endian.  Inside F a half block (z1..z8) is two
 * big-endian words.  S followed by P is four 256-word tables T[j] (s(x) in every byte but byte j, byte 0 the most
 * significant: (J+I)S, as gen_tables.py derives it) and a few xors and rotations; the second S layer reads the
 * same tables through a byte mask, with BRL folded into where each output byte lands.  Not constant time.
 */
public final class Ref implements BlockCipher {
    /** The s-box (p8-p9), as c_src/ciphers/e2/gen_tables.py generated it. */
    private static final int[] SBOX = {
        0xe1, 0x42, 0x3e, 0x81, 0x4e, 0x17, 0x9e, 0xfd, 0xb4, 0x3f, 0x2c, 0xda, 0x31, 0x1e, 0xe0, 0x41,
        0xcc, 0xf3, 0x82, 0x7d, 0x7c, 0x12, 0x8e, 0xbb, 0xe4, 0x58, 0x15, 0xd5, 0x6f, 0xe9, 0x4c, 0x4b,
        0x35, 0x7b, 0x5a, 0x9a, 0x90, 0x45, 0xbc, 0xf8, 0x79, 0xd6, 0x1b, 0x88, 0x02, 0xab, 0xcf, 0x64,
        0x09, 0x0c, 0xf0, 0x01, 0xa4, 0xb0, 0xf6, 0x93, 0x43, 0x63, 0x86, 0xdc, 0x11, 0xa5, 0x83, 0x8b,
        0xc9, 0xd0, 0x19, 0x95, 0x6a, 0xa1, 0x5c, 0x24, 0x6e, 0x50, 0x21, 0x80, 0x2f, 0xe7, 0x53, 0x0f,
        0x91, 0x22, 0x04, 0xed, 0xa6, 0x48, 0x49, 0x67, 0xec, 0xf7, 0xc0, 0x39, 0xce, 0xf2, 0x2d, 0xbe,
        0x5d, 0x1c, 0xe3, 0x87, 0x07, 0x0d, 0x7a, 0xf4, 0xfb, 0x32, 0xf5, 0x8c, 0xdb, 0x8f, 0x25, 0x96,
        0xa8, 0xea, 0xcd, 0x33, 0x65, 0x54, 0x06, 0x8d, 0x89, 0x0a, 0x5e, 0xd9, 0x16, 0x0e, 0x71, 0x6c,
        0x0b, 0xff, 0x60, 0xd2, 0x2e, 0xd3, 0xc8, 0x55, 0xc2, 0x23, 0xb7, 0x74, 0xe2, 0x9b, 0xdf, 0x77,
        0x2b, 0xb9, 0x3c, 0x62, 0x13, 0xe5, 0x94, 0x34, 0xb1, 0x27, 0x84, 0x9f, 0xd7, 0x51, 0x00, 0x61,
        0xad, 0x85, 0x73, 0x03, 0x08, 0x40, 0xef, 0x68, 0xfe, 0x97, 0x1f, 0xde, 0xaf, 0x66, 0xe8, 0xb8,
        0xae, 0xbd, 0xb3, 0xeb, 0xc6, 0x6b, 0x47, 0xa9, 0xd8, 0xa7, 0x72, 0xee, 0x1d, 0x7e, 0xaa, 0xb6,
        0x75, 0xcb, 0xd4, 0x30, 0x69, 0x20, 0x7f, 0x37, 0x5b, 0x9d, 0x78, 0xa3, 0xf1, 0x76, 0xfa, 0x05,
        0x3d, 0x3a, 0x44, 0x57, 0x3b, 0xca, 0xc7, 0x8a, 0x18, 0x46, 0x9c, 0xbf, 0xba, 0x38, 0x56, 0x1a,
        0x92, 0x4d, 0x26, 0x29, 0xa2, 0x98, 0x10, 0x99, 0x70, 0xa0, 0xc5, 0x28, 0xc1, 0x6d, 0x14, 0xac,
        0xf9, 0x5f, 0x4f, 0xc4, 0xc3, 0xd1, 0xfc, 0xdd, 0xb2, 0x59, 0xe6, 0xb5, 0x36, 0x52, 0x4a, 0x2a,
    };
    private static final int M0 = 0xff000000, M1 = 0x00ff0000, M2 = 0x0000ff00, M3 = 0x000000ff;
    private static final int[] T = new int[1024]; // T[256 * j + x] = s(x) in every byte except byte j

    static {
        for (int j = 0; j < 4; j++)
            for (int x = 0; x < 256; x++)
                T[256 * j + x] = (SBOX[x] * 0x01010101) & ~(0xff << (24 - 8 * j));
    }

    private final int[] rk = new int[48]; // Feistel subkeys in order of use, four words per round
    private final int[] inA = new int[4], inM = new int[4], outM = new int[4], outA = new int[4];

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
        return (1024 + 256) * 4;
    }

    @Override
    public int scheduleBytes() {
        return (48 + 16) * 4;
    }

    private static int sj(int w) { // (J+I)-tables applied to the four bytes of w
        return T[w >>> 24] ^ T[256 + ((w >>> 16) & 0xff)] ^ T[512 + ((w >>> 8) & 0xff)] ^ T[768 + (w & 0xff)];
    }

    /** Second S layer plus BRL: (y1..y8) = (s(z2), ..., s(z8), s(z1)), high word from (u, v). */
    private static int sBrl(int u, int v) {
        return (T[256 + ((u >>> 16) & 0xff)] & M0) ^ (T[(u >>> 8) & 0xff] & M1) ^ (T[u & 0xff] & M2)
                ^ (T[v >>> 24] & M3);
    }

    /** P(S(z)) of the half block (u, v) into hv[0], hv[1]: a = (J+I)S(u), b = (J+I)S(v);
     * z'(1..4) = a ^ R^3 b, z'(5..8) = R^2 a ^ b ^ R b, R = rotate left 8. */
    private static void sp(int[] hv, int i, int j) {
        int a = sj(hv[i]), b = sj(hv[j]);
        hv[i] = a ^ Integer.rotateRight(b, 8);
        hv[j] = Integer.rotateLeft(a, 16) ^ b ^ Integer.rotateLeft(b, 8);
    }

    private void crypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        final int[] k = rk;
        for (int n = 0; n < nblocks; n++, inOff += 16, outOff += 16) {
            int w0 = (Bytes.load32be(in, inOff) ^ inA[0]) * inM[0];
            int w1 = (Bytes.load32be(in, inOff + 4) ^ inA[1]) * inM[1];
            int w2 = (Bytes.load32be(in, inOff + 8) ^ inA[2]) * inM[2];
            int w3 = (Bytes.load32be(in, inOff + 12) ^ inA[3]) * inM[3];
            // BP: y_i = (x_i^(1), x_(i+1)^(2), x_(i+2)^(3), x_(i+3)^(4)) (p13)
            int l0 = (w0 & M0) | (w1 & M1) | (w2 & M2) | (w3 & M3);
            int l1 = (w1 & M0) | (w2 & M1) | (w3 & M2) | (w0 & M3);
            int r0 = (w2 & M0) | (w3 & M1) | (w0 & M2) | (w1 & M3);
            int r1 = (w3 & M0) | (w0 & M1) | (w1 & M2) | (w2 & M3);
            for (int r = 0; r < 48; r += 8) { // two rounds per turn: L ^= F(R, k); R ^= F(L, k')
                int x = r0 ^ k[r], y = r1 ^ k[r + 1];
                int a = sj(x), b = sj(y);
                x = (a ^ Integer.rotateRight(b, 8)) ^ k[r + 2];
                y = (Integer.rotateLeft(a, 16) ^ b ^ Integer.rotateLeft(b, 8)) ^ k[r + 3];
                l0 ^= sBrl(x, y);
                l1 ^= sBrl(y, x);
                x = l0 ^ k[r + 4];
                y = l1 ^ k[r + 5];
                a = sj(x);
                b = sj(y);
                x = (a ^ Integer.rotateRight(b, 8)) ^ k[r + 6];
                y = (Integer.rotateLeft(a, 16) ^ b ^ Integer.rotateLeft(b, 8)) ^ k[r + 7];
                r0 ^= sBrl(x, y);
                r1 ^= sBrl(y, x);
            }
            // C' = (R12, L12); BP^-1: x_i = (y_i^(1), y_(i-1)^(2), y_(i-2)^(3), y_(i-3)^(4))
            w0 = (r0 & M0) | (l1 & M1) | (l0 & M2) | (r1 & M3);
            w1 = (r1 & M0) | (r0 & M1) | (l1 & M2) | (l0 & M3);
            w2 = (l0 & M0) | (r1 & M1) | (r0 & M2) | (l1 & M3);
            w3 = (l1 & M0) | (l0 & M1) | (r1 & M2) | (r0 & M3);
            Bytes.store32be(out, outOff, (w0 * outM[0]) ^ outA[0]);
            Bytes.store32be(out, outOff + 4, (w1 * outM[1]) ^ outA[1]);
            Bytes.store32be(out, outOff + 8, (w2 * outM[2]) ^ outA[2]);
            Bytes.store32be(out, outOff + 12, (w3 * outM[3]) ^ outA[3]);
        }
    }

    /** Inverse of an odd number modulo 2^32 (Newton; b*b = 1 mod 8 gives 3 correct bits to start with). */
    private static int invOdd(int b) {
        int x = b;
        for (int i = 0; i < 4; i++)
            x *= 2 - b * x;
        return x;
    }

    private static int s4(int w) { // S on the four bytes of a word
        return (T[256 + (w >>> 24)] & M0) | (T[(w >>> 16) & 0xff] & M1) | (T[(w >>> 8) & 0xff] & M2)
                | (T[w & 0xff] & M3);
    }

    /** The 16 subkeys k1..k16, four big-endian words each (p6, p11-p12). */
    private static int[][] subkeys(byte[] key, int bits) {
        int[] x = new int[8];
        int[][] l = new int[32][2];
        int[] v = {0x01234567, 0x89abcdef}; // v_-1
        for (int i = 0; i < 8; i++)
            x[i] = i < bits / 32 ? Bytes.load32be(key, 4 * i) : 0;
        if (bits < 256) { // K4 = S^4(v_-1); for 128-bit keys K3 = S^3(v_-1)
            int h = s4(s4(s4(v[0]))), lo = s4(s4(s4(v[1])));
            if (bits == 128) {
                x[4] = h;
                x[5] = lo;
            }
            x[6] = s4(h);
            x[7] = s4(lo);
        }
        // (L0, (Y0, v0)) = G(K, v_-1); (L_(g+1), (Y_(g+1), v_(g+1))) = G(Y_g, v_g); G: Y_j = f(X_j),
        // U_j = f(U_(j-1)) ^ Y_j, V = U4 (p11); f = P . S (p12).  L_0 unused; L_g = l_4(g-1) .. l_4(g-1)+3
        for (int g = 0; g < 9; g++)
            for (int j = 0; j < 4; j++) {
                sp(x, 2 * j, 2 * j + 1);
                sp(v, 0, 1);
                v[0] ^= x[2 * j];
                v[1] ^= x[2 * j + 1];
                if (g > 0) {
                    l[4 * (g - 1) + j][0] = v[0];
                    l[4 * (g - 1) + j][1] = v[1];
                }
            }
        // byte j of k_(i+1) is byte i/2 of l_(2j + i mod 2)
        int[][] k = new int[16][4];
        for (int i = 0; i < 16; i++) {
            int half = (i >> 1) >> 2, sh = 24 - 8 * ((i >> 1) & 3), p = i & 1;
            for (int w = 0; w < 4; w++) {
                int acc = 0;
                for (int b = 0; b < 4; b++)
                    acc = (acc << 8) | ((l[2 * (4 * w + b) + p][half] >>> sh) & 0xff);
                k[i][w] = acc;
            }
        }
        return k;
    }

    /** Encryption: rounds k1..k12, IT(M, k13, k14), FT(C', k16, k15); decryption: rounds k12..k1,
     * IT(C, k16, k15), FT(M', k13, k14). */
    private int setKey(byte[] key, int bits, boolean decrypt) {
        if (bits != 128 && bits != 192 && bits != 256)
            return BAD_KEY_LENGTH;
        int[][] k = subkeys(key, bits); // k[12..15] hold k13..k16
        int ia = decrypt ? 15 : 12, im = decrypt ? 14 : 13, om = decrypt ? 13 : 14, oa = decrypt ? 12 : 15;
        for (int i = 0; i < 4; i++) {
            for (int r = 0; r < 12; r++)
                rk[4 * r + i] = k[decrypt ? 11 - r : r][i];
            inA[i] = k[ia][i];
            inM[i] = k[im][i] | 1;
            outM[i] = invOdd(k[om][i] | 1);
            outA[i] = k[oa][i];
        }
        return OK;
    }

    @Override
    public int setEncryptKey(byte[] key, int bits) {
        return setKey(key, bits, false);
    }

    @Override
    public int setDecryptKey(byte[] key, int bits) {
        return setKey(key, bits, true);
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

package cipherlab.ciphers.idea;

import cipherlab.BlockCipher;
import cipherlab.Bytes;

/**
 * IDEA (see BlockCipher), written from Lai's thesis, chapter 3 (idea-lai-thesis-ch3): 8 rounds and an output
 * transformation on four 16-bit words (big-endian), 52 subkeys taken 16 bits at a time from the 128-bit key
 * rotated left by 25 bits after every eight; decryption runs the same rounds with the multiplicative inverses
 * and additive negatives of the subkeys in reverse order (the middle two swapped for rounds 2..8).
 * Multiplication is modulo 2^16 + 1 with the word 0 standing for 2^16 (low-high algorithm, int arithmetic:
 * the product of two 16-bit words wraps an int, but its low and high halves are what the algorithm reads).
 */
public final class Ref implements BlockCipher {
    private final int[] k = new int[52];
    private final int[] e = new int[52]; // encryption subkeys while decryption keys are derived

    @Override
    public int blockBytes() {
        return 8;
    }

    @Override
    public int[] keyBits() {
        return new int[] {128};
    }

    @Override
    public int scheduleBytes() {
        return 52 * 4;
    }

    static int mul(int a, int b) {
        if (a == 0)
            return (0x10001 - b) & 0xffff;
        if (b == 0)
            return (0x10001 - a) & 0xffff;
        int p = a * b, lo = p & 0xffff, hi = p >>> 16;
        return (lo - hi + (lo < hi ? 1 : 0)) & 0xffff;
    }

    /** The multiplicative inverse modulo 2^16 + 1 by the extended Euclidean algorithm (0 = 2^16 = -1 and 1
     * are their own inverses); the cofactor of x is tracked as a non-negative int, its sign by the step. */
    static int inv(int x) {
        if (x <= 1)
            return x;
        int t1 = 0x10001 / x, y = 0x10001 % x; // 0x10001 = t1 * x + y
        if (y == 1)
            return (1 - t1) & 0xffff;
        int t0 = 1;
        while (true) {
            int q = x / y;
            x %= y;
            t0 += q * t1;
            if (x == 1)
                return t0;
            q = y / x;
            y %= x;
            t1 += q * t0;
            if (y == 1)
                return (1 - t1) & 0xffff;
        }
    }

    private static void expand(byte[] key, int[] out) {
        long hi = 0, lo = 0;
        for (int i = 0; i < 8; i++) {
            hi = hi << 8 | (key[i] & 0xff);
            lo = lo << 8 | (key[8 + i] & 0xff);
        }
        for (int i = 0; i < 52; i++) {
            int j = i % 8;
            out[i] = (int) ((j < 4 ? hi >>> (48 - 16 * j) : lo >>> (48 - 16 * (j - 4))) & 0xffff);
            if (j == 7) { // rotate the 128-bit key left by 25
                long h = (hi << 25) | (lo >>> 39);
                lo = (lo << 25) | (hi >>> 39);
                hi = h;
            }
        }
    }

    @Override
    public int setEncryptKey(byte[] key, int bits) {
        if (bits != 128)
            return BAD_KEY_LENGTH;
        expand(key, k);
        return OK;
    }

    @Override
    public int setDecryptKey(byte[] key, int bits) {
        if (bits != 128)
            return BAD_KEY_LENGTH;
        expand(key, e);
        for (int r = 0; r <= 8; r++) {
            int s = 48 - 6 * r; // the encryption keys of round 9 - r (the output transformation for r = 0)
            int swap = (r == 0 || r == 8) ? 0 : 1;
            k[6 * r] = inv(e[s]);
            k[6 * r + 1] = -e[s + 1 + swap] & 0xffff;
            k[6 * r + 2] = -e[s + 2 - swap] & 0xffff;
            k[6 * r + 3] = inv(e[s + 3]);
            if (r < 8) {
                k[6 * r + 4] = e[s - 2];
                k[6 * r + 5] = e[s - 1];
            }
        }
        return OK;
    }

    private void crypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        final int[] k = this.k;
        for (int n = 0; n < nblocks; n++, inOff += 8, outOff += 8) {
            int x1 = Bytes.load16be(in, inOff), x2 = Bytes.load16be(in, inOff + 2);
            int x3 = Bytes.load16be(in, inOff + 4), x4 = Bytes.load16be(in, inOff + 6);
            for (int i = 0; i < 48; i += 6) {
                x1 = mul(x1, k[i]);
                x2 = (x2 + k[i + 1]) & 0xffff;
                x3 = (x3 + k[i + 2]) & 0xffff;
                x4 = mul(x4, k[i + 3]);
                int t0 = mul(k[i + 4], x1 ^ x3);
                int t1 = mul(k[i + 5], (t0 + (x2 ^ x4)) & 0xffff);
                t0 = (t0 + t1) & 0xffff;
                x1 ^= t1;
                x4 ^= t0;
                int t = x2 ^ t0;
                x2 = x3 ^ t1;
                x3 = t;
            }
            Bytes.store16be(out, outOff, mul(x1, k[48]));
            Bytes.store16be(out, outOff + 2, x3 + k[49]); // the last round's swap undone
            Bytes.store16be(out, outOff + 4, x2 + k[50]);
            Bytes.store16be(out, outOff + 6, mul(x4, k[51]));
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

package cipherlab.ciphers.rc6;

import cipherlab.BlockCipher;
import cipherlab.Bytes;

/**
 * RC6-32/20/b (see BlockCipher), written from "The RC6 Block Cipher" v1.1 (Rivest, Robshaw, Sidney, Yin,
 * 1998): encryption p3, decryption p5, key schedule and the magic constants p20-p21.  Words little-endian.
 * Four rounds per loop turn bring the registers back to their roles (A, B, C, D) = (B, C, D, A) per round.
 * Integer.rotateLeft takes the count mod 32, as RC6's data-dependent rotations need; C2 emits one rotate.
 */
public final class Ref implements BlockCipher {
    private static final int ROUNDS = 20, WORDS = 2 * ROUNDS + 4;
    private static final int P32 = 0xB7E15163, Q32 = 0x9E3779B9; // p21
    private final int[] s = new int[WORDS];
    private final int[] l = new int[8];

    @Override
    public int blockBytes() {
        return 16;
    }

    @Override
    public int[] keyBits() {
        return new int[] {128, 192, 256};
    }

    @Override
    public int scheduleBytes() {
        return WORDS * 4;
    }

    private int setKey(byte[] key, int bits) {
        if (bits != 128 && bits != 192 && bits != 256)
            return BAD_KEY_LENGTH;
        final int[] s = this.s, l = this.l;
        int c = bits / 32;
        for (int k = 0; k < c; k++)
            l[k] = Bytes.load32le(key, 4 * k);
        s[0] = P32;
        for (int k = 1; k < WORDS; k++)
            s[k] = s[k - 1] + Q32;
        int a = 0, b = 0, i = 0, j = 0;
        for (int v = 3 * Math.max(c, WORDS); v > 0; v--) {
            a = s[i] = Integer.rotateLeft(s[i] + a + b, 3);
            b = l[j] = Integer.rotateLeft(l[j] + a + b, a + b);
            if (++i == WORDS)
                i = 0;
            if (++j == c)
                j = 0;
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

    private static int f(int x) { // (x * (2x + 1)) <<< lg w
        return Integer.rotateLeft(x * (2 * x + 1), 5);
    }

    @Override
    public void encrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        final int[] s = this.s;
        for (int n = 0; n < nblocks; n++, inOff += 16, outOff += 16) {
            int a = Bytes.load32le(in, inOff), b = Bytes.load32le(in, inOff + 4);
            int c = Bytes.load32le(in, inOff + 8), d = Bytes.load32le(in, inOff + 12);
            b += s[0];
            d += s[1];
            for (int i = 2; i < 2 * ROUNDS + 2; i += 8) {
                int t = f(b), u = f(d);
                a = Integer.rotateLeft(a ^ t, u) + s[i];
                c = Integer.rotateLeft(c ^ u, t) + s[i + 1];
                t = f(c);
                u = f(a);
                b = Integer.rotateLeft(b ^ t, u) + s[i + 2];
                d = Integer.rotateLeft(d ^ u, t) + s[i + 3];
                t = f(d);
                u = f(b);
                c = Integer.rotateLeft(c ^ t, u) + s[i + 4];
                a = Integer.rotateLeft(a ^ u, t) + s[i + 5];
                t = f(a);
                u = f(c);
                d = Integer.rotateLeft(d ^ t, u) + s[i + 6];
                b = Integer.rotateLeft(b ^ u, t) + s[i + 7];
            }
            a += s[2 * ROUNDS + 2];
            c += s[2 * ROUNDS + 3];
            Bytes.store32le(out, outOff, a);
            Bytes.store32le(out, outOff + 4, b);
            Bytes.store32le(out, outOff + 8, c);
            Bytes.store32le(out, outOff + 12, d);
        }
    }

    @Override
    public void decrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        final int[] s = this.s;
        for (int n = 0; n < nblocks; n++, inOff += 16, outOff += 16) {
            int a = Bytes.load32le(in, inOff), b = Bytes.load32le(in, inOff + 4);
            int c = Bytes.load32le(in, inOff + 8), d = Bytes.load32le(in, inOff + 12);
            c -= s[2 * ROUNDS + 3];
            a -= s[2 * ROUNDS + 2];
            for (int i = 2 * ROUNDS - 6; i >= 2; i -= 8) {
                int t = f(a), u = f(c); // round i/2 + 3, registers (d, a, b, c)
                b = Integer.rotateRight(b - s[i + 7], t) ^ u;
                d = Integer.rotateRight(d - s[i + 6], u) ^ t;
                t = f(d);
                u = f(b);
                a = Integer.rotateRight(a - s[i + 5], t) ^ u;
                c = Integer.rotateRight(c - s[i + 4], u) ^ t;
                t = f(c);
                u = f(a);
                d = Integer.rotateRight(d - s[i + 3], t) ^ u;
                b = Integer.rotateRight(b - s[i + 2], u) ^ t;
                t = f(b);
                u = f(d);
                c = Integer.rotateRight(c - s[i + 1], t) ^ u;
                a = Integer.rotateRight(a - s[i], u) ^ t;
            }
            d -= s[1];
            b -= s[0];
            Bytes.store32le(out, outOff, a);
            Bytes.store32le(out, outOff + 4, b);
            Bytes.store32le(out, outOff + 8, c);
            Bytes.store32le(out, outOff + 12, d);
        }
    }
}

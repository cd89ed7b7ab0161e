package cipherlab.ciphers.cast256;

import static cipherlab.ciphers.cast256.Sboxes.S1;
import static cipherlab.ciphers.cast256.Sboxes.S2;
import static cipherlab.ciphers.cast256.Sboxes.S3;
import static cipherlab.ciphers.cast256.Sboxes.S4;

import cipherlab.BlockCipher;
import cipherlab.Bytes;

/**
 * CAST-256 (Adams, AES round-1 submission, 1998; RFC 2612), see BlockCipher: round functions f1/f2/f3 p2,
 * S-boxes pp. 3-5 (Sboxes.java, extracted from the text by gen_sboxes.py), quad-rounds Q and Q-bar p6, the
 * octave and the key extraction p7, cipher and decryption key order p8, key schedule p9.  Words big-endian.
 * The 12 quad-round key sets are kept in the order used, so decryption is encryption with the sets reversed.
 */
public final class Ref implements BlockCipher {
    private final int[] km = new int[48], kr = new int[48];

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
        return 4 * 256 * 4;
    }

    @Override
    public int scheduleBytes() {
        return 2 * 48 * 4;
    }

    private static int f1(int d, int r, int m) {
        int i = Integer.rotateLeft(m + d, r);
        return ((S1[i >>> 24] ^ S2[(i >>> 16) & 0xff]) - S3[(i >>> 8) & 0xff]) + S4[i & 0xff];
    }

    private static int f2(int d, int r, int m) {
        int i = Integer.rotateLeft(m ^ d, r);
        return ((S1[i >>> 24] - S2[(i >>> 16) & 0xff]) + S3[(i >>> 8) & 0xff]) ^ S4[i & 0xff];
    }

    private static int f3(int d, int r, int m) {
        int i = Integer.rotateLeft(m - d, r);
        return ((S1[i >>> 24] + S2[(i >>> 16) & 0xff]) ^ S3[(i >>> 8) & 0xff]) - S4[i & 0xff];
    }

    private int expand(byte[] key, int bits, boolean reverse) {
        if (bits != 128 && bits != 192 && bits != 256)
            return BAD_KEY_LENGTH;
        int[] k = new int[8]; // kappa = ABCDEFGH; short keys zero-padded (p9)
        for (int i = 0; i < bits / 32; i++)
            k[i] = Bytes.load32be(key, 4 * i);
        int a = k[0], b = k[1], c = k[2], d = k[3], e = k[4], f = k[5], g = k[6], h = k[7];
        int cm = 0x5a827999, cr = 19; // 2^30 sqrt(2), 19; steps 2^30 sqrt(3), 17 (p9)
        final int mm = 0x6ed9eba1, mr = 17;
        for (int i = 0; i < 12; i++) {
            for (int w = 0; w < 2; w++) { // kappa <- omega_2i, omega_2i+1 (p7)
                g ^= f1(h, cr, cm); cm += mm; cr = (cr + mr) & 31;
                f ^= f2(g, cr, cm); cm += mm; cr = (cr + mr) & 31;
                e ^= f3(f, cr, cm); cm += mm; cr = (cr + mr) & 31;
                d ^= f1(e, cr, cm); cm += mm; cr = (cr + mr) & 31;
                c ^= f2(d, cr, cm); cm += mm; cr = (cr + mr) & 31;
                b ^= f3(c, cr, cm); cm += mm; cr = (cr + mr) & 31;
                a ^= f1(b, cr, cm); cm += mm; cr = (cr + mr) & 31;
                h ^= f2(a, cr, cm); cm += mm; cr = (cr + mr) & 31;
            }
            int at = 4 * (reverse ? 11 - i : i);
            kr[at] = a & 31; kr[at + 1] = c & 31; kr[at + 2] = e & 31; kr[at + 3] = g & 31;
            km[at] = h; km[at + 1] = f; km[at + 2] = d; km[at + 3] = b;
        }
        return OK;
    }

    @Override
    public int setEncryptKey(byte[] key, int bits) {
        return expand(key, bits, false);
    }

    @Override
    public int setDecryptKey(byte[] key, int bits) {
        return expand(key, bits, true);
    }

    private void crypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        final int[] km = this.km, kr = this.kr;
        for (int n = 0; n < nblocks; n++, inOff += 16, outOff += 16) {
            int a = Bytes.load32be(in, inOff), b = Bytes.load32be(in, inOff + 4);
            int c = Bytes.load32be(in, inOff + 8), d = Bytes.load32be(in, inOff + 12);
            for (int i = 0; i < 24; i += 4) { // six forward quad-rounds Q
                c ^= f1(d, kr[i], km[i]);
                b ^= f2(c, kr[i + 1], km[i + 1]);
                a ^= f3(b, kr[i + 2], km[i + 2]);
                d ^= f1(a, kr[i + 3], km[i + 3]);
            }
            for (int i = 24; i < 48; i += 4) { // six reverse quad-rounds Q-bar
                d ^= f1(a, kr[i + 3], km[i + 3]);
                a ^= f3(b, kr[i + 2], km[i + 2]);
                b ^= f2(c, kr[i + 1], km[i + 1]);
                c ^= f1(d, kr[i], km[i]);
            }
            Bytes.store32be(out, outOff, a);
            Bytes.store32be(out, outOff + 4, b);
            Bytes.store32be(out, outOff + 8, c);
            Bytes.store32be(out, outOff + 12, d);
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

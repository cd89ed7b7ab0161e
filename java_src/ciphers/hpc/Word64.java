package cipherlab.ciphers.hpc;

import cipherlab.BlockCipher;
import cipherlab.Bytes;

/**
 * Hasty Pudding Cipher, HPC-Medium with a 128-bit block, 64-bit words (see BlockCipher), written from
 * R. Schroeppel, "Hasty Pudding Cipher Specification" (June 1998, revised May 1999),
 * shared/specs/hpc-spec-rev1999.txt (line numbers of that file), as c_src/ciphers/hpc/word64.c reads it:
 * conventions 13-79, sub-cipher numbers 96-100 (HPC-Medium = 3); constants PI19, E19, R220 113-115; KX table
 * creation 119-171 and 224-234, stirring 173-222; HPC-Medium encryption 375-428, decryption 431-491.
 *
 * <p>Version: the original 1998 key expansion, which the submission's KAT files follow (without the May 1999
 * `s2 += KX[i]` of line 200).  Spice: none (all zero), so every spice term of a round is the identity and is left
 * out.  Backup 0.  Block word j and key word j are bytes 8j..8j+7 read big-endian.  Not constant time (KX indexed
 * by secret bytes, a data-dependent shift), by design.
 */
public final class Word64 implements BlockCipher {
    private static final long PI19 = 3141592653589793238L, E19 = 2718281828459045235L; // lines 113-114
    private static final long R220 = Long.parseUnsignedLong("14142135623730950488"); // line 115
    private static final int SUBCIPHER = 3, BLOCK_BITS = 128;
    private static final long PI19_B = PI19 + BLOCK_BITS;

    private final long[] kx = new long[256 + 30]; // the table plus the 30-word wrap copy

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
        return kx.length * 8;
    }

    private static long load64be(byte[] b, int off) {
        return ((long) Bytes.load32be(b, off) << 32) | (Bytes.load32be(b, off + 4) & 0xffffffffL);
    }

    private static void store64be(byte[] b, int off, long v) {
        Bytes.store32be(b, off, (int) (v >>> 32));
        Bytes.store32be(b, off + 4, (int) v);
    }

    /** The stirring function (lines 173-222), `passes` passes over KX[0..255]. */
    private static void stir(long[] kx, int passes) {
        long s0 = kx[248], s1 = kx[249], s2 = kx[250], s3 = kx[251];
        long s4 = kx[252], s5 = kx[253], s6 = kx[254], s7 = kx[255];
        for (int j = 0; j < passes; j++)
            for (int i = 0; i < 256; i++) {
                s0 ^= (kx[i] ^ kx[(i + 83) & 255]) + kx[(int) (s0 & 255)];
                s1 += s0;
                s3 ^= s2;
                s5 -= s4;
                s7 ^= s6;
                s3 += s0 >>> 13;
                s4 ^= s1 << 11;
                s5 ^= s3 << (s1 & 31);
                s6 += s2 >>> 17;
                s7 |= s3 + s4;
                s2 -= s5;
                s0 -= s6 ^ i;
                s1 ^= s5 + PI19;
                s2 += s7 >>> j;
                s2 ^= s1;
                s4 -= s3;
                s6 ^= s5;
                s0 += s7;
                kx[i] = s2 + s6;
            }
    }

    /** The KX table of sub-cipher 3 (lines 119-171, 224-234). */
    private int setKey(byte[] key, int bits) {
        if (bits != 128 && bits != 192 && bits != 256)
            return BAD_KEY_LENGTH;
        final long[] kx = this.kx;
        kx[0] = PI19 + SUBCIPHER;
        kx[1] = E19 * bits;
        kx[2] = Long.rotateLeft(R220, SUBCIPHER);
        for (int i = 3; i < 256; i++)
            kx[i] = kx[i - 1] + (kx[i - 2] ^ kx[i - 3] >>> 23 ^ kx[i - 3] << 41);
        for (int w = 0; w < bits / 64; w++) // at most 4 key words: one xor-in and one stirring
            kx[w] ^= load64be(key, 8 * w);
        stir(kx, 3);
        System.arraycopy(kx, 0, kx, 256, 30);
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

    @Override
    public void encrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        final long[] kx = this.kx;
        for (int n = 0; n < nblocks; n++, inOff += 16, outOff += 16) {
            long s0 = load64be(in, inOff) + kx[BLOCK_BITS], s1 = load64be(in, inOff + 8) + kx[BLOCK_BITS + 1];
            for (int i = 0; i < 8; i++) { // HPC-Medium round i (lines 387-422), spice terms dropped
                long k = kx[(int) (s0 & 255)];
                s1 += k;
                s0 ^= k << 8;
                s1 ^= s0;
                s0 -= s1 >>> 11;
                s0 ^= s1 << 2;
                s0 += (s0 << 32) ^ PI19_B;
                s0 ^= s0 >>> 17;
                s0 ^= s0 >>> 34;
                s0 += s0 << (22 + (s0 & 31));
                s0 ^= s0 >>> 23;
                int t = (int) (s0 & 255);
                k = kx[t];
                long kk = kx[t + 3 * i + 1];
                s1 ^= k;
                s0 ^= kk << 8;
                kk ^= k;
                s1 += kk >>> 5;
                s0 -= kk << 12;
                s0 ^= kk & ~255L;
                s1 += s0;
                s0 += s1 << 3;
                s0 += kx[BLOCK_BITS + 16 + i];
                s0 += s0 << 22;
                s0 ^= s1 >>> 4;
                s0 ^= s0 >>> (33 + i);
            }
            store64be(out, outOff, s0 + kx[BLOCK_BITS + 8]);
            store64be(out, outOff + 8, s1 + kx[BLOCK_BITS + 9]);
        }
    }

    @Override
    public void decrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        final long[] kx = this.kx;
        for (int n = 0; n < nblocks; n++, inOff += 16, outOff += 16) {
            long s0 = load64be(in, inOff) - kx[BLOCK_BITS + 8], s1 = load64be(in, inOff + 8) - kx[BLOCK_BITS + 9];
            for (int i = 7; i >= 0; i--) { // the round's steps in reverse order, each undone (lines 431-491)
                s0 ^= s0 >>> (33 + i); // a shift >= 32: self-inverse
                s0 ^= s1 >>> 4;
                long u = s0 - (s0 << 22); // undo s0 += s0 << 22
                s0 -= u << 22;
                s0 -= kx[BLOCK_BITS + 16 + i];
                s0 -= s1 << 3;
                s1 -= s0;
                int t = (int) (s0 & 255); // the kk steps kept the low byte
                long k = kx[t], kk = kx[t + 3 * i + 1], kkx = kk ^ k;
                s0 ^= kkx & ~255L;
                s0 += kkx << 12;
                s1 -= kkx >>> 5;
                s0 ^= kk << 8;
                s1 ^= k;
                s0 ^= s0 >>> 23;
                s0 ^= s0 >>> 46;
                int sh = 22 + (int) (s0 & 31);
                u = s0 - (s0 << sh);
                s0 -= u << sh;
                s0 ^= s0 >>> 17;
                u = s0 - ((s0 << 32) ^ PI19_B);
                s0 -= (u << 32) ^ PI19_B;
                s0 ^= s1 << 2;
                s0 += s1 >>> 11;
                s1 ^= s0;
                k = kx[(int) (s0 & 255)];
                s0 ^= k << 8;
                s1 -= k;
            }
            store64be(out, outOff, s0 - kx[BLOCK_BITS]);
            store64be(out, outOff + 8, s1 - kx[BLOCK_BITS + 1]);
        }
    }
}

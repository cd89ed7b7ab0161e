package cipherlab.ciphers.saferplus;

import cipherlab.BlockCipher;

/**
 * SAFER+ (see BlockCipher), written from Cylink's AES submission "Nomination of SAFER+ as Candidate Algorithm
 * for the AES" (Massey, Khachatrian, Kuregian; 12 June 1998), shared/specs/saferplus-aes-submission.pdf:
 * <ul>
 * <li>rounds r = 8/12/16 and the output transformation with K_{2r+1}: Sec. 2.1, p3;</li>
 * <li>encryption round (xor/add K_{2i-1}, exp/log, add/xor K_{2i}, y = xM): Sec. 2.1.1, p4-p5; decryption round
 * Sec. 2.1.2, p5-p7; exp[x] = 45^x mod 257 (256 as 0), log its inverse: p4;</li>
 * <li>key schedule (n key bytes plus their xor in a register, every register byte rotated left by 3 before each
 * subkey, bias words B_i added): Sec. 2.1.3, p8-p11; B_ij = 45^(45^(17i+j) mod 257) mod 257 for i &le; 17,
 * 45^(17i+j) mod 257 above (p8).</li>
 * </ul>
 * Bytes 1,4,5,8,9,12,13,16 (index 0,3,4,7,8,11,12,15: the "A" bytes) take xor-key, exp, add-key; the others
 * add-key, log, xor-key.  The matrix M is applied as the network the submission describes (Sec. 3, p22: 64 PHT
 * butterflies in four levels), (a, b) -&gt; (2a + b, a + b) on the pairs (0,1), (2,3), ... with the shuffle
 * new[j] = old[SIGMA[j]] between levels (SIGMA as c_src/ciphers/saferplus/gen_tables.py recovered it from M).
 * State bytes live in ints, reduced mod 256 where a table is indexed or a byte stored.  Not constant time.
 */
public final class Ref implements BlockCipher {
    private static final int[] EXP = new int[256], LOG = new int[256];
    private static final int[][] BIAS = new int[34][16]; // BIAS[i] = B_i, i = 2..33
    private static final int[] SIGMA = {8, 11, 12, 15, 2, 1, 6, 5, 10, 9, 14, 13, 0, 7, 4, 3};
    private static final boolean[] A_BYTE = new boolean[16];

    private static int pow45(int e) { // 45^e mod 257
        int r = 1;
        for (int i = 0; i < e % 256; i++) // 45 has order 256 modulo 257
            r = r * 45 % 257;
        return r;
    }

    static {
        for (int x = 0; x < 256; x++) {
            int e = pow45(x) & 0xff; // 45^128 = 256 -> 0
            EXP[x] = e;
            LOG[e] = x;
        }
        for (int i = 2; i <= 33; i++)
            for (int j = 1; j <= 16; j++)
                BIAS[i][j - 1] = (i <= 17 ? pow45(pow45(17 * i + j)) : pow45(17 * i + j)) & 0xff;
        for (int j : new int[] {0, 3, 4, 7, 8, 11, 12, 15})
            A_BYTE[j] = true;
    }

    private final int[][] k = new int[33][16]; // k[i] = K_{i+1}
    private final int[] x = new int[16], t = new int[16];
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
        return (2 * 256 + 32 * 16) * 4;
    }

    @Override
    public int scheduleBytes() {
        return 33 * 16 * 4 + 4;
    }

    private int setKey(byte[] key, int bits) {
        if (bits != 128 && bits != 192 && bits != 256)
            return BAD_KEY_LENGTH;
        int n = bits / 8;
        rounds = bits == 128 ? 8 : bits == 192 ? 12 : 16;
        int[] reg = new int[n + 1];
        int parity = 0;
        for (int j = 0; j < n; j++) {
            reg[j] = key[j] & 0xff;
            parity ^= reg[j];
        }
        reg[n] = parity;
        for (int j = 0; j < 16; j++)
            k[0][j] = key[j] & 0xff;
        for (int i = 2; i <= 2 * rounds + 1; i++) {
            for (int j = 0; j <= n; j++)
                reg[j] = ((reg[j] << 3) | (reg[j] >>> 5)) & 0xff;
            for (int j = 0, pos = i - 1; j < 16; j++, pos = pos == n ? 0 : pos + 1)
                k[i - 1][j] = (reg[pos] + BIAS[i][j]) & 0xff;
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

    /** y = xM: four levels of PHT butterflies, the shuffle between them. */
    private void mix(int[] x) {
        final int[] t = this.t;
        for (int level = 0; level < 4; level++) {
            if (level > 0) {
                for (int j = 0; j < 16; j++)
                    t[j] = x[SIGMA[j]];
                System.arraycopy(t, 0, x, 0, 16);
            }
            for (int j = 0; j < 16; j += 2) {
                x[j + 1] += x[j];
                x[j] += x[j + 1];
            }
        }
    }

    /** x = yM^-1: the network backwards. */
    private void unmix(int[] x) {
        final int[] t = this.t;
        for (int level = 0; level < 4; level++) {
            if (level > 0) {
                for (int j = 0; j < 16; j++)
                    t[SIGMA[j]] = x[j];
                System.arraycopy(t, 0, x, 0, 16);
            }
            for (int j = 0; j < 16; j += 2) {
                x[j] -= x[j + 1];
                x[j + 1] -= x[j];
            }
        }
    }

    @Override
    public void encrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        final int[] x = this.x;
        for (int n = 0; n < nblocks; n++, inOff += 16, outOff += 16) {
            for (int j = 0; j < 16; j++)
                x[j] = in[inOff + j] & 0xff;
            for (int i = 0; i < rounds; i++) {
                int[] k1 = k[2 * i], k2 = k[2 * i + 1];
                for (int j = 0; j < 16; j++)
                    x[j] = A_BYTE[j] ? EXP[(x[j] ^ k1[j]) & 0xff] + k2[j] : LOG[(x[j] + k1[j]) & 0xff] ^ k2[j];
                mix(x);
            }
            int[] kl = k[2 * rounds]; // output transformation with K_{2r+1}
            for (int j = 0; j < 16; j++)
                out[outOff + j] = (byte) (A_BYTE[j] ? x[j] ^ kl[j] : x[j] + kl[j]);
        }
    }

    @Override
    public void decrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        final int[] x = this.x;
        for (int n = 0; n < nblocks; n++, inOff += 16, outOff += 16) {
            int[] kl = k[2 * rounds]; // input transformation
            for (int j = 0; j < 16; j++)
                x[j] = A_BYTE[j] ? (in[inOff + j] & 0xff) ^ kl[j] : (in[inOff + j] & 0xff) - kl[j];
            for (int i = rounds - 1; i >= 0; i--) {
                int[] k1 = k[2 * i], k2 = k[2 * i + 1];
                unmix(x);
                for (int j = 0; j < 16; j++)
                    x[j] = A_BYTE[j] ? LOG[(x[j] - k2[j]) & 0xff] ^ k1[j] : EXP[(x[j] ^ k2[j]) & 0xff] - k1[j];
            }
            for (int j = 0; j < 16; j++)
                out[outOff + j] = (byte) x[j];
        }
    }
}

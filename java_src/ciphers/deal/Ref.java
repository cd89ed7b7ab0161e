package cipherlab.ciphers.deal;

import cipherlab.BlockCipher;
import cipherlab.ciphers.des.DesCore;

/**
 * DEAL (see BlockCipher), written from L.R. Knudsen, "DEAL - A 128-bit Block Cipher" (Feb 1998): a Feistel
 * cipher on two 64-bit halves with DES as the round function, X_j^L = E_RKj(X_{j-1}^L) xor X_{j-1}^R,
 * X_j^R = X_{j-1}^L, the swap kept in the last round (p3); 6 rounds for 128- and 192-bit keys, 8 for 256 (p3).
 *
 * <p>DES is our DES core (../des/DesCore.java).  As the paper suggests (p4), IP is applied to both halves once at
 * the start and IP^-1 once at the end: the DES passes in between run without them (IP is a bit permutation, so it
 * commutes with the XORs).  DEAL only ever encrypts with DES, also when decrypting.
 *
 * <p>Key schedule (p4-p5): the s = keyBits/64 keys K_1..K_s repeated up to r keys, the repetitions xored with
 * the 64-bit ordinal strings &lt;1&gt;, &lt;2&gt;, &lt;4&gt;, &lt;8&gt; (the paper's example &lt;1&gt; =
 * 8000000000000000: first byte 0x80, 0x40, 0x20, 0x10), then DES-CBC-encrypted with IV 0 under the fixed key
 * 0123456789abcdef; the ciphertext blocks are the round keys RK_1..RK_r.  Not constant time.
 */
public final class Ref implements BlockCipher {
    private static final int MAX_ROUNDS = 8;
    private static final int[] FIXED = new int[32]; // DES schedule of the fixed key 0x0123456789abcdef
    private static final int[] ORDINAL = {0x80, 0x40, 0x20, 0x10}; // first bytes of <1>, <2>, <4>, <8>

    static {
        DesCore.schedule(new byte[] {0x01, 0x23, 0x45, 0x67, (byte) 0x89, (byte) 0xab, (byte) 0xcd, (byte) 0xef}, 0,
                FIXED, false);
    }

    private final int[][] sk = new int[MAX_ROUNDS][32]; // one DES schedule per round, in the order applied
    private final byte[] chain = new byte[8];
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
        return DesCore.TABLE_BYTES + FIXED.length * 4;
    }

    @Override
    public int scheduleBytes() {
        return MAX_ROUNDS * 32 * 4 + 4;
    }

    private int setKey(byte[] key, int bits, boolean decrypt) {
        if (bits != 128 && bits != 192 && bits != 256)
            return BAD_KEY_LENGTH;
        int s = bits / 64, r = bits == 256 ? 8 : 6;
        byte[] c = chain;
        java.util.Arrays.fill(c, (byte) 0);
        for (int i = 0; i < r; i++) {
            for (int j = 0; j < 8; j++)
                c[j] ^= key[8 * (i % s) + j];
            if (i >= s)
                c[0] ^= (byte) ORDINAL[i - s];
            DesCore.crypt(FIXED, c, 0, c, 0, 1); // RK_i = E_K(K_(i mod s) xor <.> xor RK_(i-1))
            DesCore.schedule(c, 0, sk[decrypt ? r - 1 - i : i], false); // RK_i keys DES in round i
        }
        rounds = r;
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
        final int r = rounds;
        for (int n = 0; n < nblocks; n++, inOff += 16, outOff += 16) {
            long left = DesCore.ip(in, inOff), right = DesCore.ip(in, inOff + 8);
            for (int j = 0; j < r; j++) {
                long e = DesCore.rounds((int) (left >>> 32), (int) left, sk[j]) ^ right; // E_RKj(X^L) xor X^R
                right = left;
                left = e;
            }
            DesCore.fp(left, out, outOff);
            DesCore.fp(right, out, outOff + 8);
        }
    }

    @Override
    public void decrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        final int r = rounds; // schedules stored last round first
        for (int n = 0; n < nblocks; n++, inOff += 16, outOff += 16) {
            long left = DesCore.ip(in, inOff), right = DesCore.ip(in, inOff + 8);
            for (int j = 0; j < r; j++) {
                long e = DesCore.rounds((int) (right >>> 32), (int) right, sk[j]) ^ left; // X^L xor E_RKj(X^R)
                left = right;
                right = e;
            }
            DesCore.fp(left, out, outOff);
            DesCore.fp(right, out, outOff + 8);
        }
    }
}

package cipherlab.ciphers.magenta;

import cipherlab.BlockCipher;

/**
 * MAGENTA (see BlockCipher), written from Jacobson and Huber's AES round-1 submission
 * (shared/specs/magenta-aes-submission.pdf pages 2-3):
 * <pre>
 *   f(x) = alpha^x (x != 255), f(255) = 0 in GF(256) mod x^8+x^6+x^5+x^2+1      (1)
 *   A(x, y) = f(x ^ f(y)),  PE(x, y) = (A(x, y), A(y, x))                         (2)(3)
 *   T = Pi o Pi o Pi o Pi,  Pi(x0..x15) = (PE(x0,x8), PE(x1,x9), ..., PE(x7,x15))  (4)(5)
 *   C(1) = T(x);  C(j+1) = T((x0..x7) ^ Ce(j), (x8..x15) ^ Co(j));  E(3) = Ce(3)   (6)(7)
 *   F_y(x) = ((x8..x15), (x0..x7) ^ E(3)(x8..x15, y0..y7))                         (8)
 *   Enc: F_K1 F_K1 F_K2 F_K2 F_K1 F_K1 (128), K1 K2 K3 K3 K2 K1 (192), K1 K2 K3 K4 K4 K3 K2 K1 (256)  (9)
 *   Dec(M) = V(Enc(V(M))), V swaps the two 8-byte halves                            (10)
 * </pre>
 * Xe / Xo are the even / odd-indexed bytes; byte i of a block or key is x_i / y_i.  Bytes are held in ints;
 * f is a 256-int table computed when the class loads.  Not constant time (table lookups by data).
 */
public final class Ref implements BlockCipher {
    private static final int[] F = new int[256];

    static {
        int a = 1;
        for (int x = 0; x < 255; x++) {
            F[x] = a;
            a <<= 1;
            if (a > 0xff)
                a ^= 0x165; // x^8 + x^6 + x^5 + x^2 + 1
        }
        F[255] = 0;
    }

    private static final int[] ORDER128 = {0, 0, 1, 1, 0, 0}, ORDER192 = {0, 1, 2, 2, 1, 0},
            ORDER256 = {0, 1, 2, 3, 3, 2, 1, 0};

    private final int[][] rk = new int[8][8]; // round keys, bytes in ints, in the order of the rounds
    private int rounds;
    private final int[] c = new int[16], d = new int[16], h0 = new int[8], h1 = new int[8];

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
        return 256 * 4;
    }

    @Override
    public int scheduleBytes() {
        return 8 * 8 * 4 + 4;
    }

    private int setKey(byte[] key, int bits) {
        int[] order;
        switch (bits) {
            case 128: order = ORDER128; break;
            case 192: order = ORDER192; break;
            case 256: order = ORDER256; break;
            default: return BAD_KEY_LENGTH;
        }
        rounds = order.length;
        for (int r = 0; r < rounds; r++)
            for (int i = 0; i < 8; i++)
                rk[r][i] = key[8 * order[r] + i] & 0xff;
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

    /** Pi: z[2i], z[2i+1] = PE(x[i], x[i+8]). */
    private static void pi(int[] x, int[] z) {
        final int[] f = F;
        for (int i = 0; i < 8; i++) {
            int a = x[i], b = x[i + 8];
            z[2 * i] = f[a ^ f[b]];
            z[2 * i + 1] = f[b ^ f[a]];
        }
    }

    /** l ^= E(3)(r, y), from C(0) = 0 so that C(1) = T(r, y) follows the recursion (7). */
    private void e3xor(int[] l, int[] r, int[] y) {
        final int[] c = this.c, d = this.d;
        java.util.Arrays.fill(c, 0);
        for (int j = 0; j < 3; j++) {
            for (int i = 0; i < 8; i++) {
                d[i] = r[i] ^ c[2 * i];
                d[i + 8] = y[i] ^ c[2 * i + 1];
            }
            pi(d, c);
            pi(c, d);
            pi(d, c);
            pi(c, d); // T
            System.arraycopy(d, 0, c, 0, 16);
        }
        for (int i = 0; i < 8; i++)
            l[i] ^= c[2 * i];
    }

    /** Enc on the halves (a, b), two rounds per turn so the halves end in place. */
    private void crypt(int[] a, int[] b) {
        for (int r = 0; r < rounds; r += 2) {
            e3xor(a, b, rk[r]);
            e3xor(b, a, rk[r + 1]);
        }
    }

    @Override
    public void encrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        final int[] a = h0, b = h1;
        for (int n = 0; n < nblocks; n++, inOff += 16, outOff += 16) {
            for (int i = 0; i < 8; i++) {
                a[i] = in[inOff + i] & 0xff;
                b[i] = in[inOff + 8 + i] & 0xff;
            }
            crypt(a, b);
            for (int i = 0; i < 8; i++) {
                out[outOff + i] = (byte) a[i];
                out[outOff + 8 + i] = (byte) b[i];
            }
        }
    }

    @Override
    public void decrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) { // V(Enc(V(M)))
        final int[] a = h0, b = h1;
        for (int n = 0; n < nblocks; n++, inOff += 16, outOff += 16) {
            for (int i = 0; i < 8; i++) {
                b[i] = in[inOff + i] & 0xff;
                a[i] = in[inOff + 8 + i] & 0xff;
            }
            crypt(a, b);
            for (int i = 0; i < 8; i++) {
                out[outOff + i] = (byte) b[i];
                out[outOff + 8 + i] = (byte) a[i];
            }
        }
    }
}

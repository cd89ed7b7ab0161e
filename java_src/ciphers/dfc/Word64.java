package cipherlab.ciphers.dfc;

import cipherlab.BlockCipher;

/**
 * DFC with 64-bit words (see BlockCipher), written from the DFC AES round-1 submission (Gilbert, Girault,
 * Hoogvorst, Noilhan, Pornin, Poupard, Stern, Vaudenay, 1998), shared/specs/dfc-aes-submission.pdf, as
 * c_src/ciphers/dfc/word64.c reads it:
 * <ul>
 * <li>bit strings are big-endian integers (p2); 8-round Feistel, PT = R0|R1, CT = R9|R8, decryption with the
 * round keys reversed (p3-p4);</li>
 * <li>RF_{a|b}(x) = CP(((a*x + b) mod (2^64+13)) mod 2^64) (p4, Eq. 7); CP(yl|yr) = ((yr ^ RT(trunc6(yl))) |
 * (yl ^ KC)) + KD mod 2^64 (p6, Eq. 8);</li>
 * <li>key schedule: PK = trunc256(K|KS), OAP/OBP/EAP/EBP, two 4-round Feistels (p6-p8);</li>
 * <li>constants from the hexadecimal expansion of e (section 1.6, p8-p9): RT(0..63) its first 64 words,
 * KA2..KA4 = RT(0..5), KB2..KB4 = RT(6..11), KS = RT(12..19), then KC and KD.</li>
 * </ul>
 * The 64x64 -&gt; 128-bit product is Math.multiplyHigh corrected to unsigned; the reduction modulo 2^64+13 is
 * the branch-free one of word64.c.  Not constant time: RT is indexed by 6 secret bits.
 */
public final class Word64 implements BlockCipher {
    /** RT(0..63) (p9), as c_src/ciphers/dfc/gen_tables.py generated them from e. */
    private static final int[] RT = {
        0xb7e15162, 0x8aed2a6a, 0xbf715880, 0x9cf4f3c7, 0x62e7160f, 0x38b4da56, 0xa784d904, 0x5190cfef,
        0x324e7738, 0x926cfbe5, 0xf4bf8d8d, 0x8c31d763, 0xda06c80a, 0xbb1185eb, 0x4f7c7b57, 0x57f59584,
        0x90cfd47d, 0x7c19bb42, 0x158d9554, 0xf7b46bce, 0xd55c4d79, 0xfd5f24d6, 0x613c31c3, 0x839a2ddf,
        0x8a9a276b, 0xcfbfa1c8, 0x77c56284, 0xdab79cd4, 0xc2b3293d, 0x20e9e5ea, 0xf02ac60a, 0xcc93ed87,
        0x4422a52e, 0xcb238fee, 0xe5ab6add, 0x835fd1a0, 0x753d0a8f, 0x78e537d2, 0xb95bb79d, 0x8dcaec64,
        0x2c1e9f23, 0xb829b5c2, 0x780bf387, 0x37df8bb3, 0x00d01334, 0xa0d0bd86, 0x45cbfa73, 0xa6160ffe,
        0x393c48cb, 0xbbca060f, 0x0ff8ec6d, 0x31beb5cc, 0xeed7f2f0, 0xbb088017, 0x163bc60d, 0xf45a0ecb,
        0x1bcd289b, 0x06cbbfea, 0x21ad08e1, 0x847f3f73, 0x78d56ced, 0x94640d6e, 0xf0d3d37b, 0xe67008e1,
    };
    private static final long KC = 0xeb64749aL, KD = 0x86d1bf275b9b241dL;
    private static final long[] RT_KC = new long[64]; // RT(j) << 32 | KC: both xors of CP in one word

    static {
        for (int j = 0; j < 64; j++)
            RT_KC[j] = ((long) RT[j] << 32) | KC;
    }

    private final long[] rk = new long[16]; // round key i = a|b at [2i], [2i+1]; reversed for decryption

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
        return 64 * 8;
    }

    @Override
    public int scheduleBytes() {
        return 16 * 8;
    }

    private static long word(int hi, int lo) {
        return ((long) hi << 32) | (lo & 0xffffffffL);
    }

    /** RF_{a|b}(x), Eq. (7), then CP, Eq. (8). */
    private static long rf(long a, long b, long x) {
        long lo = a * x;
        long hi = Math.multiplyHigh(a, x) + ((a >> 63) & x) + ((x >> 63) & a); // unsigned high half
        lo += b;
        hi += Long.compareUnsigned(lo, b) < 0 ? 1 : 0; // no overflow: a*x + b < 2^128
        // mod 2^64+13: 2^64 == -13, so P == lo - 13*hi; 13*hi = qHi*2^64 + qLo, d = lo - qLo with borrow,
        // q = qHi + borrow <= 13, V = d + 13q < 2^64 + 169; on a carry out (s = V - 2^64 < 169) the residue is
        // s - 13 when s >= 13, else s (word64.c explains it)
        long qLo = hi * 13, qHi = Math.multiplyHigh(hi, 13) + ((hi >> 63) & 13);
        long d = lo - qLo;
        long q = qHi + (Long.compareUnsigned(lo, qLo) < 0 ? 1 : 0);
        long s = d + q * 13;
        boolean carry = Long.compareUnsigned(s, d) < 0;
        long y = carry && Long.compareUnsigned(s, 13) >= 0 ? s - 13 : s;
        return (Long.rotateLeft(y, 32) ^ RT_KC[(int) (y >>> 58)]) + KD;
    }

    private int setKey(byte[] key, int bits, boolean reverse) {
        if (bits != 128 && bits != 192 && bits != 256)
            return BAD_KEY_LENGTH;
        int kb = bits / 8;
        long[] pk = new long[9]; // PK = trunc256(K | KS), Eq. (9): PK1..PK8 big-endian 32-bit words
        for (int i = 1; i <= 8; i++) {
            long w = 0;
            for (int j = 4 * (i - 1); j < 4 * i; j++) {
                int byt = j < kb ? key[j] & 0xff : (RT[12 + (j - kb) / 4] >>> (24 - 8 * ((j - kb) & 3))) & 0xff;
                w = (w << 8) | byt;
            }
            pk[i] = w;
        }
        long[] ef1 = new long[8], ef2 = new long[8]; // Eq. (10)-(19): OAP1|OBP1|..|OAP4|OBP4, EAP/EBP likewise
        ef1[0] = pk[1] << 32 | pk[8];
        ef1[1] = pk[5] << 32 | pk[4];
        ef2[0] = pk[2] << 32 | pk[7];
        ef2[1] = pk[6] << 32 | pk[3];
        for (int i = 1; i < 4; i++) {
            long ka = word(RT[2 * (i - 1)], RT[2 * (i - 1) + 1]), kbv = word(RT[6 + 2 * (i - 1)], RT[7 + 2 * (i - 1)]);
            ef1[2 * i] = ef1[0] ^ ka;
            ef1[2 * i + 1] = ef1[1] ^ kbv;
            ef2[2 * i] = ef2[0] ^ ka;
            ef2[2 * i + 1] = ef2[1] ^ kbv;
        }
        long l = 0, r = 0; // Eq. (20)-(23): RK0 = 0, RK_i = Enc_{EF1 or EF2}(RK_(i-1)), 4 rounds
        for (int i = 0; i < 8; i++) {
            long[] ef = i % 2 == 0 ? ef1 : ef2;
            long x0 = l, x1 = r;
            for (int j = 0; j < 4; j += 2) {
                x0 ^= rf(ef[2 * j], ef[2 * j + 1], x1);
                x1 ^= rf(ef[2 * j + 2], ef[2 * j + 3], x0);
            }
            l = x1;
            r = x0;
            int at = reverse ? 7 - i : i;
            rk[2 * at] = l;
            rk[2 * at + 1] = r;
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

    private static long load64be(byte[] b, int off) {
        return ((long) cipherlab.Bytes.load32be(b, off) << 32) | (cipherlab.Bytes.load32be(b, off + 4) & 0xffffffffL);
    }

    private static void store64be(byte[] b, int off, long v) {
        cipherlab.Bytes.store32be(b, off, (int) (v >>> 32));
        cipherlab.Bytes.store32be(b, off + 4, (int) v);
    }

    /** DFC_K = Enc_EK and DFC_K^-1 = Enc_revEK (Eq. 5-6): one loop serves both. */
    private void crypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        final long[] k = rk;
        for (int n = 0; n < nblocks; n++, inOff += 16, outOff += 16) {
            long x0 = load64be(in, inOff), x1 = load64be(in, inOff + 8);
            for (int i = 0; i < 16; i += 4) {
                x0 ^= rf(k[i], k[i + 1], x1);
                x1 ^= rf(k[i + 2], k[i + 3], x0);
            }
            store64be(out, outOff, x1); // CT = R9 | R8
            store64be(out, outOff + 8, x0);
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

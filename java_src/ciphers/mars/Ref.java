package cipherlab.ciphers.mars;

import cipherlab.BlockCipher;
import cipherlab.Bytes;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * MARS (IBM; the AES submission revised Sept. 22 1999, round-2 key schedule with the 15-word T array), see
 * BlockCipher.  Straightforward 32-bit code from shared/specs/mars-aes-submission-rev1999 (E-function and
 * encryption p17-p19, key expansion p20-p23, decryption Appendix B p62-p63) and the IBM paper of Aug. 1999
 * (Figure 4).  Data and key words little-endian, as IBM's KAT files.  The 512-word S-box is computed when the
 * class loads from its definition (section 2.7, p19-p20: SHA-1 of (5i, c1, c2, c3), then "fixed" by
 * multiplying by 3 an entry whose xor with a later one of the same half has two zero bytes).  Decryption is the
 * step-by-step inverse of encryption.  Each loop turn runs four rounds so the word roles come back round.
 */
public final class Ref implements BlockCipher {
    private static final int[] S = sbox();
    private static final int[] B = {0xa4a8d57b, 0x5b5d193b, 0xc8a8309b, 0x73f9a978}; // p21-p22 (= S[265..268])
    private final int[] k = new int[40];
    private final int[] t = new int[15];

    private static int[] sbox() {
        MessageDigest sha1;
        try {
            sha1 = MessageDigest.getInstance("SHA-1");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        int[] s = new int[515];
        for (int i = 0; i < 103; i++) {
            ByteBuffer in = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
            in.putInt(5 * i).putInt(0xb7e15162).putInt(0x243f6a88).putInt(0x02917d59);
            ByteBuffer d = ByteBuffer.wrap(sha1.digest(in.array())).order(ByteOrder.LITTLE_ENDIAN);
            for (int j = 0; j < 5; j++)
                s[5 * i + j] = d.getInt();
        }
        for (int base = 0; base < 512; base += 256)
            for (int i = base; i < base + 256; i++)
                for (int j = i + 1; j < base + 256; j++) {
                    int x = s[i] ^ s[j], zeros = 0;
                    for (int b = 0; b < 32; b += 8)
                        zeros += ((x >>> b) & 0xff) == 0 ? 1 : 0;
                    if (zeros >= 2) {
                        s[i] *= 3;
                        break;
                    }
                }
        return java.util.Arrays.copyOf(s, 512);
    }

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
        return 512 * 4;
    }

    @Override
    public int scheduleBytes() {
        return 40 * 4;
    }

    /** Bits of w inside a run of ten or more equal bits, without the runs' end points and bits 0, 1, 31 (p21). */
    private static int weakRunMask(int w) {
        int eq = ~(w ^ (w >>> 1)) & 0x7fffffff; // bit l: w_l == w_(l+1)
        int start = eq;
        for (int s = 1; s < 9; s++)
            start &= eq >>> s; // bit l: bits l..l+9 all equal
        int inRun = 0;
        for (int s = 0; s < 10; s++)
            inRun |= start << s;
        return inRun & eq & (eq << 1) & 0x7ffffffc;
    }

    private int setKey(byte[] key, int bits) {
        if (bits != 128 && bits != 192 && bits != 256)
            return BAD_KEY_LENGTH;
        final int[] t = this.t, k = this.k;
        int n = bits / 32;
        java.util.Arrays.fill(t, 0);
        for (int i = 0; i < n; i++)
            t[i] = Bytes.load32le(key, 4 * i);
        t[n] = n;
        for (int j = 0; j < 4; j++) {
            // T[i] ^= ((T[i-7] ^ T[i-2]) <<< 3) ^ (4i + j), indices mod 15 (split so no index needs a modulo)
            t[0] ^= Integer.rotateLeft(t[8] ^ t[13], 3) ^ j;
            t[1] ^= Integer.rotateLeft(t[9] ^ t[14], 3) ^ (4 + j);
            for (int i = 2; i < 7; i++)
                t[i] ^= Integer.rotateLeft(t[i + 8] ^ t[i - 2], 3) ^ (4 * i + j);
            for (int i = 7; i < 15; i++)
                t[i] ^= Integer.rotateLeft(t[i - 7] ^ t[i - 2], 3) ^ (4 * i + j);
            int prev = t[14];
            for (int r = 0; r < 4; r++) // stirring: T[i] = (T[i] + S[low 9 bits of T[i-1]]) <<< 9
                for (int i = 0; i < 15; i++)
                    prev = t[i] = Integer.rotateLeft(t[i] + S[prev & 0x1ff], 9);
            for (int i = 0; i < 10; i++)
                k[10 * j + i] = t[(4 * i) % 15];
        }
        for (int i = 5; i <= 35; i += 2) { // fix the multiplication key words
            int w = k[i] | 3;
            k[i] = w ^ (Integer.rotateLeft(B[k[i] & 3], k[i - 1]) & weakRunMask(w));
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

    @Override
    public void encrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        final int[] k = this.k;
        for (int n = 0; n < nblocks; n++, inOff += 16, outOff += 16) {
            int a = Bytes.load32le(in, inOff) + k[0], b = Bytes.load32le(in, inOff + 4) + k[1];
            int c = Bytes.load32le(in, inOff + 8) + k[2], d = Bytes.load32le(in, inOff + 12) + k[3];
            int l, m, r;
            for (int t = 0; t < 2; t++) { // forward mixing, eight rounds (p17-p18)
                b = (b ^ S[a & 0xff]) + S[256 + ((a >>> 8) & 0xff)];
                c += S[(a >>> 16) & 0xff];
                d ^= S[256 + (a >>> 24)];
                a = Integer.rotateRight(a, 24);
                a += d;
                c = (c ^ S[b & 0xff]) + S[256 + ((b >>> 8) & 0xff)];
                d += S[(b >>> 16) & 0xff];
                a ^= S[256 + (b >>> 24)];
                b = Integer.rotateRight(b, 24);
                b += c;
                d = (d ^ S[c & 0xff]) + S[256 + ((c >>> 8) & 0xff)];
                a += S[(c >>> 16) & 0xff];
                b ^= S[256 + (c >>> 24)];
                c = Integer.rotateRight(c, 24);
                a = (a ^ S[d & 0xff]) + S[256 + ((d >>> 8) & 0xff)];
                b += S[(d >>> 16) & 0xff];
                c ^= S[256 + (d >>> 24)];
                d = Integer.rotateRight(d, 24);
            }
            for (int i = 4; i < 20; i += 8) { // core rounds 0..7, forward mode
                m = a + k[i];
                a = Integer.rotateLeft(a, 13);
                r = Integer.rotateLeft(a * k[i + 1], 5);
                l = S[m & 0x1ff] ^ r;
                m = Integer.rotateLeft(m, r);
                r = Integer.rotateLeft(r, 5);
                l = Integer.rotateLeft(l ^ r, r);
                b += l; c += m; d ^= r;
                m = b + k[i + 2];
                b = Integer.rotateLeft(b, 13);
                r = Integer.rotateLeft(b * k[i + 3], 5);
                l = S[m & 0x1ff] ^ r;
                m = Integer.rotateLeft(m, r);
                r = Integer.rotateLeft(r, 5);
                l = Integer.rotateLeft(l ^ r, r);
                c += l; d += m; a ^= r;
                m = c + k[i + 4];
                c = Integer.rotateLeft(c, 13);
                r = Integer.rotateLeft(c * k[i + 5], 5);
                l = S[m & 0x1ff] ^ r;
                m = Integer.rotateLeft(m, r);
                r = Integer.rotateLeft(r, 5);
                l = Integer.rotateLeft(l ^ r, r);
                d += l; a += m; b ^= r;
                m = d + k[i + 6];
                d = Integer.rotateLeft(d, 13);
                r = Integer.rotateLeft(d * k[i + 7], 5);
                l = S[m & 0x1ff] ^ r;
                m = Integer.rotateLeft(m, r);
                r = Integer.rotateLeft(r, 5);
                l = Integer.rotateLeft(l ^ r, r);
                a += l; b += m; c ^= r;
            }
            for (int i = 20; i < 36; i += 8) { // core rounds 8..15, backwards mode
                m = a + k[i];
                a = Integer.rotateLeft(a, 13);
                r = Integer.rotateLeft(a * k[i + 1], 5);
                l = S[m & 0x1ff] ^ r;
                m = Integer.rotateLeft(m, r);
                r = Integer.rotateLeft(r, 5);
                l = Integer.rotateLeft(l ^ r, r);
                d += l; c += m; b ^= r;
                m = b + k[i + 2];
                b = Integer.rotateLeft(b, 13);
                r = Integer.rotateLeft(b * k[i + 3], 5);
                l = S[m & 0x1ff] ^ r;
                m = Integer.rotateLeft(m, r);
                r = Integer.rotateLeft(r, 5);
                l = Integer.rotateLeft(l ^ r, r);
                a += l; d += m; c ^= r;
                m = c + k[i + 4];
                c = Integer.rotateLeft(c, 13);
                r = Integer.rotateLeft(c * k[i + 5], 5);
                l = S[m & 0x1ff] ^ r;
                m = Integer.rotateLeft(m, r);
                r = Integer.rotateLeft(r, 5);
                l = Integer.rotateLeft(l ^ r, r);
                b += l; a += m; d ^= r;
                m = d + k[i + 6];
                d = Integer.rotateLeft(d, 13);
                r = Integer.rotateLeft(d * k[i + 7], 5);
                l = S[m & 0x1ff] ^ r;
                m = Integer.rotateLeft(m, r);
                r = Integer.rotateLeft(r, 5);
                l = Integer.rotateLeft(l ^ r, r);
                c += l; b += m; a ^= r;
            }
            for (int t = 0; t < 2; t++) { // backwards mixing, eight rounds
                b ^= S[256 + (a & 0xff)];
                c -= S[a >>> 24];
                d = (d - S[256 + ((a >>> 16) & 0xff)]) ^ S[(a >>> 8) & 0xff];
                a = Integer.rotateLeft(a, 24);
                c ^= S[256 + (b & 0xff)];
                d -= S[b >>> 24];
                a = (a - S[256 + ((b >>> 16) & 0xff)]) ^ S[(b >>> 8) & 0xff];
                b = Integer.rotateLeft(b, 24);
                c -= b;
                d ^= S[256 + (c & 0xff)];
                a -= S[c >>> 24];
                b = (b - S[256 + ((c >>> 16) & 0xff)]) ^ S[(c >>> 8) & 0xff];
                c = Integer.rotateLeft(c, 24);
                d -= a;
                a ^= S[256 + (d & 0xff)];
                b -= S[d >>> 24];
                c = (c - S[256 + ((d >>> 16) & 0xff)]) ^ S[(d >>> 8) & 0xff];
                d = Integer.rotateLeft(d, 24);
            }
            Bytes.store32le(out, outOff, a - k[36]);
            Bytes.store32le(out, outOff + 4, b - k[37]);
            Bytes.store32le(out, outOff + 8, c - k[38]);
            Bytes.store32le(out, outOff + 12, d - k[39]);
        }
    }

    @Override
    public void decrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        final int[] k = this.k;
        for (int n = 0; n < nblocks; n++, inOff += 16, outOff += 16) {
            int a = Bytes.load32le(in, inOff) + k[36], b = Bytes.load32le(in, inOff + 4) + k[37];
            int c = Bytes.load32le(in, inOff + 8) + k[38], d = Bytes.load32le(in, inOff + 12) + k[39];
            int l, m, r;
            for (int t = 0; t < 2; t++) { // undo backwards mixing, last round first
                d = Integer.rotateRight(d, 24);
                a ^= S[256 + (d & 0xff)];
                b += S[d >>> 24];
                c = (c ^ S[(d >>> 8) & 0xff]) + S[256 + ((d >>> 16) & 0xff)];
                d += a;
                c = Integer.rotateRight(c, 24);
                d ^= S[256 + (c & 0xff)];
                a += S[c >>> 24];
                b = (b ^ S[(c >>> 8) & 0xff]) + S[256 + ((c >>> 16) & 0xff)];
                c += b;
                b = Integer.rotateRight(b, 24);
                c ^= S[256 + (b & 0xff)];
                d += S[b >>> 24];
                a = (a ^ S[(b >>> 8) & 0xff]) + S[256 + ((b >>> 16) & 0xff)];
                a = Integer.rotateRight(a, 24);
                b ^= S[256 + (a & 0xff)];
                c += S[a >>> 24];
                d = (d ^ S[(a >>> 8) & 0xff]) + S[256 + ((a >>> 16) & 0xff)];
            }
            for (int i = 34; i > 18; i -= 8) { // undo core rounds 15..8
                r = Integer.rotateLeft(d * k[i + 1], 5);
                d = Integer.rotateRight(d, 13);
                m = d + k[i];
                l = S[m & 0x1ff] ^ r;
                m = Integer.rotateLeft(m, r);
                r = Integer.rotateLeft(r, 5);
                l = Integer.rotateLeft(l ^ r, r);
                c -= l; b -= m; a ^= r;
                r = Integer.rotateLeft(c * k[i - 1], 5);
                c = Integer.rotateRight(c, 13);
                m = c + k[i - 2];
                l = S[m & 0x1ff] ^ r;
                m = Integer.rotateLeft(m, r);
                r = Integer.rotateLeft(r, 5);
                l = Integer.rotateLeft(l ^ r, r);
                b -= l; a -= m; d ^= r;
                r = Integer.rotateLeft(b * k[i - 3], 5);
                b = Integer.rotateRight(b, 13);
                m = b + k[i - 4];
                l = S[m & 0x1ff] ^ r;
                m = Integer.rotateLeft(m, r);
                r = Integer.rotateLeft(r, 5);
                l = Integer.rotateLeft(l ^ r, r);
                a -= l; d -= m; c ^= r;
                r = Integer.rotateLeft(a * k[i - 5], 5);
                a = Integer.rotateRight(a, 13);
                m = a + k[i - 6];
                l = S[m & 0x1ff] ^ r;
                m = Integer.rotateLeft(m, r);
                r = Integer.rotateLeft(r, 5);
                l = Integer.rotateLeft(l ^ r, r);
                d -= l; c -= m; b ^= r;
            }
            for (int i = 18; i > 2; i -= 8) { // undo core rounds 7..0
                r = Integer.rotateLeft(d * k[i + 1], 5);
                d = Integer.rotateRight(d, 13);
                m = d + k[i];
                l = S[m & 0x1ff] ^ r;
                m = Integer.rotateLeft(m, r);
                r = Integer.rotateLeft(r, 5);
                l = Integer.rotateLeft(l ^ r, r);
                a -= l; b -= m; c ^= r;
                r = Integer.rotateLeft(c * k[i - 1], 5);
                c = Integer.rotateRight(c, 13);
                m = c + k[i - 2];
                l = S[m & 0x1ff] ^ r;
                m = Integer.rotateLeft(m, r);
                r = Integer.rotateLeft(r, 5);
                l = Integer.rotateLeft(l ^ r, r);
                d -= l; a -= m; b ^= r;
                r = Integer.rotateLeft(b * k[i - 3], 5);
                b = Integer.rotateRight(b, 13);
                m = b + k[i - 4];
                l = S[m & 0x1ff] ^ r;
                m = Integer.rotateLeft(m, r);
                r = Integer.rotateLeft(r, 5);
                l = Integer.rotateLeft(l ^ r, r);
                c -= l; d -= m; a ^= r;
                r = Integer.rotateLeft(a * k[i - 5], 5);
                a = Integer.rotateRight(a, 13);
                m = a + k[i - 6];
                l = S[m & 0x1ff] ^ r;
                m = Integer.rotateLeft(m, r);
                r = Integer.rotateLeft(r, 5);
                l = Integer.rotateLeft(l ^ r, r);
                b -= l; c -= m; d ^= r;
            }
            for (int t = 0; t < 2; t++) { // undo forward mixing
                d = Integer.rotateLeft(d, 24);
                a = (a - S[256 + ((d >>> 8) & 0xff)]) ^ S[d & 0xff];
                b -= S[(d >>> 16) & 0xff];
                c ^= S[256 + (d >>> 24)];
                c = Integer.rotateLeft(c, 24);
                d = (d - S[256 + ((c >>> 8) & 0xff)]) ^ S[c & 0xff];
                a -= S[(c >>> 16) & 0xff];
                b ^= S[256 + (c >>> 24)];
                b -= c;
                b = Integer.rotateLeft(b, 24);
                c = (c - S[256 + ((b >>> 8) & 0xff)]) ^ S[b & 0xff];
                d -= S[(b >>> 16) & 0xff];
                a ^= S[256 + (b >>> 24)];
                a -= d;
                a = Integer.rotateLeft(a, 24);
                b = (b - S[256 + ((a >>> 8) & 0xff)]) ^ S[a & 0xff];
                c -= S[(a >>> 16) & 0xff];
                d ^= S[256 + (a >>> 24)];
            }
            Bytes.store32le(out, outOff, a - k[0]);
            Bytes.store32le(out, outOff + 4, b - k[1]);
            Bytes.store32le(out, outOff + 8, c - k[2]);
            Bytes.store32le(out, outOff + 12, d - k[3]);
        }
    }
}

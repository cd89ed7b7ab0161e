package cipherlab.ciphers.frog;

import cipherlab.BlockCipher;

/**
 * FROG with a 16-byte block (see BlockCipher), written from TecApro's AES round-1 submission (Georgoudis, Leroux,
 * Chaves, 1998), shared/specs/frog-aes-submission.pdf: conventions (byte arrays, index 0 the least significant
 * byte) p3; FROGencrypt / FROGdecrypt p6-p7; makeInternalKey, hashKey (simpleKey, IV, CBC over 2304 zero bytes)
 * p10-p12; randomSeed p13; makePermutation p13-p14; Validate p16.
 *
 * <p>FROG works on byte arrays only: block and key bytes are used in memory order (vectors/README.md explains
 * that the submission's KAT files printed them reversed).  The internal key is the spec's 2304 bytes, eight
 * records of xorBu[16], substPermu[256], bombPermu[16]; the decryption schedule has every substPermu inverted
 * (p10).  The round steps follow the pseudo-code literally.  Not constant time (lookups at secret indices).
 */
public final class Ref implements BlockCipher {
    private static final int BLOCK = 16, ROUNDS = 8, RECORD = BLOCK + 256 + BLOCK, INTERNAL = ROUNDS * RECORD;
    private static final int SUBST = BLOCK, BOMB = BLOCK + 256; // offsets inside a record

    /** randomSeed (p13): the first 251 five-digit groups of RAND's "A Million Random Digits" mod 256. */
    private static final int[] SEED = {
        113, 21, 232, 18, 113, 92, 63, 157, 124, 193, 166, 197, 126, 56, 229, 229,
        156, 162, 54, 17, 230, 89, 189, 87, 169, 0, 81, 204, 8, 70, 203, 225,
        160, 59, 167, 189, 100, 157, 84, 11, 7, 130, 29, 51, 32, 45, 135, 237,
        139, 33, 17, 221, 24, 50, 89, 74, 21, 205, 191, 242, 84, 53, 3, 230,
        231, 118, 15, 15, 107, 4, 21, 34, 3, 156, 57, 66, 93, 255, 191, 3,
        85, 135, 205, 200, 185, 204, 52, 37, 35, 24, 68, 185, 201, 10, 224, 234,
        7, 120, 201, 115, 216, 103, 57, 255, 93, 110, 42, 249, 68, 14, 29, 55,
        128, 84, 37, 152, 221, 137, 39, 11, 252, 50, 144, 35, 178, 190, 43, 162,
        103, 249, 109, 8, 235, 33, 158, 111, 252, 205, 169, 54, 10, 20, 221, 201,
        178, 224, 89, 184, 182, 65, 201, 10, 60, 6, 191, 174, 79, 98, 26, 160,
        252, 51, 63, 79, 6, 102, 123, 173, 49, 3, 110, 233, 90, 158, 228, 210,
        209, 237, 30, 95, 28, 179, 204, 220, 72, 163, 77, 166, 192, 98, 165, 25,
        145, 162, 91, 212, 41, 230, 110, 6, 107, 187, 127, 38, 82, 98, 30, 67,
        225, 80, 208, 134, 60, 250, 153, 87, 148, 60, 66, 165, 72, 29, 165, 82,
        211, 207, 0, 177, 206, 13, 6, 14, 92, 248, 60, 201, 132, 95, 35, 215,
        118, 177, 121, 180, 27, 83, 131, 26, 39, 46, 12,
    };

    private final byte[] key = new byte[INTERNAL]; // the internal key (the schedule)
    private final byte[] simple = new byte[INTERNAL], buffer = new byte[BLOCK];

    @Override
    public int blockBytes() {
        return BLOCK;
    }

    @Override
    public int[] keyBits() {
        return new int[] {128, 192, 256};
    }

    @Override
    public int tableBytes() {
        return SEED.length * 4;
    }

    @Override
    public int scheduleBytes() {
        return INTERNAL;
    }

    /** makePermutation (p14): in[off..off+lastElem] (any bytes) become a permutation of 0..lastElem. */
    private static void makePermutation(byte[] in, int off, int lastElem) {
        int[] use = new int[lastElem + 1];
        for (int i = 0; i <= lastElem; i++)
            use[i] = i;
        int last = lastElem, index = 0;
        for (int i = 0; i < lastElem; i++) {
            index = (index + (in[off + i] & 0xff)) % (last + 1);
            in[off + i] = (byte) use[index];
            if (index < last) // remove use[index]
                System.arraycopy(use, index + 1, use, index, last - index);
            last--;
            if (index > last)
                index = 0;
        }
        in[off + lastElem] = (byte) use[0];
    }

    /** Validate (p16): bombPermu at b[off..off+15] becomes a single 16-cycle where no element points to the next
     * position. */
    private static void validate(byte[] b, int off) {
        boolean[] used = new boolean[BLOCK];
        int index = 0;
        for (int i = 0; i < BLOCK - 1; i++) {
            if (b[off + index] == 0) { // a short cycle: splice in the next one
                int k = index;
                do
                    k = (k + 1) % BLOCK;
                while (used[k]);
                b[off + index] = (byte) k;
                int l = k;
                while (b[off + l] != k)
                    l = b[off + l];
                b[off + l] = 0;
            }
            used[index] = true;
            index = b[off + index];
        }
        for (int i = 0; i < BLOCK; i++)
            if (b[off + i] == (i + 1) % BLOCK)
                b[off + i] = (byte) ((i + 2) % BLOCK);
    }

    /** makeInternalKey (p10). */
    private static void makeInternalKey(byte[] k, boolean forDecryption) {
        for (int r = 0; r < ROUNDS; r++) {
            int rec = r * RECORD;
            makePermutation(k, rec + SUBST, 255);
            if (forDecryption) {
                byte[] inv = new byte[256];
                for (int v = 0; v < 256; v++)
                    inv[k[rec + SUBST + v] & 0xff] = (byte) v;
                System.arraycopy(inv, 0, k, rec + SUBST, 256);
            }
            makePermutation(k, rec + BOMB, BLOCK - 1);
            validate(k, rec + BOMB);
        }
    }

    /** FROGencrypt (p6) of the block at b[off..off+15] in place. */
    private static void encryptBlock(byte[] k, byte[] b, int off) {
        for (int r = 0; r < ROUNDS; r++) {
            final int rec = r * RECORD;
            for (int i = 0; i < BLOCK; i++) {
                int x = k[rec + SUBST + ((b[off + i] ^ k[rec + i]) & 0xff)];
                b[off + i] = (byte) x;
                b[off + (i + 1) % BLOCK] ^= (byte) x; // i = 15: into byte 0
                b[off + k[rec + BOMB + i]] ^= (byte) x;
            }
        }
    }

    /** FROGdecrypt (p7) in place, with the inverted substitutions. */
    private static void decryptBlock(byte[] k, byte[] b, int off) {
        for (int r = ROUNDS - 1; r >= 0; r--) {
            final int rec = r * RECORD;
            for (int i = BLOCK - 1; i >= 0; i--) {
                byte x = b[off + i];
                b[off + k[rec + BOMB + i]] ^= x;
                b[off + (i + 1) % BLOCK] ^= x;
                b[off + i] = (byte) (k[rec + SUBST + (x & 0xff)] ^ k[rec + i]);
            }
        }
    }

    /** hashKey (p11-p12), then makeInternalKey. */
    private int setKey(byte[] userKey, int bits, boolean forDecryption) {
        if (bits != 128 && bits != 192 && bits != 256)
            return BAD_KEY_LENGTH;
        final int len = bits / 8;
        final byte[] sk = simple, buf = buffer;
        for (int i = 0, s = 0, j = 0; i < INTERNAL; i++) { // user key repeated, xored with randomSeed repeated
            sk[i] = (byte) (SEED[s] ^ userKey[j]);
            s = s < 250 ? s + 1 : 0;
            j = j < len - 1 ? j + 1 : 0;
        }
        makeInternalKey(sk, false);
        java.util.Arrays.fill(buf, (byte) 0); // IV: the first (at most 16) key bytes, byte 0 xored with keyLen
        System.arraycopy(userKey, 0, buf, 0, Math.min(len, BLOCK));
        buf[0] ^= (byte) len;
        for (int i = 0; i < INTERNAL; i += BLOCK) { // CBC over 2304 zero bytes: repeated encryption
            encryptBlock(sk, buf, 0);
            System.arraycopy(buf, 0, key, i, BLOCK);
        }
        makeInternalKey(key, forDecryption);
        return OK;
    }

    @Override
    public int setEncryptKey(byte[] k, int bits) {
        return setKey(k, bits, false);
    }

    @Override
    public int setDecryptKey(byte[] k, int bits) {
        return setKey(k, bits, true);
    }

    @Override
    public void encrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        for (int n = 0; n < nblocks; n++, inOff += BLOCK, outOff += BLOCK) {
            if (in != out || inOff != outOff)
                System.arraycopy(in, inOff, out, outOff, BLOCK);
            encryptBlock(key, out, outOff);
        }
    }

    @Override
    public void decrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        for (int n = 0; n < nblocks; n++, inOff += BLOCK, outOff += BLOCK) {
            if (in != out || inOff != outOff)
                System.arraycopy(in, inOff, out, outOff, BLOCK);
            decryptBlock(key, out, outOff);
        }
    }
}

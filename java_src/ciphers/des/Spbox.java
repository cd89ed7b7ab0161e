package cipherlab.ciphers.des;

import cipherlab.BlockCipher;

/** DES with S-boxes merged with P (SP boxes) and IP/IP^-1 as bit swaps: see DesCore and BlockCipher. */
public final class Spbox implements BlockCipher {
    private final int[] sk = new int[32];

    @Override
    public int blockBytes() {
        return 8;
    }

    @Override
    public int[] keyBits() {
        return new int[] {64};
    }

    @Override
    public int tableBytes() {
        return DesCore.TABLE_BYTES;
    }

    @Override
    public int scheduleBytes() {
        return 32 * 4;
    }

    @Override
    public int setEncryptKey(byte[] key, int bits) {
        if (bits != 64)
            return BAD_KEY_LENGTH;
        DesCore.schedule(key, 0, sk, false);
        return OK;
    }

    @Override
    public int setDecryptKey(byte[] key, int bits) {
        if (bits != 64)
            return BAD_KEY_LENGTH;
        DesCore.schedule(key, 0, sk, true);
        return OK;
    }

    @Override
    public void encrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        DesCore.crypt(sk, in, inOff, out, outOff, nblocks);
    }

    @Override
    public void decrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        DesCore.crypt(sk, in, inOff, out, outOff, nblocks);
    }
}

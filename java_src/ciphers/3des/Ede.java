package cipherlab.ciphers._3des;

import cipherlab.BlockCipher;
import cipherlab.ciphers.des.DesCore;

/**
 * Three-key triple DES, EDE (see BlockCipher): E_K3(D_K2(E_K1(P))) on the DES core of ../des/DesCore.java,
 * IP once at the start and IP^-1 once at the end (the passes in between cancel them).
 */
public final class Ede implements BlockCipher {
    private final int[] a = new int[32], b = new int[32], c = new int[32];

    @Override
    public int blockBytes() {
        return 8;
    }

    @Override
    public int[] keyBits() {
        return new int[] {192};
    }

    @Override
    public int tableBytes() {
        return DesCore.TABLE_BYTES;
    }

    @Override
    public int scheduleBytes() {
        return 3 * 32 * 4;
    }

    @Override
    public int setEncryptKey(byte[] key, int bits) {
        if (bits != 192)
            return BAD_KEY_LENGTH;
        DesCore.schedule(key, 0, a, false);
        DesCore.schedule(key, 8, b, true);
        DesCore.schedule(key, 16, c, false);
        return OK;
    }

    @Override
    public int setDecryptKey(byte[] key, int bits) {
        if (bits != 192)
            return BAD_KEY_LENGTH;
        DesCore.schedule(key, 16, a, true);
        DesCore.schedule(key, 8, b, false);
        DesCore.schedule(key, 0, c, true);
        return OK;
    }

    @Override
    public void encrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        DesCore.crypt3(a, b, c, in, inOff, out, outOff, nblocks);
    }

    @Override
    public void decrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        DesCore.crypt3(a, b, c, in, inOff, out, outOff, nblocks);
    }
}

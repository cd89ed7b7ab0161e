package cipherlab.peers;

import cipherlab.BlockCipher;
import java.util.Arrays;
import org.bouncycastle.crypto.params.KeyParameter;

/**
 * Peer adapter: a Bouncy Castle lightweight engine behind BlockCipher (see BlockCipher).
 * Argument (from java_src/peers/bouncycastle.yaml via the registry): "ENGINE_CLASS KEY_BITS,...".
 * Engines are used as their documentation says: init(forEncryption, KeyParameter), processBlock per block.
 */
public final class BouncyCastle implements BlockCipher {
    private final org.bouncycastle.crypto.BlockCipher engine;
    private final int[] keyBits;
    private final int bs;

    public BouncyCastle(String argument) throws ReflectiveOperationException {
        String[] a = argument.split(" ");
        engine = (org.bouncycastle.crypto.BlockCipher) Class.forName(a[0]).getDeclaredConstructor().newInstance();
        keyBits = Arrays.stream(a[1].split(",")).mapToInt(Integer::parseInt).toArray();
        bs = engine.getBlockSize();
    }

    @Override
    public int blockBytes() {
        return bs;
    }

    @Override
    public int[] keyBits() {
        return keyBits.clone();
    }

    @Override
    public int scheduleBytes() {
        return 0; // not exposed by the library
    }

    private int init(boolean forEncryption, byte[] key, int bits) {
        if (Arrays.stream(keyBits).noneMatch(k -> k == bits))
            return BAD_KEY_LENGTH;
        try {
            engine.init(forEncryption, new KeyParameter(key, 0, bits / 8));
        } catch (IllegalArgumentException e) {
            return BAD_KEY;
        }
        return OK;
    }

    @Override
    public int setEncryptKey(byte[] key, int bits) {
        return init(true, key, bits);
    }

    @Override
    public int setDecryptKey(byte[] key, int bits) {
        return init(false, key, bits);
    }

    @Override
    public void encrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        for (int i = 0; i < nblocks; i++)
            engine.processBlock(in, inOff + i * bs, out, outOff + i * bs);
    }

    @Override
    public void decrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        encrypt(in, inOff, out, outOff, nblocks); // the engine's direction was set by init
    }
}

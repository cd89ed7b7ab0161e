package cipherlab.peers;

import cipherlab.BlockCipher;
import java.security.GeneralSecurityException;
import java.security.Provider;
import java.security.Security;
import java.util.Arrays;
import javax.crypto.Cipher;
import javax.crypto.ShortBufferException;
import javax.crypto.spec.SecretKeySpec;

/**
 * Peer adapter: a JCA provider's cipher (the JDK's SunJCE) behind BlockCipher (see BlockCipher).
 * Argument (java_src/peers/sunjce.yaml): "PROVIDER TRANSFORMATION KEY_ALGORITHM BLOCK_BYTES KEY_BITS,...",
 * e.g. "SunJCE AES/ECB/NoPadding AES 16 128,192,256".  Key setup is Cipher.init with a SecretKeySpec;
 * n blocks are one Cipher.update call (ECB without padding keeps no state between calls).
 */
public final class Jce implements BlockCipher {
    private final String provider, transformation, keyAlgorithm;
    private final int bs;
    private final int[] keyBits;
    private final Cipher cipher;

    public Jce(String argument) {
        String[] a = argument.split(" ");
        provider = a[0];
        transformation = a[1];
        keyAlgorithm = a[2];
        bs = Integer.parseInt(a[3]);
        keyBits = Arrays.stream(a[4].split(",")).mapToInt(Integer::parseInt).toArray();
        cipher = lookup(provider, transformation);
    }

    /** The provider's cipher, or null when this JVM has no such provider or transformation (unavailable). */
    private static Cipher lookup(String provider, String transformation) {
        Provider p = Security.getProvider(provider);
        try {
            return p == null ? null : Cipher.getInstance(transformation, p);
        } catch (GeneralSecurityException e) {
            return null;
        }
    }

    @Override
    public boolean available() {
        return cipher != null;
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
        return 0; // not exposed by the provider
    }

    private int init(int mode, byte[] key, int bits) {
        if (Arrays.stream(keyBits).noneMatch(k -> k == bits))
            return BAD_KEY_LENGTH;
        try {
            cipher.init(mode, new SecretKeySpec(key, 0, bits / 8, keyAlgorithm));
        } catch (GeneralSecurityException e) {
            return BAD_KEY;
        }
        return OK;
    }

    @Override
    public int setEncryptKey(byte[] key, int bits) {
        return init(Cipher.ENCRYPT_MODE, key, bits);
    }

    @Override
    public int setDecryptKey(byte[] key, int bits) {
        return init(Cipher.DECRYPT_MODE, key, bits);
    }

    @Override
    public void encrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        try {
            cipher.update(in, inOff, nblocks * bs, out, outOff);
        } catch (ShortBufferException e) {
            throw new IllegalArgumentException(e);
        }
    }

    @Override
    public void decrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        encrypt(in, inOff, out, outOff, nblocks);
    }
}

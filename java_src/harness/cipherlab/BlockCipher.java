package cipherlab;

/**
 * The one interface every Java implementation provides: the Java mirror of
 * c_src/include/cipherlab.h.
 *
 * <p>An instance owns one key schedule (what C's caller-owned {@code ks} is):
 * after {@link #setEncryptKey} it encrypts, after {@link #setDecryptKey} it
 * decrypts, so a caller that needs both directions holds two instances, as the
 * C harness holds two schedules.  Implementations say "see BlockCipher" rather
 * than repeating these comments.
 */
public interface BlockCipher {
    int OK = 0;
    int BAD_KEY_LENGTH = -1;
    int BAD_KEY = -2; // e.g. a weak key the cipher refuses
    int UNAVAILABLE = -4;

    /** 8 or 16. */
    int blockBytes();

    /** Supported key lengths in bits. */
    int[] keyBits();

    /** Bytes of static tables the implementation uses (for the memory table); 0 if it computes everything. */
    default int tableBytes() {
        return 0;
    }

    /** Bytes of one key schedule (ints and bytes it keeps per key). */
    int scheduleBytes();

    /** False when this implementation cannot run in this JVM (e.g. a provider that is absent). */
    default boolean available() {
        return true;
    }

    /** Key setup for encryption from the first keyBits/8 bytes of key; OK or an error code. */
    int setEncryptKey(byte[] key, int keyBits);

    /** Key setup for decryption from the first keyBits/8 bytes of key; OK or an error code. */
    int setDecryptKey(byte[] key, int keyBits);

    /** ECB over nblocks whole blocks; in and out may be the same array at the same offset (in place). */
    void encrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks);

    void decrypt(byte[] in, int inOff, byte[] out, int outOff, int nblocks);
}

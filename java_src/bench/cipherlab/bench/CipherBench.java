package cipherlab.bench;

import cipherlab.BlockCipher;
import cipherlab.Registry;
import cipherlab.SplitMix;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The JMH benchmarks of one implementation (@Param impl, as "cipher/name") and key size: one benchmark per
 * quantity, average time per operation in ns.
 *
 * <ul>
 * <li>encrypt1 / decrypt1: one block per call, in place, so each call depends on the one before (as the C
 * cycles program chains its calls) and the JIT cannot hoist or drop any of them;</li>
 * <li>encrypt1024 / decrypt1024: 1024 blocks (16 KiB or 8 KiB) per call, in place;</li>
 * <li>keySetup: one encryption and one decryption key setup (a key pair, NIST's unit), cycling through 64
 * keys as c_src/harness/timing.c does, into schedules the block benchmarks do not use.</li>
 * </ul>
 * Results go to heap state (the buffer, the schedules) and are returned, so JMH's blackhole sees them:
 * nothing is dead code, and nothing is a compile-time constant (keys and data come from @Setup).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class CipherBench {
    private static final int NKEYS = 64;

    @Param({"rijndael/ttable"})
    public String impl;

    @Param({"128"})
    public int keyBits;

    private BlockCipher enc, dec, keyEnc, keyDec;
    private byte[] one, many;
    private byte[][] keys;
    private int nextKey;

    @Setup
    public void setup() {
        Registry.Entry e = Registry.find(impl);
        if (e == null)
            throw new IllegalArgumentException("implementation not linked into this build: " + impl);
        enc = e.create();
        dec = e.create();
        keyEnc = e.create();
        keyDec = e.create();
        if (!enc.available())
            throw new IllegalStateException(impl + " is not available in this JVM");
        SplitMix rnd = new SplitMix(0x62656e6368L + keyBits);
        keys = new byte[NKEYS][keyBits / 8];
        for (byte[] k : keys)
            rnd.fill(k, 0, k.length);
        if (enc.setEncryptKey(keys[0], keyBits) != BlockCipher.OK || dec.setDecryptKey(keys[0], keyBits) != BlockCipher.OK)
            throw new IllegalArgumentException(impl + " refuses a " + keyBits + "-bit key");
        int bs = enc.blockBytes();
        one = new byte[bs];
        many = new byte[1024 * bs];
        rnd.fill(one, 0, one.length);
        rnd.fill(many, 0, many.length);
    }

    @Benchmark
    public byte[] encrypt1() {
        enc.encrypt(one, 0, one, 0, 1);
        return one;
    }

    @Benchmark
    public byte[] decrypt1() {
        dec.decrypt(one, 0, one, 0, 1);
        return one;
    }

    @Benchmark
    public byte[] encrypt1024() {
        enc.encrypt(many, 0, many, 0, 1024);
        return many;
    }

    @Benchmark
    public byte[] decrypt1024() {
        dec.decrypt(many, 0, many, 0, 1024);
        return many;
    }

    @Benchmark
    public int keySetup() {
        byte[] k = keys[nextKey++ & (NKEYS - 1)];
        return keyEnc.setEncryptKey(k, keyBits) | keyDec.setDecryptKey(k, keyBits);
    }
}

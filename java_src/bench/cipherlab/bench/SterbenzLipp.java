package cipherlab.bench;

import cipherlab.BlockCipher;
import cipherlab.Registry;
import cipherlab.SplitMix;

/**
 * Sterbenz & Lipp's own timing method (section 4.1 of their paper), so that their appendix can be compared like
 * with like.
 *
 * <pre>
 * key setup:   repeat R times: generate 32 random keys; start timer; for each key: repeat 1024 times: initialize
 *              the cipher with the key; stop timer          (once for encryption, once for decryption)
 * encryption:  repeat R times: generate a random key; initialize; start timer; repeat 2048 times: encrypt a
 *              1024-byte array (in place); stop timer        (and the same for decryption)
 * </pre>
 * R is 128 in the paper (--repeats).  The final value, the mean of the samples within three standard deviations,
 * is computed by the lab (lab.stats.nist_summary) from the samples printed here.
 *
 * <p>Usage: {@code SterbenzLipp --impl CIPHER/NAME --key-bits 128[,192,256] [--repeats 128] [--keys 32]
 * [--setups 1024] [--buffers 2048] [--seed N]}.  Output: one JSON line per key size and operation
 * {@code {"type":"sterbenz_lipp","key_bits":128,"op":"encrypt","per_sample":131072,"ns":[...]}} (per_sample:
 * blocks or key setups in one sample), then {@code {"type":"sink",...}} (what the timed work computed, printed
 * so that none of it is dead code).  Exit status: 0, 2 usage error, 3 unavailable.
 */
public final class SterbenzLipp {
    private static long sink;

    public static void main(String[] args) {
        String impl = null;
        String keyList = null;
        int repeats = 128, nkeys = 32, setups = 1024, buffers = 2048;
        long seed = 0x53746572626c7a4cL;
        for (int i = 0; i + 1 < args.length; i += 2) {
            String v = args[i + 1];
            switch (args[i]) {
                case "--impl": impl = v; break;
                case "--key-bits": keyList = v; break;
                case "--repeats": repeats = Integer.parseInt(v); break;
                case "--keys": nkeys = Integer.parseInt(v); break;
                case "--setups": setups = Integer.parseInt(v); break;
                case "--buffers": buffers = Integer.parseInt(v); break;
                case "--seed": seed = Long.parseLong(v); break;
                default:
                    usage("unknown option " + args[i]);
            }
        }
        if (impl == null || keyList == null || repeats < 1 || nkeys < 1 || setups < 1 || buffers < 1)
            usage("--impl and --key-bits are required; counts must be positive");
        Registry.Entry e = Registry.find(impl);
        if (e == null)
            usage("implementation not linked into this build: " + impl);
        BlockCipher c = e.create();
        if (!c.available()) {
            System.out.println("{\"type\":\"unavailable\",\"impl\":\"" + impl + "\"}");
            System.exit(3);
        }
        SplitMix rnd = new SplitMix(seed);
        for (String ks : keyList.split(",")) {
            int bits = Integer.parseInt(ks.trim());
            keySetup(c, rnd, bits, true, repeats, nkeys, setups);
            keySetup(c, rnd, bits, false, repeats, nkeys, setups);
            crypt(e, rnd, bits, true, repeats, buffers);
            crypt(e, rnd, bits, false, repeats, buffers);
        }
        System.out.println("{\"type\":\"sink\",\"value\":" + sink + "}");
    }

    private static void usage(String why) {
        System.out.println("{\"type\":\"error\",\"message\":\"" + why.replace("\"", "'") + "\"}");
        System.exit(2);
    }

    /** A random key the cipher accepts (DES refuses none, but a cipher may refuse a weak key). */
    private static byte[] key(BlockCipher c, SplitMix rnd, int bits) {
        byte[] k = new byte[bits / 8];
        for (int tries = 0; tries < 1000; tries++) {
            rnd.fill(k, 0, k.length);
            if (c.setEncryptKey(k, bits) == BlockCipher.OK)
                return k;
        }
        usage(bits + "-bit keys refused");
        return k;
    }

    private static void keySetup(BlockCipher c, SplitMix rnd, int bits, boolean enc, int repeats, int nkeys,
                                 int setups) {
        long[] ns = new long[repeats];
        byte[][] keys = new byte[nkeys][];
        for (int r = 0; r < repeats; r++) {
            for (int i = 0; i < nkeys; i++)
                keys[i] = key(c, rnd, bits);
            int acc = 0;
            long t0 = System.nanoTime();
            for (int i = 0; i < nkeys; i++)
                for (int j = 0; j < setups; j++)
                    acc |= enc ? c.setEncryptKey(keys[i], bits) : c.setDecryptKey(keys[i], bits);
            ns[r] = System.nanoTime() - t0;
            sink += acc;
        }
        print(bits, enc ? "key_setup_enc" : "key_setup_dec", (long) nkeys * setups, ns);
    }

    private static void crypt(Registry.Entry e, SplitMix rnd, int bits, boolean enc, int repeats, int buffers) {
        BlockCipher c = e.create();
        long[] ns = new long[repeats];
        byte[] buf = new byte[1024];
        int nblocks = buf.length / c.blockBytes();
        rnd.fill(buf, 0, buf.length);
        for (int r = 0; r < repeats; r++) {
            byte[] k = key(c, rnd, bits);
            if (!enc)
                c.setDecryptKey(k, bits);
            long t0 = System.nanoTime();
            for (int i = 0; i < buffers; i++) {
                if (enc)
                    c.encrypt(buf, 0, buf, 0, nblocks);
                else
                    c.decrypt(buf, 0, buf, 0, nblocks);
            }
            ns[r] = System.nanoTime() - t0;
            sink += buf[r & 1023];
        }
        print(bits, enc ? "encrypt" : "decrypt", (long) buffers * nblocks, ns);
    }

    private static void print(int bits, String op, long perSample, long[] ns) {
        StringBuilder sb = new StringBuilder();
        sb.append("{\"type\":\"sterbenz_lipp\",\"key_bits\":").append(bits).append(",\"op\":\"").append(op)
          .append("\",\"per_sample\":").append(perSample).append(",\"ns\":[");
        for (int i = 0; i < ns.length; i++)
            sb.append(i == 0 ? "" : ",").append(ns[i]);
        System.out.println(sb.append("]}"));
    }
}

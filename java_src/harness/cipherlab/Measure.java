package cipherlab;

import java.util.ArrayList;
import java.util.List;

/**
 * The measuring program of a Java cell: c_src/harness/timing.c and cycles.c in one JVM, printing the same
 * records ({"type":"timing"}, {"type":"counter"}, {"type":"cycles"}), so lab/measure.py reads a JVM process as it
 * reads a C process.  One JVM is one process of the cell: its own JIT, its own heap layout (the unit of
 * replication, docs/java.md).
 *
 * <pre>
 *   Measure --impl CIPHER/NAME [--key-bits 128,192,256] [--blocks-per-call C] [--samples R] [--warmup W]
 *           [--sample-us U] [--sizes 1,1024] [--cycle-key-bits 128] [--long-samples L] [--jit-warmup-ms J]
 * </pre>
 *
 * First every operation runs untimed for J ms in all (round robin, so the JIT compiles each hot method), then
 * each quantity's work is sized so that one sample lasts about U microseconds (doubling), then W untimed rounds
 * and R timed rounds, each round one sample of every quantity (interleaved, as timing.c and cycles.c).
 * Timing: encrypt and decrypt in calls of C blocks over a 256-block buffer, key setup of a key pair (64 keys in
 * turn).  Cycles (counter java-nanotime, ns): null (an empty call through an interface), ekey, dkey, init (a new
 * instance: the Java API's closest thing to cipherInit) and encrypt/decrypt of n blocks in one call, in place;
 * an operation whose call lasts more than 4U gets fewer samples (at least L).  Exit 0, 2 usage, 3 unavailable.
 */
public final class Measure {
    private static final String PROG = "measure";
    private static final int NKEYS = 64, SPAN = 256;
    private static final long MAX_WORK = 1L << 24;
    static long sink;

    /** One sampled quantity: `work` units (blocks, key pairs or calls) per sample. */
    private abstract static class Quantity {
        final String op;
        final int keyBits, n;
        long first = 1, work = 1; // first: the least work of a sample (a whole call of C blocks)
        int samples;
        final List<Long> ns = new ArrayList<>();

        Quantity(String op, int keyBits, int n) {
            this.op = op;
            this.keyBits = keyBits;
            this.n = n;
        }

        abstract void run(long units);

        long sample() {
            long t0 = System.nanoTime();
            run(work);
            return System.nanoTime() - t0;
        }

        void calibrate(long targetNs) {
            work = first;
            while (work < MAX_WORK && Math.min(sample(), sample()) < targetNs)
                work *= 2;
        }
    }

    private static final class Keys {
        final int bits;
        final BlockCipher enc, dec, kenc, kdec;
        final byte[][] keys = new byte[NKEYS][];
        int next;

        Keys(Registry.Entry e, int bits, SplitMix rnd) {
            this.bits = bits;
            enc = e.create();
            dec = e.create();
            kenc = e.create();
            kdec = e.create();
            for (int i = 0; i < NKEYS; i++) {
                keys[i] = new byte[32];
                for (int tries = 0; ; tries++) {
                    rnd.fill(keys[i], 0, 32);
                    if (enc.setEncryptKey(keys[i], bits) == BlockCipher.OK)
                        break;
                    if (tries > 100)
                        Json.die(PROG, "key setup refuses every key", e.id + " " + bits);
                }
            }
            if (enc.setEncryptKey(keys[0], bits) != BlockCipher.OK || dec.setDecryptKey(keys[0], bits) != BlockCipher.OK)
                Json.die(PROG, "key setup failed", e.id);
        }

        byte[] nextKey() {
            return keys[next++ % NKEYS];
        }
    }

    private static Quantity crypt(String op, Keys k, byte[] buf, int bs, int perCall, int n, boolean timing) {
        final BlockCipher c = op.equals("encrypt") ? k.enc : k.dec;
        final boolean enc = op.equals("encrypt");
        Quantity q = new Quantity(op, k.bits, n) {
            int off;

            @Override
            void run(long units) {
                if (timing) { // units are blocks, in calls of perCall blocks moving along the buffer
                    for (long b = 0; b < units; b += perCall) {
                        if (enc)
                            c.encrypt(buf, off * bs, buf, off * bs, perCall);
                        else
                            c.decrypt(buf, off * bs, buf, off * bs, perCall);
                        off = (off + perCall) % SPAN;
                    }
                } else { // units are calls of n blocks, in place
                    for (long i = 0; i < units; i++) {
                        if (enc)
                            c.encrypt(buf, 0, buf, 0, n);
                        else
                            c.decrypt(buf, 0, buf, 0, n);
                    }
                }
            }
        };
        q.first = timing ? perCall : 1;
        return q;
    }

    private static Quantity keySetup(String op, Keys k, Registry.Entry e) {
        return new Quantity(op, k.bits, 1) {
            @Override
            void run(long units) {
                int acc = 0;
                for (long i = 0; i < units; i++) {
                    byte[] key = k.nextKey();
                    switch (op) {
                        case "key_setup":
                            acc |= k.kenc.setEncryptKey(key, k.bits) | k.kdec.setDecryptKey(key, k.bits);
                            break;
                        case "ekey": acc |= k.kenc.setEncryptKey(key, k.bits); break;
                        case "dkey": acc |= k.kdec.setDecryptKey(key, k.bits); break;
                        default: sink += e.create().blockBytes(); // init: a new instance
                    }
                }
                sink += acc;
            }
        };
    }

    private static final Runnable NOTHING = () -> { };
    private static volatile Runnable nullFn = NOTHING;

    private static Quantity nullCall(int bits) {
        return new Quantity("null", bits, 1) {
            @Override
            void run(long units) {
                for (long i = 0; i < units; i++)
                    nullFn.run();
            }
        };
    }

    private static int[] ints(String csv) {
        String[] f = csv.split(",");
        int[] out = new int[f.length];
        for (int i = 0; i < f.length; i++) {
            if (!f[i].trim().matches("[0-9]+"))
                Json.die(PROG, "expected a comma list of numbers", csv);
            out[i] = Integer.parseInt(f[i].trim());
        }
        return out;
    }

    private static String longs(List<Long> xs) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < xs.size(); i++)
            b.append(i == 0 ? "" : ",").append(xs.get(i));
        return b.append(']').toString();
    }

    public static void main(String[] args) {
        String impl = null, keyList = null, sizeList = "1,1024", cycleKeys = null;
        int perCall = 1, samples = 10, warmup = 2, sampleUs = 100, longSamples = 8, jitMs = 300;
        for (int i = 0; i < args.length; i += 2) {
            if (i + 1 >= args.length)
                Json.die(PROG, "option needs a value", args[i]);
            String v = args[i + 1];
            switch (args[i]) {
                case "--impl": impl = v; break;
                case "--key-bits": keyList = v; break;
                case "--sizes": sizeList = v; break;
                case "--cycle-key-bits": cycleKeys = v; break;
                case "--blocks-per-call": perCall = ints(v)[0]; break;
                case "--samples": samples = ints(v)[0]; break;
                case "--warmup": warmup = ints(v)[0]; break;
                case "--sample-us": sampleUs = ints(v)[0]; break;
                case "--long-samples": longSamples = ints(v)[0]; break;
                case "--jit-warmup-ms": jitMs = ints(v)[0]; break;
                default: Json.die(PROG, "unknown option", args[i]);
            }
        }
        if (impl == null)
            Json.die(PROG, "missing --impl CIPHER/STRATEGY", null);
        if (samples < 1 || sampleUs < 1 || perCall < 1 || perCall > SPAN)
            Json.die(PROG, "need --samples, --sample-us > 0 and 0 < --blocks-per-call <= 256", null);
        Registry.Entry e = Registry.find(impl);
        if (e == null)
            Json.die(PROG, "implementation not linked into this program", impl);
        BlockCipher probe = e.create();
        if (!probe.available()) {
            System.out.println("{\"type\":\"unavailable\"," + Json.implFields(e, probe) + "}");
            System.out.flush();
            System.exit(3);
        }
        new Measure(e, probe, keyList == null ? probe.keyBits() : ints(keyList), ints(sizeList),
                cycleKeys == null ? new int[] {probe.keyBits()[0]} : ints(cycleKeys), perCall)
                .run(samples, warmup, sampleUs * 1000L, longSamples, jitMs);
    }

    private final Registry.Entry entry;
    private final BlockCipher probe;
    private final int[] keyBits;
    private final int perCall;
    private final List<Quantity> timing = new ArrayList<>(), cycles = new ArrayList<>();

    private Measure(Registry.Entry e, BlockCipher probe, int[] keyBits, int[] sizes, int[] cycleKeys, int perCall) {
        this.entry = e;
        this.probe = probe;
        this.keyBits = keyBits;
        this.perCall = perCall;
        int bs = probe.blockBytes();
        SplitMix rnd = new SplitMix(1999);
        byte[] span = new byte[SPAN * bs];
        rnd.fill(span, 0, span.length);
        for (int kb : keyBits) {
            if (!Registry.supportsKeyBits(probe, kb))
                Json.die(PROG, "key size not supported by this implementation", e.id + " " + kb);
            Keys k = new Keys(e, kb, rnd);
            timing.add(crypt("encrypt", k, span, bs, perCall, perCall, true));
            timing.add(crypt("decrypt", k, span, bs, perCall, perCall, true));
            timing.add(keySetup("key_setup", k, e));
        }
        int max = 1;
        for (int n : sizes)
            max = Math.max(max, n);
        byte[] big = new byte[max * bs];
        rnd.fill(big, 0, big.length);
        for (int kb : cycleKeys) {
            if (!Registry.supportsKeyBits(probe, kb))
                continue;
            Keys k = new Keys(e, kb, rnd);
            cycles.add(nullCall(kb));
            cycles.add(keySetup("ekey", k, e));
            cycles.add(keySetup("dkey", k, e));
            cycles.add(keySetup("init", k, e));
            for (String op : new String[] {"encrypt", "decrypt"})
                for (int n : sizes)
                    cycles.add(crypt(op, k, big, bs, n, n, false));
        }
    }

    private void run(int samples, int warmup, long targetNs, int longSamples, int jitMs) {
        List<Quantity> all = new ArrayList<>(timing);
        all.addAll(cycles);
        long until = System.nanoTime() + jitMs * 1_000_000L;
        while (System.nanoTime() < until) // the JIT's turn: every operation hot, none timed
            for (Quantity q : all)
                q.run(q.n == 1 ? 64 * q.first : 4096 / q.n + 1);
        for (Quantity q : all) {
            if (!q.op.equals("null")) // the empty call stays one call: the overhead of one sample (cycles.c)
                q.calibrate(targetNs);
            q.samples = samples;
        }
        for (Quantity q : cycles) { // a call much longer than a sample: fewer samples, at least longSamples
            long call = Math.max(1, q.sample() / q.work);
            if (call > 4 * targetNs)
                q.samples = (int) Math.max(longSamples, Math.min(samples, 16L * targetNs * samples / call));
        }
        for (int r = 0; r < warmup + samples; r++)
            for (Quantity q : all)
                if (r < warmup + q.samples) {
                    long t = q.sample();
                    if (r >= warmup)
                        q.ns.add(t);
                }
        print(samples, warmup);
    }

    private void print(int samples, int warmup) {
        String fields = Json.implFields(entry, probe);
        for (int i = 0; i < keyBits.length; i++) {
            StringBuilder b = new StringBuilder("{\"type\":\"timing\",").append(fields).append(",\"key_size\":")
                    .append(keyBits[i]).append(",\"samples\":").append(samples).append(",\"warmup\":").append(warmup)
                    .append(",\"blocks_per_call\":").append(perCall)
                    .append(",\"timer\":\"java-nanotime\",\"unit\":\"ns\"");
            for (Quantity q : timing.subList(3 * i, 3 * i + 3))
                b.append(",\"").append(q.op).append("\":{\"per_sample\":").append(q.work).append(",\"ns\":")
                        .append(longs(q.ns)).append('}');
            System.out.println(b.append('}'));
        }
        System.out.println("{\"type\":\"counter\",\"counter\":\"java-nanotime\",\"unit\":\"ns\",\"ticks_per_second\":1e9}");
        for (Quantity q : cycles)
            System.out.println("{\"type\":\"cycles\",\"impl\":" + Json.str(entry.id) + ",\"key_size\":" + q.keyBits
                    + ",\"op\":\"" + q.op + "\",\"n\":" + q.n + ",\"calls\":" + q.work
                    + ",\"counter\":\"java-nanotime\",\"unit\":\"ns\",\"deltas\":" + longs(q.ns) + "}");
        System.out.println("{\"type\":\"sink\",\"value\":" + sink + "}");
        System.out.flush();
    }
}

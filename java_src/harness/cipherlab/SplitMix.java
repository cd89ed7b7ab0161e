package cipherlab;

/** The harness's deterministic generator: cl_rand_next / cl_rand_fill of c_src/harness/util.c, bit for bit. */
public final class SplitMix {
    private long state;

    public SplitMix(long seed) {
        state = seed;
    }

    public long next() {
        long z = (state += 0x9e3779b97f4a7c15L);
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /** Fills n bytes at off: each 8 bytes one draw, least significant byte first. */
    public void fill(byte[] buf, int off, int n) {
        for (int i = 0; i < n; i += 8) {
            long r = next();
            for (int j = 0; j < 8 && i + j < n; j++)
                buf[off + i + j] = (byte) (r >>> (8 * j));
        }
    }
}

package cipherlab;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Byte order and rotations in one place (the Java side of c_src/include/cl_bytes.h).
 *
 * <p>The 32-bit loads and stores go through byte-array view VarHandles: C2 compiles each into one 4-byte move
 * (with a byte swap for big-endian) and one bounds check, where four byte loads, masks and shifts cost a dozen
 * instructions and four checks.  The interpreter and C1 run them more slowly than the shifts; the JIT is what is
 * measured against C.
 */
public final class Bytes {
    private static final VarHandle LE = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle BE = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);

    private Bytes() {
    }

    public static int load32be(byte[] b, int off) {
        return (int) BE.get(b, off);
    }

    public static int load32le(byte[] b, int off) {
        return (int) LE.get(b, off);
    }

    public static void store32be(byte[] b, int off, int v) {
        BE.set(b, off, v);
    }

    public static void store32le(byte[] b, int off, int v) {
        LE.set(b, off, v);
    }

    public static int load16be(byte[] b, int off) {
        return ((b[off] & 0xff) << 8) | (b[off + 1] & 0xff);
    }

    public static void store16be(byte[] b, int off, int v) {
        b[off] = (byte) (v >>> 8);
        b[off + 1] = (byte) v;
    }
}

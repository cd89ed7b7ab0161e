package cipherlab;

/** JSON-lines output of the harness programs (util.c's cl_json_* helpers). */
public final class Json {
    private Json() {
    }

    public static String str(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\')
                b.append('\\').append(c);
            else if (c < 0x20)
                b.append(String.format("\\u%04x", (int) c));
            else
                b.append(c);
        }
        return b.append('"').toString();
    }

    public static String hex(byte[] b, int off, int n) {
        StringBuilder s = new StringBuilder("\"");
        for (int i = 0; i < n; i++)
            s.append(String.format("%02x", b[off + i] & 0xff));
        return s.append('"').toString();
    }

    /** The fields of an implementation's {"type":"impl"} description (no braces), as cl_json_impl_fields. */
    public static String implFields(Registry.Entry e, BlockCipher c) {
        StringBuilder b = new StringBuilder();
        b.append("\"impl\":").append(str(e.id)).append(",\"cipher\":").append(str(e.cipher));
        b.append(",\"strategy\":").append(str(e.name)).append(",\"block_bytes\":").append(c.blockBytes());
        b.append(",\"key_bits\":[");
        int[] k = c.keyBits();
        for (int i = 0; i < k.length; i++)
            b.append(i == 0 ? "" : ",").append(k[i]);
        b.append("],\"ks_bytes\":").append(c.scheduleBytes()).append(",\"table_bytes\":").append(c.tableBytes());
        b.append(",\"available\":").append(c.available());
        return b.toString();
    }

    /** {"type":"error",...} and exit 2, as cl_die. */
    public static void die(String prog, String msg, String detail) {
        System.out.println("{\"type\":\"error\",\"program\":" + str(prog) + ",\"message\":" + str(msg)
                + (detail != null ? ",\"detail\":" + str(detail) : "") + "}");
        System.out.flush();
        System.exit(2);
    }
}

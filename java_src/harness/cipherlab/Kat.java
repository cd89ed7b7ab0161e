package cipherlab;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Arrays;

/**
 * Known-answer check of one implementation against a .kat file: c_src/harness/kat.c in Java, record for
 * record and byte for byte, so lab/kat.py's verdict judges both alike.
 *
 * <pre>
 *   java cipherlab.Kat --impl CIPHER[/NAME] --file VECTORS.kat [--max-report N] [--long-every N]
 *   java cipherlab.Kat --list
 * </pre>
 *
 * Format: shared/vectors/README.md.  After the vectors: one 37-block call against 37 single-block calls
 * (unaligned, in place and out of place), then the SUPERCOP-style checksum chain per key size, seeded and
 * folded exactly as kat.c does it, so a Java build prints the checksum stored in cipher.yaml.
 * Output: JSON lines only.  Exit status: 0 all passed, 1 a mismatch, 2 usage/input error, 3 unavailable.
 */
public final class Kat {
    private static final String PROG = "kat";
    private static final int MAX_FIELD = 64;
    private static final long LONG_ITER = 100; // records iterated more often are "long" (--long-every, as kat.c)

    private static final class Rec {
        int line;
        byte[] key = new byte[0], pt = new byte[0], ct = new byte[0], iv = new byte[0];
        long iter = 1;
        String mode = "";
        boolean hasKey, hasPt, hasCt;
    }

    private long records, passed, failed, skippedKeySize, reported, maxReport = 20, longEvery = 1, longSeen,
            sampledOut;
    private final Registry.Entry entry;
    private final BlockCipher enc, dec;
    private final int bs;

    private Kat(Registry.Entry entry) {
        this.entry = entry;
        this.enc = entry.create();
        this.dec = entry.create();
        this.bs = enc.blockBytes();
    }

    private static byte[] parseHex(String s) {
        int n = s.length();
        if (n % 2 != 0 || n / 2 > MAX_FIELD)
            return null;
        byte[] out = new byte[n / 2];
        for (int i = 0; i < n / 2; i++) {
            int hi = Character.digit(s.charAt(2 * i), 16), lo = Character.digit(s.charAt(2 * i + 1), 16);
            if (hi < 0 || lo < 0)
                return null;
            out[i] = (byte) (hi << 4 | lo);
        }
        return out;
    }

    private static long parseUlong(String s) { // strtoul: leading digits, else 0
        int i = 0;
        while (i < s.length() && Character.isDigit(s.charAt(i)))
            i++;
        return i == 0 ? 0 : Long.parseLong(s.substring(0, i));
    }

    private void reportFail(Rec r, String direction, String reason, byte[] expected, byte[] got) {
        if (reported++ >= maxReport)
            return;
        StringBuilder b = new StringBuilder("{\"type\":\"kat_fail\",\"impl\":").append(Json.str(entry.id));
        b.append(",\"line\":").append(r.line).append(",\"key_bits\":").append(r.key.length * 8);
        b.append(",\"mode\":").append(Json.str(r.mode.isEmpty() ? "ECB" : r.mode));
        b.append(",\"iter\":").append(r.iter).append(",\"direction\":\"").append(direction).append('"');
        b.append(",\"reason\":").append(Json.str(reason));
        if (expected != null)
            b.append(",\"expected\":").append(Json.hex(expected, 0, bs)).append(",\"got\":").append(Json.hex(got, 0, bs));
        System.out.println(b.append('}'));
    }

    private static boolean eq(byte[] a, byte[] b, int n) {
        return Arrays.equals(a, 0, n, b, 0, n);
    }

    private boolean checkRecord(Rec r) {
        int kbits = r.key.length * 8;
        byte[] a = new byte[bs], b = new byte[bs], cv = new byte[bs];
        if (enc.setEncryptKey(r.key, kbits) != BlockCipher.OK || dec.setDecryptKey(r.key, kbits) != BlockCipher.OK) {
            reportFail(r, "key", "key setup refused the key", null, null);
            return false;
        }
        if (r.mode.isEmpty() || r.mode.equals("ECB")) {
            boolean ok = true;
            System.arraycopy(r.pt, 0, a, 0, bs);
            for (long i = 0; i < r.iter; i++)
                enc.encrypt(a, 0, a, 0, 1);
            if (!eq(a, r.ct, bs)) {
                reportFail(r, "encrypt", "ciphertext mismatch", r.ct, a);
                ok = false;
            }
            System.arraycopy(r.ct, 0, a, 0, bs);
            for (long i = 0; i < r.iter; i++)
                dec.decrypt(a, 0, a, 0, 1);
            if (!eq(a, r.pt, bs)) {
                reportFail(r, "decrypt", "plaintext mismatch", r.pt, a);
                ok = false;
            }
            return ok;
        }
        if (r.mode.equals("CBC-MCT-ENC")) {
            byte[] p = new byte[bs], prev = new byte[bs];
            System.arraycopy(r.iv, 0, cv, 0, bs);
            System.arraycopy(r.pt, 0, p, 0, bs);
            for (long j = 0; j < r.iter; j++) {
                for (int i = 0; i < bs; i++)
                    b[i] = (byte) (p[i] ^ cv[i]);
                enc.encrypt(b, 0, a, 0, 1);
                System.arraycopy(j == 0 ? r.iv : prev, 0, p, 0, bs);
                System.arraycopy(a, 0, prev, 0, bs);
                System.arraycopy(a, 0, cv, 0, bs);
            }
            if (!eq(a, r.ct, bs)) {
                reportFail(r, "encrypt", "CBC Monte-Carlo ciphertext mismatch", r.ct, a);
                return false;
            }
            return true;
        }
        if (r.mode.equals("CBC-MCT-DEC")) {
            byte[] c = new byte[bs];
            System.arraycopy(r.iv, 0, cv, 0, bs);
            System.arraycopy(r.ct, 0, c, 0, bs);
            for (long j = 0; j < r.iter; j++) {
                dec.decrypt(c, 0, a, 0, 1);
                for (int i = 0; i < bs; i++)
                    a[i] ^= cv[i];
                System.arraycopy(c, 0, cv, 0, bs);
                System.arraycopy(a, 0, c, 0, bs);
            }
            if (!eq(a, r.pt, bs)) {
                reportFail(r, "decrypt", "CBC Monte-Carlo plaintext mismatch", r.pt, a);
                return false;
            }
            return true;
        }
        reportFail(r, "none", "unknown MODE", null, null);
        return false;
    }

    private void finishRecord(Rec r, String file) {
        if (!r.hasKey && !r.hasPt && !r.hasCt)
            return;
        records++;
        if (!r.hasKey || !r.hasPt || !r.hasCt)
            Json.die(PROG, "malformed vectors file", file + ":" + r.line + ": record lacks KEY, PT or CT");
        if (!Registry.supportsKeyBits(enc, r.key.length * 8)) {
            skippedKeySize++;
            return;
        }
        if (r.pt.length != bs || r.ct.length != bs || (r.mode.startsWith("CBC") && r.iv.length != bs)) {
            reportFail(r, "none", "block length in file differs from the cipher's", null, null);
            failed++;
            return;
        }
        if (r.iter > LONG_ITER && longEvery > 1 && longSeen++ % longEvery != 0) {
            sampledOut++; // a quick gate checks every Nth long record only
            return;
        }
        if (checkRecord(r)) // a record fails once, however many of its checks did (as kat.c)
            passed++;
        else
            failed++;
    }

    /** One 37-block call (unaligned; out of place, then in place) against 37 single-block calls. */
    private long checkMultiblock() {
        final int n = 37;
        byte[] src = new byte[n * 16 + 1], one = new byte[n * 16], buf = new byte[n * 16 + 3];
        long bad = 0;
        for (int k : enc.keyBits()) {
            byte[] key = new byte[k / 8];
            SplitMix seed = new SplitMix(0x6d756c7469L + k);
            seed.fill(key, 0, k / 8);
            seed.fill(src, 1, n * bs);
            if (enc.setEncryptKey(key, k) != BlockCipher.OK || dec.setDecryptKey(key, k) != BlockCipher.OK)
                continue;
            for (int dir = 0; dir < 2; dir++) {
                for (int i = 0; i < n; i++)
                    crypt(dir, src, 1 + i * bs, one, i * bs, 1);
                crypt(dir, src, 1, buf, 3, n);
                boolean outOk = Arrays.equals(buf, 3, 3 + n * bs, one, 0, n * bs);
                System.arraycopy(src, 1, buf, 1, n * bs);
                crypt(dir, buf, 1, buf, 1, n);
                boolean inOk = Arrays.equals(buf, 1, 1 + n * bs, one, 0, n * bs);
                if (!outOk || !inOk) {
                    bad++;
                    System.out.println("{\"type\":\"kat_fail\",\"impl\":" + Json.str(entry.id) + ",\"line\":0,\"key_bits\":"
                            + k + ",\"mode\":\"ECB\",\"iter\":1,\"direction\":\"" + (dir == 1 ? "decrypt" : "encrypt")
                            + "\",\"reason\":\"one " + n + "-block call differs from " + n + " single-block calls ("
                            + (outOk ? "in place" : "out of place") + ")\"}");
                }
            }
        }
        return bad;
    }

    private void crypt(int dir, byte[] in, int inOff, byte[] out, int outOff, int nblocks) {
        if (dir == 1)
            dec.decrypt(in, inOff, out, outOff, nblocks);
        else
            enc.encrypt(in, inOff, out, outOff, nblocks);
    }

    /** kat.c's print_checksums: 64 rounds of key setup, 4-block encryption in place, decryption, key folding. */
    private void printChecksums() {
        final int blocks = 4, rounds = 64;
        for (int k : enc.keyBits()) {
            byte[] key = new byte[32], state = new byte[blocks * 16], before = new byte[state.length],
                    back = new byte[state.length];
            SplitMix seed = new SplitMix(0x636970686572L + k);
            seed.fill(key, 0, key.length);
            seed.fill(state, 0, state.length);
            boolean roundtripOk = true;
            int refused = 0;
            for (int r = 0; r < rounds; r++) {
                while (enc.setEncryptKey(key, k) != BlockCipher.OK || dec.setDecryptKey(key, k) != BlockCipher.OK) {
                    key[refused++ % (k / 8)] ^= 0x5a; // a key the cipher refuses (weak): change it, deterministically
                    if (refused > 64)
                        Json.die(PROG, "key setup refuses every checksum key", entry.cipher);
                }
                System.arraycopy(state, 0, before, 0, blocks * bs);
                enc.encrypt(state, 0, state, 0, blocks);
                dec.decrypt(state, 0, back, 0, blocks);
                roundtripOk &= Arrays.equals(back, 0, blocks * bs, before, 0, blocks * bs);
                for (int j = 0; j < k / 8; j++)
                    key[j] ^= state[j % (blocks * bs)];
            }
            System.out.println("{\"type\":\"kat_checksum\",\"impl\":" + Json.str(entry.id) + ",\"key_bits\":" + k
                    + ",\"checksum\":" + Json.hex(state, 0, blocks * bs) + ",\"roundtrip_ok\":" + roundtripOk + "}");
        }
    }

    private int run(String file) throws IOException {
        BufferedReader in;
        try {
            in = Files.newBufferedReader(Paths.get(file), StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
            Json.die(PROG, "cannot open vectors file", file);
            return 2;
        }
        Rec r = new Rec();
        int lineno = 0;
        try (in) {
            for (String line; (line = in.readLine()) != null;) {
                lineno++;
                int n = line.length();
                while (n > 0 && (line.charAt(n - 1) == '\r' || line.charAt(n - 1) == ' '))
                    n--;
                line = line.substring(0, n);
                if (line.startsWith("#"))
                    continue;
                if (line.isEmpty()) {
                    finishRecord(r, file);
                    r = new Rec();
                    continue;
                }
                int eqAt = line.indexOf('=');
                if (eqAt < 0)
                    Json.die(PROG, "malformed vectors file", file + ":" + lineno + ": expected FIELD=value");
                String field = line.substring(0, eqAt), value = line.substring(eqAt + 1);
                if (!r.hasKey && !r.hasPt && !r.hasCt && r.line == 0)
                    r.line = lineno;
                byte[] v = null;
                boolean hex = true;
                switch (field) {
                    case "KEY": v = parseHex(value); if (v != null) r.key = v; r.hasKey = true; break;
                    case "PT": v = parseHex(value); if (v != null) r.pt = v; r.hasPt = true; break;
                    case "CT": v = parseHex(value); if (v != null) r.ct = v; r.hasCt = true; break;
                    case "IV": v = parseHex(value); if (v != null) r.iv = v; break;
                    case "ITER": r.iter = parseUlong(value); hex = false; break;
                    case "MODE": r.mode = value; hex = false; break;
                    default: hex = false; // unknown fields are ignored, as the format says
                }
                if (hex && v == null)
                    Json.die(PROG, "malformed vectors file", file + ":" + lineno + ": field " + field
                            + " is not hex of at most " + MAX_FIELD + " bytes");
            }
        }
        finishRecord(r, file);
        long multiBad = checkMultiblock();
        failed += multiBad;
        printChecksums();
        System.out.println("{\"type\":\"kat_summary\"," + Json.implFields(entry, enc) + ",\"file\":" + Json.str(file)
                + ",\"records\":" + records + ",\"passed\":" + passed + ",\"failed\":" + failed
                + ",\"skipped_key_size\":" + skippedKeySize + ",\"multiblock_failed\":" + multiBad
                + ",\"sampled_out\":" + sampledOut + "}");
        return failed != 0 ? 1 : (passed != 0 ? 0 : 1);
    }

    public static void main(String[] args) throws IOException {
        String impl = null, file = null;
        long maxReport = 20, longEvery = 1;
        boolean list = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--list")) {
                list = true;
                continue;
            }
            if (!a.equals("--impl") && !a.equals("--file") && !a.equals("--max-report") && !a.equals("--long-every"))
                Json.die(PROG, "unknown option", a);
            if (i + 1 >= args.length)
                Json.die(PROG, "option needs a value", a);
            String v = args[++i];
            if (a.equals("--impl"))
                impl = v;
            else if (a.equals("--file"))
                file = v;
            else if (!v.matches("[0-9]+"))
                Json.die(PROG, "expected a number", a);
            else if (a.equals("--long-every"))
                longEvery = Math.max(1, Long.parseLong(v));
            else
                maxReport = Long.parseLong(v);
        }
        if (list) {
            for (Registry.Entry e : Registry.entries().values())
                System.out.println("{\"type\":\"impl\"," + Json.implFields(e, e.create()) + "}");
            return;
        }
        if (impl == null)
            Json.die(PROG, "missing --impl CIPHER/STRATEGY", null);
        Registry.Entry e = Registry.find(impl);
        if (e == null)
            Json.die(PROG, "implementation not linked into this program", impl);
        Kat k = new Kat(e);
        if (!k.enc.available()) {
            System.out.println("{\"type\":\"unavailable\"," + Json.implFields(e, k.enc) + "}");
            System.out.flush();
            System.exit(3);
        }
        if (file == null)
            Json.die(PROG, "missing --file VECTORS.kat", null);
        k.maxReport = maxReport;
        k.longEvery = longEvery;
        int rc = k.run(file);
        System.out.flush();
        System.exit(rc);
    }
}

package cipherlab;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The implementations linked into this build: the Java side of harness/registry.c.
 *
 * <p>The build (lab/java.py) writes {@code cipherlab/registry.txt} into the class
 * folder from the cipher.yaml {@code java:} sections and the peer files, one line
 * per implementation: {@code cipher/name <TAB> class [<TAB> argument]}.  A class
 * with an argument is a peer adapter and is constructed with it.
 */
public final class Registry {
    public static final class Entry {
        public final String id, cipher, name, className, argument;

        Entry(String id, String className, String argument) {
            this.id = id;
            this.cipher = id.substring(0, id.indexOf('/'));
            this.name = id.substring(id.indexOf('/') + 1);
            this.className = className;
            this.argument = argument;
        }

        /** A fresh instance (one key schedule). */
        public BlockCipher create() {
            try {
                Class<?> c = Class.forName(className);
                Object o = argument == null ? c.getDeclaredConstructor().newInstance()
                        : c.getDeclaredConstructor(String.class).newInstance(argument);
                return (BlockCipher) o;
            } catch (ReflectiveOperationException e) {
                Throwable t = e.getCause() != null ? e.getCause() : e;
                throw new IllegalStateException("cannot create " + className + ": " + t, t);
            }
        }
    }

    private static Map<String, Entry> entries;

    private Registry() {
    }

    public static synchronized Map<String, Entry> entries() {
        if (entries != null)
            return entries;
        Map<String, Entry> m = new LinkedHashMap<>();
        InputStream in = Registry.class.getResourceAsStream("registry.txt");
        if (in == null)
            throw new IllegalStateException("cipherlab/registry.txt is not on the class path (build with lab/java.py)");
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null;) {
                if (line.isBlank() || line.startsWith("#"))
                    continue;
                String[] f = line.split("\t");
                m.put(f[0], new Entry(f[0], f[1], f.length > 2 ? f[2] : null));
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        entries = m;
        return m;
    }

    /** "cipher/name", or "cipher" for the first implementation of it; null when not linked. */
    public static Entry find(String name) {
        Map<String, Entry> m = entries();
        if (m.containsKey(name))
            return m.get(name);
        for (Entry e : m.values())
            if (e.cipher.equals(name))
                return e;
        return null;
    }

    public static boolean supportsKeyBits(BlockCipher c, int bits) {
        for (int k : c.keyBits())
            if (k == bits)
                return true;
        return false;
    }
}

/*
 * mcrypt.c -- libmcrypt 2.5.8 (Debian libmcrypt-dev) block ciphers behind the
 * cipherlab API (see c_src/include/cipherlab.h and c_src/peers/README.md).
 *
 * libmcrypt keeps its key schedule inside an opaque, heap-allocated MCRYPT
 * handle.  The caller's buffer holds a small header with that handle: it is
 * opened (mcrypt_module_open(algorithm, "ecb")) by the first set_*_key into
 * the buffer and reused by every later one, which re-keys it with
 * mcrypt_generic_deinit + mcrypt_generic_init (libmcrypt frees and
 * re-allocates its internal key buffers there: no growth).  mc_release (the
 * descriptor's release hook) de-initialises and closes the handle before the
 * caller frees the buffer.
 *
 * encrypt/decrypt: libmcrypt works in place only, so out-of-place calls copy
 * in to out first (memmove), then one mcrypt_generic / mdecrypt_generic call
 * over all n blocks (its ECB loops over the blocks).
 *
 * Byte order: libmcrypt loads the words of three ciphers in another order
 * than their specifications (and our vectors) do, and the adapter converts
 * key and blocks (so those calls have one more pass over the data):
 *   cast256    each 32-bit word of key, plaintext and ciphertext byte-swapped
 *              (libmcrypt loads CAST-256's big-endian words little-endian),
 *   loki97     the same, and its key schedule is "256 bit version only": it
 *              always reads a 256-bit key (libmcrypt zero-pads shorter ones),
 *              which is not LOKI97's schedule for 128- and 192-bit keys, so
 *              only 256-bit keys are offered,
 *   saferplus  the order of the 32-bit words of key and block reversed (bytes
 *              inside each word kept).
 * rijndael-128, serpent, twofish, des and tripledes need no conversion.
 */
#include <string.h>

#include <mcrypt.h>

#include "cipherlab.h"

typedef struct {
    uint64_t magic;
    MCRYPT td;
    int keyed;          /* mcrypt_generic_init succeeded and was not deinit'ed */
    unsigned block;     /* block bytes */
    int conv;           /* byte-order conversion, see CONV_* */
} mc_ks;

enum { CONV_NONE, CONV_SWAP32, CONV_WORDS_REVERSED };

/* dst = src converted; whole 16-byte blocks (or the key) of len bytes; dst may equal src. */
static void convert(int conv, uint8_t *dst, const uint8_t *src, size_t len, size_t unit)
{
    uint8_t t[32];
    for (size_t off = 0; off < len; off += unit) {
        memcpy(t, src + off, unit);
        for (size_t w = 0; w < unit / 4; w++)
            for (size_t b = 0; b < 4; b++) {
                if (conv == CONV_SWAP32)
                    dst[off + 4 * w + b] = t[4 * w + 3 - b];
                else
                    dst[off + 4 * w + b] = t[unit - 4 - 4 * w + b];
            }
    }
}

#define MC_MAGIC 0x6d63727970743235ULL /* "mcrypt25" */
#define MC_KS_BYTES 64

static const unsigned short kb_128_256[] = {128, 192, 256, 0};
static const unsigned short kb_256[] = {256, 0};
static const unsigned short kb_des[] = {64, 0};
static const unsigned short kb_3des[] = {192, 0};

static int key_ok(const unsigned short *list, unsigned bits)
{
    for (; *list; list++)
        if (*list == bits)
            return 1;
    return 0;
}

static int mc_has(const char *algo)
{
    MCRYPT td = mcrypt_module_open((char *)algo, NULL, (char *)MCRYPT_ECB, NULL);
    if (td == MCRYPT_FAILED)
        return 0;
    mcrypt_module_close(td);
    return 1;
}

static int mc_set_key(void *ks, const char *algo, const unsigned short *kb, int conv, const uint8_t *key,
                      unsigned key_bits)
{
    mc_ks *k = ks;
    if (!key_ok(kb, key_bits))
        return CL_BAD_KEY_LENGTH;
    if (k->magic != MC_MAGIC) {
        k->td = mcrypt_module_open((char *)algo, NULL, (char *)MCRYPT_ECB, NULL);
        if (k->td == MCRYPT_FAILED)
            return CL_UNAVAILABLE;
        k->keyed = 0;
        k->block = (unsigned)mcrypt_enc_get_block_size(k->td);
        k->conv = conv;
        k->magic = MC_MAGIC;
    }
    if (k->keyed) {
        mcrypt_generic_deinit(k->td);
        k->keyed = 0;
    }
    uint8_t copy[CL_MAX_KEY_BYTES]; /* libmcrypt's prototype takes a non-const key */
    if (conv == CONV_NONE)
        memcpy(copy, key, key_bits / 8);
    else
        convert(conv, copy, key, key_bits / 8, key_bits / 8);
    if (mcrypt_generic_init(k->td, copy, (int)(key_bits / 8), NULL) < 0)
        return CL_BAD_KEY;
    k->keyed = 1;
    return CL_OK;
}

static void mc_release(void *ks)
{
    mc_ks *k = ks;
    if (k->magic == MC_MAGIC) {
        if (k->keyed)
            mcrypt_generic_deinit(k->td);
        mcrypt_module_close(k->td);
    }
    k->magic = 0;
    k->keyed = 0;
}

static void mc_encrypt(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    const mc_ks *k = ks;
    size_t len = n * k->block;
    if (k->conv != CONV_NONE)
        convert(k->conv, out, in, len, k->block);
    else if (in != out)
        memmove(out, in, len);
    mcrypt_generic(k->td, out, (int)len);
    if (k->conv != CONV_NONE)
        convert(k->conv, out, out, len, k->block);
}

static void mc_decrypt(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    const mc_ks *k = ks;
    size_t len = n * k->block;
    if (k->conv != CONV_NONE)
        convert(k->conv, out, in, len, k->block);
    else if (in != out)
        memmove(out, in, len);
    mdecrypt_generic(k->td, out, (int)len);
    if (k->conv != CONV_NONE)
        convert(k->conv, out, out, len, k->block);
}

#define MCRYPT_IMPL(cn, sym, algo, bs, kb, conv)                                                         \
    static int sym##_avail(void) { return mc_has(algo); }                                          \
    static int sym##_set(void *ks, const uint8_t *key, unsigned key_bits)                           \
    {                                                                                              \
        return mc_set_key(ks, algo, kb, conv, key, key_bits);                                      \
    }                                                                                              \
    const cl_impl cl_impl_##cn##_mcrypt = {                                                        \
        .cipher = #cn, .strategy = "mcrypt", .block_bytes = bs, .key_bits = kb,                    \
        .ks_bytes = MC_KS_BYTES, .table_bytes = 0, .available = sym##_avail,                       \
        .set_encrypt_key = sym##_set, .set_decrypt_key = sym##_set,                                \
        .encrypt = mc_encrypt, .decrypt = mc_decrypt, .init_hook = NULL, .release = mc_release,    \
    };

MCRYPT_IMPL(rijndael, aes, "rijndael-128", 16, kb_128_256, CONV_NONE)
MCRYPT_IMPL(serpent, serpent, "serpent", 16, kb_128_256, CONV_NONE)
MCRYPT_IMPL(twofish, twofish, "twofish", 16, kb_128_256, CONV_NONE)
MCRYPT_IMPL(cast256, cast256, "cast-256", 16, kb_128_256, CONV_SWAP32)
MCRYPT_IMPL(loki97, loki97, "loki97", 16, kb_256, CONV_SWAP32)
MCRYPT_IMPL(saferplus, saferplus, "saferplus", 16, kb_128_256, CONV_WORDS_REVERSED)
MCRYPT_IMPL(des, des, "des", 8, kb_des, CONV_NONE)
MCRYPT_IMPL(3des, des3, "tripledes", 8, kb_3des, CONV_NONE)

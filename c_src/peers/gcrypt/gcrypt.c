/*
 * gcrypt.c -- libgcrypt (Debian libgcrypt20-dev) block ciphers behind the
 * cipherlab API (see c_src/include/cipherlab.h and c_src/peers/README.md).
 *
 * libgcrypt keeps its key schedule inside an opaque, heap-allocated cipher
 * handle.  The caller's buffer holds a small header with that handle: it is
 * opened (gcry_cipher_open, ECB) by the first set_*_key into the buffer and
 * reused by every later one, which only calls gcry_cipher_setkey.  AES and
 * Serpent have one algorithm id per key size, so a key of another size
 * closes the handle and opens one for that size (still one handle per buffer,
 * nothing accumulates).  gc_release (the descriptor's release hook) closes
 * the handle before the caller frees the buffer.
 *
 * encrypt/decrypt: one gcry_cipher_encrypt / gcry_cipher_decrypt call over
 * all n blocks (in place when in == out).  libgcrypt 1.10 has no bulk ECB
 * code: it loops over the blocks with the cipher's one-block function.
 *
 * DES and 3DES: libgcrypt refuses weak keys by default
 * (GPG_ERR_WEAK_KEY); the handle is put in GCRYCTL_SET_ALLOW_WEAK_KEY mode so
 * that every key is scheduled, like our own implementations and the other
 * libraries do.
 *
 * The library is initialised once per process (version check, no secure
 * memory, initialization finished) unless the program already did it.
 *
 * Byte order: every cipher here uses the same byte strings as our vectors
 * (shared/vectors/README.md), no conversion.
 */
#include <string.h>

#include <gcrypt.h>

#include "cipherlab.h"

typedef struct {
    uint64_t magic;
    gcry_cipher_hd_t hd;
    int algo;
    unsigned block_bytes;
} gc_ks;

#define GC_MAGIC 0x6763727970743130ULL /* "gcrypt10" */
#define GC_KS_BYTES 64

static const unsigned short kb_128_256[] = {128, 192, 256, 0};
static const unsigned short kb_twofish[] = {128, 256, 0};
static const unsigned short kb_des[] = {64, 0};
static const unsigned short kb_3des[] = {192, 0};
static const unsigned short kb_idea[] = {128, 0};

static int gc_init(void)
{
    static int done;
    if (!done) {
        if (!gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P)) {
            if (!gcry_check_version(NULL))
                return 0;
            gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
            gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
        }
        done = 1;
    }
    return 1;
}

static int gc_has(int algo) { return gc_init() && gcry_cipher_test_algo(algo) == 0; }

static int gc_set_key(void *ks, int algo, const uint8_t *key, unsigned key_bits)
{
    gc_ks *k = ks;
    if (!gc_init())
        return CL_UNAVAILABLE;
    if (k->magic != GC_MAGIC || k->algo != algo) {
        if (k->magic == GC_MAGIC)
            gcry_cipher_close(k->hd);
        k->magic = 0;
        if (gcry_cipher_open(&k->hd, algo, GCRY_CIPHER_MODE_ECB, 0) != 0)
            return CL_UNAVAILABLE;
        if (algo == GCRY_CIPHER_DES || algo == GCRY_CIPHER_3DES)
            gcry_cipher_ctl(k->hd, GCRYCTL_SET_ALLOW_WEAK_KEY, NULL, 1);
        k->algo = algo;
        k->block_bytes = (unsigned)gcry_cipher_get_algo_blklen(algo);
        k->magic = GC_MAGIC;
    }
    gcry_error_t err = gcry_cipher_setkey(k->hd, key, key_bits / 8);
    if (err && gcry_err_code(err) != GPG_ERR_WEAK_KEY)
        return gcry_err_code(err) == GPG_ERR_INV_KEYLEN ? CL_BAD_KEY_LENGTH : CL_BAD_KEY;
    return CL_OK;
}

static void gc_release(void *ks)
{
    gc_ks *k = ks;
    if (k->magic == GC_MAGIC)
        gcry_cipher_close(k->hd);
    k->magic = 0;
}

static void gc_encrypt(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    const gc_ks *k = ks;
    size_t len = n * k->block_bytes;
    if (in == out)
        gcry_cipher_encrypt(k->hd, out, len, NULL, 0);
    else
        gcry_cipher_encrypt(k->hd, out, len, in, len);
}

static void gc_decrypt(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    const gc_ks *k = ks;
    size_t len = n * k->block_bytes;
    if (in == out)
        gcry_cipher_decrypt(k->hd, out, len, NULL, 0);
    else
        gcry_cipher_decrypt(k->hd, out, len, in, len);
}

/* ---- per cipher: key size -> algorithm id ---- */

static int aes_algo(unsigned bits)
{
    return bits == 128 ? GCRY_CIPHER_AES : bits == 192 ? GCRY_CIPHER_AES192 : bits == 256 ? GCRY_CIPHER_AES256 : 0;
}
static int serpent_algo(unsigned bits)
{
    return bits == 128   ? GCRY_CIPHER_SERPENT128
           : bits == 192 ? GCRY_CIPHER_SERPENT192
           : bits == 256 ? GCRY_CIPHER_SERPENT256
                         : 0;
}
static int twofish_algo(unsigned bits)
{
    return bits == 128 ? GCRY_CIPHER_TWOFISH128 : bits == 256 ? GCRY_CIPHER_TWOFISH : 0;
}
static int des_algo(unsigned bits) { return bits == 64 ? GCRY_CIPHER_DES : 0; }
static int des3_algo(unsigned bits) { return bits == 192 ? GCRY_CIPHER_3DES : 0; }
static int idea_algo(unsigned bits) { return bits == 128 ? GCRY_CIPHER_IDEA : 0; }

#define GCRYPT_IMPL(cn, sym, bs, kb, algo_of)                                                        \
    static int sym##_avail(void) { return gc_has(algo_of(kb[0])); }                                \
    static int sym##_set(void *ks, const uint8_t *key, unsigned key_bits)                           \
    {                                                                                              \
        int algo = algo_of(key_bits);                                                              \
        return algo ? gc_set_key(ks, algo, key, key_bits) : CL_BAD_KEY_LENGTH;                     \
    }                                                                                              \
    const cl_impl cl_impl_##cn##_gcrypt = {                                                        \
        .cipher = #cn, .strategy = "gcrypt", .block_bytes = bs, .key_bits = kb,                    \
        .ks_bytes = GC_KS_BYTES, .table_bytes = 0, .available = sym##_avail,                       \
        .set_encrypt_key = sym##_set, .set_decrypt_key = sym##_set,                                \
        .encrypt = gc_encrypt, .decrypt = gc_decrypt, .init_hook = NULL, .release = gc_release,    \
    };

GCRYPT_IMPL(rijndael, aes, 16, kb_128_256, aes_algo)
GCRYPT_IMPL(serpent, serpent, 16, kb_128_256, serpent_algo)
GCRYPT_IMPL(twofish, twofish, 16, kb_twofish, twofish_algo)
GCRYPT_IMPL(des, des, 8, kb_des, des_algo)
GCRYPT_IMPL(3des, des3, 8, kb_3des, des3_algo)
GCRYPT_IMPL(idea, idea, 8, kb_idea, idea_algo)

/*
 * openssl.c -- OpenSSL 3 (Debian libssl-dev) block ciphers behind the
 * cipherlab API (see c_src/include/cipherlab.h and c_src/peers/README.md).
 *
 * OpenSSL keeps its key schedule inside an opaque, heap-allocated
 * EVP_CIPHER_CTX.  The caller's buffer holds a small header with that
 * context: it is created by the first set_*_key into the buffer and reused by
 * every later one.  Re-keying with the same cipher and direction passes a
 * NULL cipher to EVP_CipherInit_ex2 (only the key changes, OpenSSL keeps its
 * provider context); another key size (AES-128/192/256 are different
 * ciphers) re-initialises the same context.  ossl_release (the descriptor's
 * release hook) frees the context before the caller frees the buffer.
 * Padding is off.
 *
 * encrypt/decrypt: one EVP_CipherUpdate call over all n blocks (OpenSSL
 * allows out == in exactly); lengths beyond 1 GiB are split because the API
 * takes an int.
 *
 * Ciphers: AES-{128,192,256}-ECB and DES-EDE3-ECB from the default provider;
 * DES-ECB only from the legacy provider, which this adapter loads (with the
 * default provider) into a library context of its own, so the rest of the
 * process keeps OpenSSL's default configuration.  IDEA: Debian builds OpenSSL
 * with OPENSSL_NO_IDEA (configuration.h) and no provider has it, so it is
 * absent.  EVP_CIPHER objects are fetched once per process and kept.
 *
 * AES dispatch: OpenSSL chooses its AES code from its capability vector,
 * which the environment variable OPENSSL_ia32cap can mask when the process
 * starts: AES-NI (bit 57 of the first word) when present, else the SSSE3
 * "vpaes" code (bit 41), else its x86-64 assembly with T-tables.  So the
 * variants need different processes, like Nettle's:
 *   rijndael/openssl          AES-NI; available when the CPU has it and
 *                             OPENSSL_ia32cap does not clear bit 57,
 *   rijndael/openssl_vpaes    OPENSSL_ia32cap=~0x200000000000000,
 *   rijndael/openssl_noaesni  OPENSSL_ia32cap=~0x200020000000000,
 * each available only when the environment says so (peer.yaml gives it).
 *
 * Byte order: every cipher here uses the same byte strings as our vectors
 * (shared/vectors/README.md), no conversion.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/provider.h>

#include "cipherlab.h"

typedef struct {
    uint64_t magic;
    EVP_CIPHER_CTX *ctx;
    const EVP_CIPHER *cipher; /* what ctx was initialised with */
    int enc;                  /* and for which direction */
} ossl_ks;

#define OSSL_MAGIC 0x6f70656e73736c33ULL /* "openssl3" */
#define OSSL_KS_BYTES 64

static const unsigned short kb_128_256[] = {128, 192, 256, 0};
static const unsigned short kb_des[] = {64, 0};
static const unsigned short kb_3des[] = {192, 0};

/* ---- cipher objects, fetched once ---- */

static OSSL_LIB_CTX *legacy_ctx(void)
{
    static OSSL_LIB_CTX *lc;
    static int tried;
    if (!tried) {
        tried = 1;
        lc = OSSL_LIB_CTX_new();
        if (lc && (!OSSL_PROVIDER_load(lc, "legacy") || !OSSL_PROVIDER_load(lc, "default"))) {
            OSSL_LIB_CTX_free(lc);
            lc = NULL;
        }
    }
    return lc;
}

enum { C_AES128, C_AES192, C_AES256, C_DES, C_3DES, C_COUNT };

static const EVP_CIPHER *get_cipher(int which)
{
    static const char *const names[C_COUNT] = {"AES-128-ECB", "AES-192-ECB", "AES-256-ECB", "DES-ECB",
                                               "DES-EDE3-ECB"};
    static EVP_CIPHER *cache[C_COUNT];
    static int tried[C_COUNT];
    if (!tried[which]) {
        tried[which] = 1;
        OSSL_LIB_CTX *lc = NULL;
        if (which == C_DES && !(lc = legacy_ctx()))
            return NULL;
        cache[which] = EVP_CIPHER_fetch(lc, names[which], NULL);
    }
    return cache[which];
}

/* ---- common key setup and ECB ---- */

static int ossl_set_key(void *ks, int which, const uint8_t *key, int enc)
{
    ossl_ks *k = ks;
    const EVP_CIPHER *c = get_cipher(which);
    if (!c)
        return CL_UNAVAILABLE;
    if (k->magic != OSSL_MAGIC) {
        k->ctx = EVP_CIPHER_CTX_new();
        if (!k->ctx)
            return CL_UNAVAILABLE;
        k->cipher = NULL;
        k->magic = OSSL_MAGIC;
    }
    int same = k->cipher == c && k->enc == enc;
    if (EVP_CipherInit_ex2(k->ctx, same ? NULL : c, key, NULL, enc, NULL) != 1) {
        k->cipher = NULL;
        return CL_BAD_KEY;
    }
    k->cipher = c;
    k->enc = enc;
    EVP_CIPHER_CTX_set_padding(k->ctx, 0);
    return CL_OK;
}

static void ossl_release(void *ks)
{
    ossl_ks *k = ks;
    if (k->magic == OSSL_MAGIC)
        EVP_CIPHER_CTX_free(k->ctx);
    k->magic = 0;
    k->ctx = NULL;
}

static void ossl_update(const void *ks, const uint8_t *in, uint8_t *out, size_t len)
{
    const ossl_ks *k = ks;
    while (len) {
        int chunk = len > (size_t)1 << 30 ? 1 << 30 : (int)len, outl = 0;
        if (EVP_CipherUpdate(k->ctx, out, &outl, in, chunk) != 1 || outl != chunk)
            abort(); /* cannot happen with whole blocks and padding off */
        in += chunk, out += chunk, len -= (size_t)chunk;
    }
}

static void ossl_ecb16(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    ossl_update(ks, in, out, n * 16);
}

static void ossl_ecb8(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    ossl_update(ks, in, out, n * 8);
}

/* ---- AES ---- */

static int aes_which(unsigned bits)
{
    return bits == 128 ? C_AES128 : bits == 192 ? C_AES192 : bits == 256 ? C_AES256 : -1;
}
static int aes_set_enc(void *ks, const uint8_t *key, unsigned bits)
{
    int w = aes_which(bits);
    return w < 0 ? CL_BAD_KEY_LENGTH : ossl_set_key(ks, w, key, 1);
}
static int aes_set_dec(void *ks, const uint8_t *key, unsigned bits)
{
    int w = aes_which(bits);
    return w < 0 ? CL_BAD_KEY_LENGTH : ossl_set_key(ks, w, key, 0);
}

/* Bits OPENSSL_ia32cap clears from the first capability word ("~value"
 * form); an absolute value ("value") replaces the word instead. */
#define CAP_AESNI ((uint64_t)1 << 57)
#define CAP_SSSE3 ((uint64_t)1 << 41)

static int cap_has(uint64_t bit, int cpu_has)
{
    const char *env = getenv("OPENSSL_ia32cap");
    if (!env || !*env || *env == ':')
        return cpu_has;
    if (*env == '~')
        return cpu_has && !(strtoull(env + 1, NULL, 0) & bit);
    return cpu_has && (strtoull(env, NULL, 0) & bit) != 0;
}

static int cpu_aes(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_cpu_supports("aes");
#else
    return 0;
#endif
}

static int cpu_ssse3(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_cpu_supports("ssse3");
#else
    return 0;
#endif
}

static int aes_available(void) { return get_cipher(C_AES128) && cap_has(CAP_AESNI, cpu_aes()); }
static int vpaes_available(void)
{
    return get_cipher(C_AES128) && !cap_has(CAP_AESNI, cpu_aes()) && cap_has(CAP_SSSE3, cpu_ssse3());
}
static int noaesni_available(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return get_cipher(C_AES128) && !cap_has(CAP_AESNI, cpu_aes()) && !cap_has(CAP_SSSE3, cpu_ssse3());
#else
    return 0; /* the variants are x86 only */
#endif
}

const cl_impl cl_impl_rijndael_openssl = {
    .cipher = "rijndael", .strategy = "openssl", .block_bytes = 16, .key_bits = kb_128_256,
    .ks_bytes = OSSL_KS_BYTES, .table_bytes = 0, .available = aes_available,
    .set_encrypt_key = aes_set_enc, .set_decrypt_key = aes_set_dec,
    .encrypt = ossl_ecb16, .decrypt = ossl_ecb16, .init_hook = NULL, .release = ossl_release,
};

const cl_impl cl_impl_rijndael_openssl_vpaes = {
    .cipher = "rijndael", .strategy = "openssl_vpaes", .block_bytes = 16, .key_bits = kb_128_256,
    .ks_bytes = OSSL_KS_BYTES, .table_bytes = 0, .available = vpaes_available,
    .set_encrypt_key = aes_set_enc, .set_decrypt_key = aes_set_dec,
    .encrypt = ossl_ecb16, .decrypt = ossl_ecb16, .init_hook = NULL, .release = ossl_release,
};

const cl_impl cl_impl_rijndael_openssl_noaesni = {
    .cipher = "rijndael", .strategy = "openssl_noaesni", .block_bytes = 16, .key_bits = kb_128_256,
    .ks_bytes = OSSL_KS_BYTES, .table_bytes = 0, .available = noaesni_available,
    .set_encrypt_key = aes_set_enc, .set_decrypt_key = aes_set_dec,
    .encrypt = ossl_ecb16, .decrypt = ossl_ecb16, .init_hook = NULL, .release = ossl_release,
};

/* ---- DES (legacy provider), 3DES ---- */

static int des_avail(void) { return get_cipher(C_DES) != NULL; }
static int des_set_enc(void *ks, const uint8_t *key, unsigned bits)
{
    return bits != 64 ? CL_BAD_KEY_LENGTH : ossl_set_key(ks, C_DES, key, 1);
}
static int des_set_dec(void *ks, const uint8_t *key, unsigned bits)
{
    return bits != 64 ? CL_BAD_KEY_LENGTH : ossl_set_key(ks, C_DES, key, 0);
}

const cl_impl cl_impl_des_openssl = {
    .cipher = "des", .strategy = "openssl", .block_bytes = 8, .key_bits = kb_des,
    .ks_bytes = OSSL_KS_BYTES, .table_bytes = 0, .available = des_avail,
    .set_encrypt_key = des_set_enc, .set_decrypt_key = des_set_dec,
    .encrypt = ossl_ecb8, .decrypt = ossl_ecb8, .init_hook = NULL, .release = ossl_release,
};

static int des3_avail(void) { return get_cipher(C_3DES) != NULL; }
static int des3_set_enc(void *ks, const uint8_t *key, unsigned bits)
{
    return bits != 192 ? CL_BAD_KEY_LENGTH : ossl_set_key(ks, C_3DES, key, 1);
}
static int des3_set_dec(void *ks, const uint8_t *key, unsigned bits)
{
    return bits != 192 ? CL_BAD_KEY_LENGTH : ossl_set_key(ks, C_3DES, key, 0);
}

const cl_impl cl_impl_3des_openssl = {
    .cipher = "3des", .strategy = "openssl", .block_bytes = 8, .key_bits = kb_3des,
    .ks_bytes = OSSL_KS_BYTES, .table_bytes = 0, .available = des3_avail,
    .set_encrypt_key = des3_set_enc, .set_decrypt_key = des3_set_dec,
    .encrypt = ossl_ecb8, .decrypt = ossl_ecb8, .init_hook = NULL, .release = ossl_release,
};

/*
 * nettle.c -- Nettle (Debian nettle-dev) block ciphers behind the cipherlab
 * API (see c_src/include/cipherlab.h and c_src/peers/README.md).
 *
 * Nettle's contexts are plain C structs, so the key schedule is the context
 * itself, written into the caller's buffer by Nettle's own set_key functions
 * (no allocation anywhere).  AES has one context type per key size: the
 * buffer holds the key size and a union of the three.
 *
 * encrypt/decrypt: one <cipher>_encrypt(ctx, length, dst, src) call over all
 * n blocks (Nettle allows dst == src).
 *
 * Byte order: every cipher here uses the same byte strings as our vectors
 * (shared/vectors/README.md), no conversion.
 *
 * AES dispatch: Debian's Nettle is a "fat" build that chooses its AES code
 * once, when the library is loaded: AES-NI when the CPU has it, unless the
 * environment variable NETTLE_FAT_OVERRIDE lists the features to use instead
 * (e.g. "none": its x86-64 assembly with T-tables).  So the two AES variants
 * need different processes: rijndael/nettle is available only when the CPU
 * has AES-NI and NETTLE_FAT_OVERRIDE does not switch it off, and
 * rijndael/nettle_noaesni only when the program was started with
 * NETTLE_FAT_OVERRIDE set without "aesni" (peer.yaml gives it
 * NETTLE_FAT_OVERRIDE=none).  The other ciphers do not depend on it.
 */
#include <stdlib.h>
#include <string.h>

#include <nettle/aes.h>
#include <nettle/des.h>
#include <nettle/serpent.h>
#include <nettle/twofish.h>

#include "cipherlab.h"

static const unsigned short kb_128_256[] = {128, 192, 256, 0};
static const unsigned short kb_des[] = {64, 0};
static const unsigned short kb_3des[] = {192, 0};

/* ---- availability of the AES variants ---- */

static int override_keeps_aesni(void)
{
    const char *ov = getenv("NETTLE_FAT_OVERRIDE");
    return ov == NULL || strstr(ov, "aesni") != NULL;
}

static int nettle_aesni_available(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_cpu_supports("aes") && override_keeps_aesni();
#else
    return 0;
#endif
}

static int nettle_noaesni_available(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return !override_keeps_aesni();
#else
    return 1; /* no AES instructions to switch off */
#endif
}

/* ---- AES ---- */

typedef struct {
    unsigned key_bits;
    union {
        struct aes128_ctx a128;
        struct aes192_ctx a192;
        struct aes256_ctx a256;
    } u;
} aes_ks;

static int aes_set_enc(void *ks, const uint8_t *key, unsigned key_bits)
{
    aes_ks *k = ks;
    switch (key_bits) {
    case 128: aes128_set_encrypt_key(&k->u.a128, key); break;
    case 192: aes192_set_encrypt_key(&k->u.a192, key); break;
    case 256: aes256_set_encrypt_key(&k->u.a256, key); break;
    default: return CL_BAD_KEY_LENGTH;
    }
    k->key_bits = key_bits;
    return CL_OK;
}

static int aes_set_dec(void *ks, const uint8_t *key, unsigned key_bits)
{
    aes_ks *k = ks;
    switch (key_bits) {
    case 128: aes128_set_decrypt_key(&k->u.a128, key); break;
    case 192: aes192_set_decrypt_key(&k->u.a192, key); break;
    case 256: aes256_set_decrypt_key(&k->u.a256, key); break;
    default: return CL_BAD_KEY_LENGTH;
    }
    k->key_bits = key_bits;
    return CL_OK;
}

static void aes_enc(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    const aes_ks *k = ks;
    switch (k->key_bits) {
    case 128: aes128_encrypt(&k->u.a128, n * 16, out, in); break;
    case 192: aes192_encrypt(&k->u.a192, n * 16, out, in); break;
    default: aes256_encrypt(&k->u.a256, n * 16, out, in); break;
    }
}

static void aes_dec(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    const aes_ks *k = ks;
    switch (k->key_bits) {
    case 128: aes128_decrypt(&k->u.a128, n * 16, out, in); break;
    case 192: aes192_decrypt(&k->u.a192, n * 16, out, in); break;
    default: aes256_decrypt(&k->u.a256, n * 16, out, in); break;
    }
}

const cl_impl cl_impl_rijndael_nettle = {
    .cipher = "rijndael", .strategy = "nettle", .block_bytes = 16, .key_bits = kb_128_256,
    .ks_bytes = sizeof(aes_ks), .table_bytes = 0, .available = nettle_aesni_available,
    .set_encrypt_key = aes_set_enc, .set_decrypt_key = aes_set_dec,
    .encrypt = aes_enc, .decrypt = aes_dec, .init_hook = NULL,
};

const cl_impl cl_impl_rijndael_nettle_noaesni = {
    .cipher = "rijndael", .strategy = "nettle_noaesni", .block_bytes = 16, .key_bits = kb_128_256,
    .ks_bytes = sizeof(aes_ks), .table_bytes = 0, .available = nettle_noaesni_available,
    .set_encrypt_key = aes_set_enc, .set_decrypt_key = aes_set_dec,
    .encrypt = aes_enc, .decrypt = aes_dec, .init_hook = NULL,
};

/* ---- Serpent, Twofish: any key length up to 256 bits, one context for both directions ---- */

static int serpent_set(void *ks, const uint8_t *key, unsigned key_bits)
{
    if (key_bits != 128 && key_bits != 192 && key_bits != 256)
        return CL_BAD_KEY_LENGTH;
    serpent_set_key(ks, key_bits / 8, key);
    return CL_OK;
}
static void serpent_enc(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    serpent_encrypt(ks, n * 16, out, in);
}
static void serpent_dec(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    serpent_decrypt(ks, n * 16, out, in);
}

const cl_impl cl_impl_serpent_nettle = {
    .cipher = "serpent", .strategy = "nettle", .block_bytes = 16, .key_bits = kb_128_256,
    .ks_bytes = sizeof(struct serpent_ctx), .table_bytes = 0, .available = NULL,
    .set_encrypt_key = serpent_set, .set_decrypt_key = serpent_set,
    .encrypt = serpent_enc, .decrypt = serpent_dec, .init_hook = NULL,
};

static int twofish_set(void *ks, const uint8_t *key, unsigned key_bits)
{
    if (key_bits != 128 && key_bits != 192 && key_bits != 256)
        return CL_BAD_KEY_LENGTH;
    twofish_set_key(ks, key_bits / 8, key);
    return CL_OK;
}
static void twofish_enc(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    twofish_encrypt(ks, n * 16, out, in);
}
static void twofish_dec(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    twofish_decrypt(ks, n * 16, out, in);
}

const cl_impl cl_impl_twofish_nettle = {
    .cipher = "twofish", .strategy = "nettle", .block_bytes = 16, .key_bits = kb_128_256,
    .ks_bytes = sizeof(struct twofish_ctx), .table_bytes = 0, .available = NULL,
    .set_encrypt_key = twofish_set, .set_decrypt_key = twofish_set,
    .encrypt = twofish_enc, .decrypt = twofish_dec, .init_hook = NULL,
};

/* ---- DES, 3DES ----
 * des_set_key / des3_set_key return 0 for a weak key but set the schedule
 * all the same (Nettle's manual: applications that do not care about weak
 * keys may ignore the result); parity bits are ignored.  We accept the key
 * like our own implementations do. */

static int des_set(void *ks, const uint8_t *key, unsigned key_bits)
{
    if (key_bits != 64)
        return CL_BAD_KEY_LENGTH;
    (void)des_set_key(ks, key);
    return CL_OK;
}
static void des_enc(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    des_encrypt(ks, n * 8, out, in);
}
static void des_dec(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    des_decrypt(ks, n * 8, out, in);
}

const cl_impl cl_impl_des_nettle = {
    .cipher = "des", .strategy = "nettle", .block_bytes = 8, .key_bits = kb_des,
    .ks_bytes = sizeof(struct des_ctx), .table_bytes = 0, .available = NULL,
    .set_encrypt_key = des_set, .set_decrypt_key = des_set,
    .encrypt = des_enc, .decrypt = des_dec, .init_hook = NULL,
};

static int des3_set(void *ks, const uint8_t *key, unsigned key_bits)
{
    if (key_bits != 192)
        return CL_BAD_KEY_LENGTH;
    (void)des3_set_key(ks, key);
    return CL_OK;
}
static void des3_enc(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    des3_encrypt(ks, n * 8, out, in);
}
static void des3_dec(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    des3_decrypt(ks, n * 8, out, in);
}

const cl_impl cl_impl_3des_nettle = {
    .cipher = "3des", .strategy = "nettle", .block_bytes = 8, .key_bits = kb_3des,
    .ks_bytes = sizeof(struct des3_ctx), .table_bytes = 0, .available = NULL,
    .set_encrypt_key = des3_set, .set_decrypt_key = des3_set,
    .encrypt = des3_enc, .decrypt = des3_dec, .init_hook = NULL,
};

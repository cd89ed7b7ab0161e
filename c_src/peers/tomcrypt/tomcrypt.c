/*
 * tomcrypt.c -- libtomcrypt (Debian libtomcrypt-dev) block ciphers behind the
 * cipherlab API (see c_src/include/cipherlab.h and c_src/peers/README.md).
 *
 * The key schedule is libtomcrypt's symmetric_ECB (cipher index, block length
 * and the scheduled key, a plain C union), filled by ecb_start in the
 * caller's buffer: no allocation anywhere.  Re-keying is ecb_start again
 * (ecb_done only calls the cipher's done(), which frees nothing for these
 * ciphers, so it is not called).
 *
 * encrypt/decrypt: one ecb_encrypt / ecb_decrypt call over all n blocks
 * (libtomcrypt loops over the blocks with the cipher's ecb_encrypt; in and
 * out may be equal).
 *
 * libtomcrypt finds ciphers by an index into its global cipher table:
 * register_cipher is called once per cipher (first key setup) and the index
 * is kept in a static; that is process-wide and read-only afterwards, not
 * schedule state.
 *
 * Byte order: every cipher here uses the same byte strings as our vectors
 * (shared/vectors/README.md), no conversion.  Rounds: libtomcrypt's default
 * for each cipher and key size (num_rounds = 0), which are the standard ones.
 */
#include <tomcrypt.h>

#include "cipherlab.h"

static const unsigned short kb_128_256[] = {128, 192, 256, 0};
static const unsigned short kb_des[] = {64, 0};
static const unsigned short kb_3des[] = {192, 0};

static int key_ok(const unsigned short *list, unsigned bits)
{
    for (; *list; list++)
        if (*list == bits)
            return 1;
    return 0;
}

static int cipher_index(const struct ltc_cipher_descriptor *desc, int *cache)
{
    if (*cache < 0)
        *cache = register_cipher(desc);
    return *cache;
}

static int tc_set_key(const struct ltc_cipher_descriptor *desc, int *cache, const unsigned short *kb,
                      void *ks, const uint8_t *key, unsigned key_bits)
{
    if (!key_ok(kb, key_bits))
        return CL_BAD_KEY_LENGTH;
    int idx = cipher_index(desc, cache);
    if (idx < 0)
        return CL_UNAVAILABLE;
    int err = ecb_start(idx, key, (int)(key_bits / 8), 0, (symmetric_ECB *)ks);
    if (err == CRYPT_INVALID_KEYSIZE)
        return CL_BAD_KEY_LENGTH;
    return err == CRYPT_OK ? CL_OK : CL_BAD_KEY;
}

static void tc_encrypt(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    symmetric_ECB *ecb = (symmetric_ECB *)ks; /* libtomcrypt's API is not const */
    (void)ecb_encrypt(in, out, (unsigned long)(n * (size_t)ecb->blocklen), ecb);
}

static void tc_decrypt(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    symmetric_ECB *ecb = (symmetric_ECB *)ks;
    (void)ecb_decrypt(in, out, (unsigned long)(n * (size_t)ecb->blocklen), ecb);
}

#define TOMCRYPT_IMPL(cn, desc, bs, kb)                                                            \
    static int cn##_cache = -1;                                                                    \
    static int cn##_set(void *ks, const uint8_t *key, unsigned key_bits)                           \
    {                                                                                                  \
        return tc_set_key(&desc, &cn##_cache, kb, ks, key, key_bits);                              \
    }                                                                                                  \
    const cl_impl cl_impl_##cn##_tomcrypt = {                                                      \
        .cipher = #cn, .strategy = "tomcrypt", .block_bytes = bs, .key_bits = kb,                  \
        .ks_bytes = sizeof(symmetric_ECB), .table_bytes = 0, .available = NULL,                        \
        .set_encrypt_key = cn##_set, .set_decrypt_key = cn##_set,                              \
        .encrypt = tc_encrypt, .decrypt = tc_decrypt, .init_hook = NULL,                               \
    };

TOMCRYPT_IMPL(rijndael, aes_desc, 16, kb_128_256)
TOMCRYPT_IMPL(rc6, rc6_desc, 16, kb_128_256)
TOMCRYPT_IMPL(twofish, twofish_desc, 16, kb_128_256)
TOMCRYPT_IMPL(saferplus, saferp_desc, 16, kb_128_256)
TOMCRYPT_IMPL(des, des_desc, 8, kb_des)
/* "3des" is not an identifier prefix: spelled out. */
static int des3_cache = -1;
static int des3_set(void *ks, const uint8_t *key, unsigned key_bits)
{
    return tc_set_key(&des3_desc, &des3_cache, kb_3des, ks, key, key_bits);
}
const cl_impl cl_impl_3des_tomcrypt = {
    .cipher = "3des", .strategy = "tomcrypt", .block_bytes = 8, .key_bits = kb_3des,
    .ks_bytes = sizeof(symmetric_ECB), .table_bytes = 0, .available = NULL,
    .set_encrypt_key = des3_set, .set_decrypt_key = des3_set,
    .encrypt = tc_encrypt, .decrypt = tc_decrypt, .init_hook = NULL,
};

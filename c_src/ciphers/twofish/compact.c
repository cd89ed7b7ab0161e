/*
 * twofish/compact.c -- Twofish with "zero keying" (see cipherlab.h).
 *
 * Written from the Twofish AES submission (Schneier et al., 15 June 1998),
 * shared/specs/twofish-aes-submission.pdf; cipher structure Sec. 4 (p7),
 * key schedule Sec. 4.3 (p8-p10), keying options Sec. 5.1 (p12).
 *
 * "Zero Keying" (p12): no key-dependent S-box table is built.  The key
 * schedule keeps only the 40 expanded key words and the S-box key bytes;
 * g() runs the k+1 q-box lookups of h() per byte at encryption time, the
 * last q-box merged with the MDS column into one fixed 256-word table per
 * byte lane (cl_twofish_mq, as in the partial keying option).  So key setup
 * is just the 40 subkeys and the RS product, the schedule is 180 bytes, and
 * a block costs k+1 lookups per S-box instead of one.
 * Blocks are processed by one of three functions specialised for k = 2, 3, 4
 * (128/192/256-bit keys) so the key-length test is outside the block loop.
 */
#include <stddef.h>
#include <stdint.h>

#include "cipherlab.h"
#include "cl_bytes.h"
#include "twofish_core.h"

typedef struct {
    uint32_t K[40];
    uint8_t kb[4][4]; /* kb[i][j] = byte j of L_i (S-box key list, L_0 = S_{k-1}) */
    uint32_t k;       /* 2, 3 or 4 */
} twofish_compact_ks;

static const unsigned short twofish_key_bits[] = {128, 192, 256, 0};

static int twofish_compact_set_key(void *vks, const uint8_t *key, unsigned key_bits)
{
    twofish_compact_ks *ks = (twofish_compact_ks *)vks;
    cl_twofish_keyinfo ki;
    if (cl_twofish_expand(&ki, key, key_bits) != 0)
        return CL_BAD_KEY_LENGTH;
    for (unsigned i = 0; i < 40; i++)
        ks->K[i] = ki.K[i];
    for (unsigned i = 0; i < 4; i++)
        for (unsigned j = 0; j < 4; j++)
            ks->kb[i][j] = ki.sbox_key[i][j];
    ks->k = ki.k;
    return CL_OK;
}

/* g(X) and g(ROL(X, 8)) with the q-chains of h() evaluated per byte, for
 * the rounds of twofish_core.h (lane macros there; kb, K3, K4 are in scope). */
#define G0(x) CL_TWOFISH_H(CL_BYTE(x, 0), CL_BYTE(x, 1), CL_BYTE(x, 2), CL_BYTE(x, 3), kb, K3, K4)
#define G1(x) CL_TWOFISH_H(CL_BYTE(x, 3), CL_BYTE(x, 0), CL_BYTE(x, 1), CL_BYTE(x, 2), kb, K3, K4)


/* Defines encrypt/decrypt of n blocks for one key length (K3: k >= 3, K4: k == 4). */
#define TWOFISH_COMPACT_FUNCS(suffix, K3_, K4_)                                             \
    static void enc_##suffix(const twofish_compact_ks *ks, const uint8_t *in, uint8_t *out, \
                             size_t n)                                                      \
    {                                                                                       \
        enum { K3 = K3_, K4 = K4_ };                                                        \
        const uint32_t *K = ks->K;                                                          \
        const uint8_t(*kb)[4] = ks->kb;                                                     \
        for (; n; n--, in += 16, out += 16) {                                               \
            uint32_t x0 = cl_load32_le(in) ^ K[0];                                          \
            uint32_t x1 = cl_load32_le(in + 4) ^ K[1];                                      \
            uint32_t x2 = cl_load32_le(in + 8) ^ K[2];                                      \
            uint32_t x3 = cl_load32_le(in + 12) ^ K[3];                                     \
            uint32_t t0, t1;                                                                \
            for (unsigned r = 0; r < 8; r++)                                                \
                CL_TWOFISH_ENC2(r);                                                         \
            cl_store32_le(out, x2 ^ K[4]);                                                  \
            cl_store32_le(out + 4, x3 ^ K[5]);                                              \
            cl_store32_le(out + 8, x0 ^ K[6]);                                              \
            cl_store32_le(out + 12, x1 ^ K[7]);                                             \
        }                                                                                   \
    }                                                                                       \
    static void dec_##suffix(const twofish_compact_ks *ks, const uint8_t *in, uint8_t *out, \
                             size_t n)                                                      \
    {                                                                                       \
        enum { K3 = K3_, K4 = K4_ };                                                        \
        const uint32_t *K = ks->K;                                                          \
        const uint8_t(*kb)[4] = ks->kb;                                                     \
        for (; n; n--, in += 16, out += 16) {                                               \
            uint32_t x2 = cl_load32_le(in) ^ K[4];                                          \
            uint32_t x3 = cl_load32_le(in + 4) ^ K[5];                                      \
            uint32_t x0 = cl_load32_le(in + 8) ^ K[6];                                      \
            uint32_t x1 = cl_load32_le(in + 12) ^ K[7];                                     \
            uint32_t t0, t1;                                                                \
            for (unsigned r = 8; r-- > 0;)                                                  \
                CL_TWOFISH_DEC2(r);                                                         \
            cl_store32_le(out, x0 ^ K[0]);                                                  \
            cl_store32_le(out + 4, x1 ^ K[1]);                                              \
            cl_store32_le(out + 8, x2 ^ K[2]);                                              \
            cl_store32_le(out + 12, x3 ^ K[3]);                                             \
        }                                                                                   \
    }

TWOFISH_COMPACT_FUNCS(k2, 0, 0)
TWOFISH_COMPACT_FUNCS(k3, 1, 0)
TWOFISH_COMPACT_FUNCS(k4, 1, 1)

static void twofish_compact_encrypt(const void *vks, const uint8_t *in, uint8_t *out, size_t n)
{
    const twofish_compact_ks *ks = (const twofish_compact_ks *)vks;
    switch (ks->k) {
    case 2: enc_k2(ks, in, out, n); break;
    case 3: enc_k3(ks, in, out, n); break;
    default: enc_k4(ks, in, out, n); break;
    }
}

static void twofish_compact_decrypt(const void *vks, const uint8_t *in, uint8_t *out, size_t n)
{
    const twofish_compact_ks *ks = (const twofish_compact_ks *)vks;
    switch (ks->k) {
    case 2: dec_k2(ks, in, out, n); break;
    case 3: dec_k3(ks, in, out, n); break;
    default: dec_k4(ks, in, out, n); break;
    }
}

const cl_impl cl_impl_twofish_compact = {
    .cipher = "twofish",
    .strategy = "compact",
    .block_bytes = 16,
    .key_bits = twofish_key_bits,
    .ks_bytes = sizeof(twofish_compact_ks),
    .table_bytes = CL_TWOFISH_TABLE_BYTES,
    .available = NULL,
    .set_encrypt_key = twofish_compact_set_key,
    .set_decrypt_key = twofish_compact_set_key,
    .encrypt = twofish_compact_encrypt,
    .decrypt = twofish_compact_decrypt,
    .init_hook = NULL,
};

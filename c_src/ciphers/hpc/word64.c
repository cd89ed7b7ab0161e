/*
 * hpc/word64.c -- Hasty Pudding Cipher, HPC-Medium with a 128-bit block,
 * uint64_t arithmetic (NIST's "HPC-64" row; see cipherlab.h).
 *
 * Written from R. Schroeppel, "Hasty Pudding Cipher Specification" (June
 * 1998, revised May 1999), ../../../../shared/specs/hpc-spec-rev1999.txt
 * (line numbers of that file):
 *   - conventions 13-79, sub-cipher numbers 96-100 (HPC-Medium = 3);
 *   - constants PI19, E19, R220 113-115;
 *   - KX table creation 119-171 and 224-234, stirring function 173-222;
 *   - HPC-Medium encryption 375-428, decryption 431-491.
 * Version: the ORIGINAL 1998 key expansion, which the submission's KAT files
 * (shared/vectors/hpc.kat) follow: the statement `s2 += KX[i]` that the May
 * 1999 revision added to the stirring loop (spec line 200, "Wagner
 * equivalent key" fix) is compiled in only with -DHPC_MAY1999_FIX=1.
 * Spice: none, i.e. the all-zero 512-bit spice, so every spice term of the
 * round (s0 -= spice[i^4], t = spice[i] ..., etc.) is the identity and is
 * left out.  Backup: 0 (3 stirring passes, one encryption cycle).
 * Byte order: HPC works on 64-bit words; block word j (and key word j) is
 * bytes 8j..8j+7 read big-endian, HPC's own hex convention and the order of
 * the designer's NIST files (shared/vectors/README.md).
 * Not constant time: KX is indexed by secret bytes and one shift count is
 * data-dependent, by design.
 */
#include <stddef.h>
#include <stdint.h>

#include "cipherlab.h"
#include "cl_bytes.h"

#ifndef HPC_MAY1999_FIX
#define HPC_MAY1999_FIX 0
#endif

#define HPC_PI19 UINT64_C(3141592653589793238) /* line 113 */
#define HPC_E19 UINT64_C(2718281828459045235)  /* line 114 */
#define HPC_R220 UINT64_C(14142135623730950488) /* line 115 */

#define HPC_SUBCIPHER 3   /* HPC-Medium, blocks of 65..128 bits */
#define HPC_BLOCK_BITS 128
#define HPC_KX_WORDS (256 + 30) /* the table plus the 30-word wrap copy */

typedef struct {
    uint64_t kx[HPC_KX_WORDS];
} hpc_ks;

static const unsigned short hpc_key_bits[] = {128, 192, 256, 0};

/* The stirring function (lines 173-222), `passes` passes over KX[0..255]. */
static void hpc_stir(uint64_t *kx, unsigned passes, int may1999_fix)
{
    uint64_t s0 = kx[248], s1 = kx[249], s2 = kx[250], s3 = kx[251];
    uint64_t s4 = kx[252], s5 = kx[253], s6 = kx[254], s7 = kx[255];
    for (unsigned j = 0; j < passes; j++) {
        for (unsigned i = 0; i < 256; i++) {
            s0 ^= (kx[i] ^ kx[(i + 83) & 255]) + kx[s0 & 255];
            if (may1999_fix)
                s2 += kx[i];
            s1 += s0;
            s3 ^= s2;
            s5 -= s4;
            s7 ^= s6;
            s3 += s0 >> 13;
            s4 ^= s1 << 11;
            s5 ^= s3 << (s1 & 31);
            s6 += s2 >> 17;
            s7 |= s3 + s4;
            s2 -= s5;
            s0 -= s6 ^ i;
            s1 ^= s5 + HPC_PI19;
            s2 += s7 >> j;
            s2 ^= s1;
            s4 -= s3;
            s6 ^= s5;
            s0 += s7;
            kx[i] = s2 + s6;
        }
    }
}

/* KX table of sub-cipher 3 (lines 119-171, 224-234). */
static int hpc_set_key(void *ks, const uint8_t *key, unsigned key_bits)
{
    if (key_bits != 128 && key_bits != 192 && key_bits != 256)
        return CL_BAD_KEY_LENGTH;
    uint64_t *kx = ((hpc_ks *)ks)->kx;
    kx[0] = HPC_PI19 + HPC_SUBCIPHER;
    kx[1] = HPC_E19 * key_bits;
    kx[2] = cl_rotl64(HPC_R220, HPC_SUBCIPHER);
    for (unsigned i = 3; i < 256; i++)
        kx[i] = kx[i - 1] + (kx[i - 2] ^ kx[i - 3] >> 23 ^ kx[i - 3] << 41);
    /* At most 4 key words (< 128), so one xor-in and one stirring. */
    for (unsigned w = 0; w < key_bits / 64; w++)
        kx[w] ^= cl_load64_be(key + 8 * w);
    hpc_stir(kx, 3, HPC_MAY1999_FIX);
    for (unsigned i = 0; i < 30; i++)
        kx[256 + i] = kx[i];
    return CL_OK;
}

#define HPC_PI19_B (HPC_PI19 + HPC_BLOCK_BITS)

/* HPC-Medium round i (lines 387-422), spice terms dropped (spice = 0). */
#define HPC_ENC_ROUND(i)                                       \
    do {                                                       \
        uint64_t k_ = kx[s0 & 255], kk_;                       \
        unsigned t_;                                           \
        s1 += k_;                                              \
        s0 ^= k_ << 8;                                         \
        s1 ^= s0;                                              \
        s0 -= s1 >> 11;                                        \
        s0 ^= s1 << 2;                                         \
        s0 += (s0 << 32) ^ HPC_PI19_B;                         \
        s0 ^= s0 >> 17;                                        \
        s0 ^= s0 >> 34;                                        \
        s0 += s0 << (22 + (s0 & 31));                          \
        s0 ^= s0 >> 23;                                        \
        t_ = (unsigned)(s0 & 255);                             \
        k_ = kx[t_];                                           \
        kk_ = kx[t_ + 3 * (i) + 1];                            \
        s1 ^= k_;                                              \
        s0 ^= kk_ << 8;                                        \
        kk_ ^= k_;                                             \
        s1 += kk_ >> 5;                                        \
        s0 -= kk_ << 12;                                       \
        s0 ^= kk_ & ~(uint64_t)255;                            \
        s1 += s0;                                              \
        s0 += s1 << 3;                                         \
        s0 += kx[HPC_BLOCK_BITS + 16 + (i)];                   \
        s0 += s0 << 22;                                        \
        s0 ^= s1 >> 4;                                         \
        s0 ^= s0 >> (33 + (i));                                \
    } while (0)

/* Its inverse (lines 431-491): steps in reverse order, each undone. */
#define HPC_DEC_ROUND(i)                                       \
    do {                                                       \
        uint64_t k_, kk_, u_;                                  \
        unsigned t_;                                           \
        s0 ^= s0 >> (33 + (i)); /* shift >= 32: self-inverse */ \
        s0 ^= s1 >> 4;                                         \
        u_ = s0 - (s0 << 22); /* undo s0 += s0 << 22 */        \
        s0 -= u_ << 22;                                        \
        s0 -= kx[HPC_BLOCK_BITS + 16 + (i)];                   \
        s0 -= s1 << 3;                                         \
        s1 -= s0;                                              \
        t_ = (unsigned)(s0 & 255); /* kk steps kept the low byte */ \
        k_ = kx[t_];                                           \
        kk_ = kx[t_ + 3 * (i) + 1];                            \
        uint64_t kkx_ = kk_ ^ k_;                               \
        s0 ^= kkx_ & ~(uint64_t)255;                            \
        s0 += kkx_ << 12;                                       \
        s1 -= kkx_ >> 5;                                        \
        s0 ^= kk_ << 8;                                        \
        s1 ^= k_;                                              \
        s0 ^= s0 >> 23;                                        \
        s0 ^= s0 >> 46;                                        \
        t_ = 22 + (unsigned)(s0 & 31);                         \
        u_ = s0 - (s0 << t_);                                  \
        s0 -= u_ << t_;                                        \
        s0 ^= s0 >> 17;                                        \
        u_ = s0 - ((s0 << 32) ^ HPC_PI19_B);                   \
        s0 -= (u_ << 32) ^ HPC_PI19_B;                         \
        s0 ^= s1 << 2;                                         \
        s0 += s1 >> 11;                                        \
        s1 ^= s0;                                              \
        k_ = kx[s0 & 255];                                     \
        s0 ^= k_ << 8;                                         \
        s1 -= k_;                                              \
    } while (0)

static void hpc_encrypt(const void *ks, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    const uint64_t *const kx = ((const hpc_ks *)ks)->kx;
    for (; nblocks; nblocks--, in += 16, out += 16) {
        uint64_t s0 = cl_load64_be(in) + kx[HPC_BLOCK_BITS];
        uint64_t s1 = cl_load64_be(in + 8) + kx[HPC_BLOCK_BITS + 1];
        HPC_ENC_ROUND(0);
        HPC_ENC_ROUND(1);
        HPC_ENC_ROUND(2);
        HPC_ENC_ROUND(3);
        HPC_ENC_ROUND(4);
        HPC_ENC_ROUND(5);
        HPC_ENC_ROUND(6);
        HPC_ENC_ROUND(7);
        cl_store64_be(out, s0 + kx[HPC_BLOCK_BITS + 8]);
        cl_store64_be(out + 8, s1 + kx[HPC_BLOCK_BITS + 9]);
    }
}

static void hpc_decrypt(const void *ks, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    const uint64_t *const kx = ((const hpc_ks *)ks)->kx;
    for (; nblocks; nblocks--, in += 16, out += 16) {
        uint64_t s0 = cl_load64_be(in) - kx[HPC_BLOCK_BITS + 8];
        uint64_t s1 = cl_load64_be(in + 8) - kx[HPC_BLOCK_BITS + 9];
        HPC_DEC_ROUND(7);
        HPC_DEC_ROUND(6);
        HPC_DEC_ROUND(5);
        HPC_DEC_ROUND(4);
        HPC_DEC_ROUND(3);
        HPC_DEC_ROUND(2);
        HPC_DEC_ROUND(1);
        HPC_DEC_ROUND(0);
        cl_store64_be(out, s0 - kx[HPC_BLOCK_BITS]);
        cl_store64_be(out + 8, s1 - kx[HPC_BLOCK_BITS + 1]);
    }
}

const cl_impl cl_impl_hpc_word64 = {
    .cipher = "hpc",
    .strategy = "word64",
    .block_bytes = 16,
    .key_bits = hpc_key_bits,
    .ks_bytes = sizeof(hpc_ks),
    .table_bytes = 0,
    .available = NULL,
    .set_encrypt_key = hpc_set_key,
    .set_decrypt_key = hpc_set_key,
    .encrypt = hpc_encrypt,
    .decrypt = hpc_decrypt,
    .init_hook = NULL,
};

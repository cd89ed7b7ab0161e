/*
 * hpc/ansi32.c -- Hasty Pudding Cipher, HPC-Medium with a 128-bit block, in
 * 32-bit ANSI C: only uint32_t arithmetic, every 64-bit word held as a
 * (high, low) pair, as a 1999 compiler without `long long` needed (NIST's
 * "HPC" row; see cipherlab.h).
 *
 * Same algorithm, version, spice, backup and byte order as hpc/word64.c
 * (which cites the specification lines and says why the May 1999 statement
 * is off by default); the steps below are written in the same order with the
 * pair operations of this file, and give identical results.
 * Not constant time: KX is indexed by secret bytes, by design (the
 * data-dependent shifts are branch-free here).
 */
#include <stddef.h>
#include <stdint.h>

#include "cipherlab.h"
#include "cl_bytes.h"

#ifndef HPC_MAY1999_FIX
#define HPC_MAY1999_FIX 0
#endif

#define HPC_SUBCIPHER 3 /* HPC-Medium, blocks of 65..128 bits */
#define HPC_BLOCK_BITS 128
#define HPC_KX_WORDS (256 + 30) /* the table plus the 30-word wrap copy */

/* A 64-bit HPC word. */
typedef struct {
    uint32_t h, l;
} hpc_w;

/* Constants of spec lines 113-115, split into 32-bit halves:
 * PI19 = 3141592653589793238, E19 = 2718281828459045235,
 * R220 = 14142135623730950488. */
static const hpc_w hpc_pi19 = {0x2b992ddfu, 0xa23249d6u};
static const hpc_w hpc_e19 = {0x25b946ebu, 0xc0b36173u};
static const hpc_w hpc_r220 = {0xc442f56bu, 0xe9e17158u};

typedef struct {
    hpc_w kx[HPC_KX_WORDS];
} hpc_ks;

static const unsigned short hpc_key_bits[] = {128, 192, 256, 0};

static inline hpc_w w_make(uint32_t h, uint32_t l)
{
    hpc_w r;
    r.h = h;
    r.l = l;
    return r;
}
static inline hpc_w w_add(hpc_w a, hpc_w b)
{
    uint32_t l = a.l + b.l;
    return w_make(a.h + b.h + (l < a.l), l);
}
static inline hpc_w w_sub(hpc_w a, hpc_w b)
{
    return w_make(a.h - b.h - (a.l < b.l), a.l - b.l);
}
static inline hpc_w w_xor(hpc_w a, hpc_w b) { return w_make(a.h ^ b.h, a.l ^ b.l); }
static inline hpc_w w_or(hpc_w a, hpc_w b) { return w_make(a.h | b.h, a.l | b.l); }
/* a << n and a >> n for 0 <= n < 64, branch-free (constant n folds away). */
static inline hpc_w w_shl(hpc_w a, unsigned n)
{
    unsigned m = n & 31;
    uint32_t big = 0u - (uint32_t)(n >> 5); /* all ones when n >= 32 */
    uint32_t h = (a.h << m) | ((a.l >> 1) >> (31 - m));
    uint32_t l = a.l << m;
    return w_make((h & ~big) | (l & big), l & ~big);
}
static inline hpc_w w_shr(hpc_w a, unsigned n)
{
    unsigned m = n & 31;
    uint32_t big = 0u - (uint32_t)(n >> 5);
    uint32_t l = (a.l >> m) | ((a.h << 1) << (31 - m));
    uint32_t h = a.h >> m;
    return w_make(h & ~big, (l & ~big) | (h & big));
}
/* a * m mod 2^64 for m < 2^16, from 16x16->32 pieces. */
static inline hpc_w w_mul16(hpc_w a, uint32_t m)
{
    uint32_t p0 = (a.l & 0xffffu) * m, p1 = (a.l >> 16) * m;
    uint32_t l = p0 + (p1 << 16);
    return w_make(a.h * m + (p1 >> 16) + (l < p0), l);
}

/* The stirring function (spec lines 173-222), see word64.c. */
static void hpc_stir(hpc_w *kx, unsigned passes, int may1999_fix)
{
    hpc_w s0 = kx[248], s1 = kx[249], s2 = kx[250], s3 = kx[251];
    hpc_w s4 = kx[252], s5 = kx[253], s6 = kx[254], s7 = kx[255];
    for (unsigned j = 0; j < passes; j++) {
        for (unsigned i = 0; i < 256; i++) {
            s0 = w_xor(s0, w_add(w_xor(kx[i], kx[(i + 83) & 255]), kx[s0.l & 255]));
            if (may1999_fix)
                s2 = w_add(s2, kx[i]);
            s1 = w_add(s1, s0);
            s3 = w_xor(s3, s2);
            s5 = w_sub(s5, s4);
            s7 = w_xor(s7, s6);
            s3 = w_add(s3, w_shr(s0, 13));
            s4 = w_xor(s4, w_shl(s1, 11));
            s5 = w_xor(s5, w_shl(s3, s1.l & 31));
            s6 = w_add(s6, w_shr(s2, 17));
            s7 = w_or(s7, w_add(s3, s4));
            s2 = w_sub(s2, s5);
            s0 = w_sub(s0, w_xor(s6, w_make(0, i)));
            s1 = w_xor(s1, w_add(s5, hpc_pi19));
            s2 = w_add(s2, w_shr(s7, j));
            s2 = w_xor(s2, s1);
            s4 = w_sub(s4, s3);
            s6 = w_xor(s6, s5);
            s0 = w_add(s0, s7);
            kx[i] = w_add(s2, s6);
        }
    }
}

/* KX table of sub-cipher 3 (spec lines 119-171, 224-234). */
static int hpc_set_key(void *ks, const uint8_t *key, unsigned key_bits)
{
    if (key_bits != 128 && key_bits != 192 && key_bits != 256)
        return CL_BAD_KEY_LENGTH;
    hpc_w *kx = ((hpc_ks *)ks)->kx;
    kx[0] = w_add(hpc_pi19, w_make(0, HPC_SUBCIPHER));
    kx[1] = w_mul16(hpc_e19, key_bits);
    kx[2] = w_or(w_shl(hpc_r220, HPC_SUBCIPHER), w_shr(hpc_r220, 64 - HPC_SUBCIPHER));
    for (unsigned i = 3; i < 256; i++)
        kx[i] = w_add(kx[i - 1],
                      w_xor(w_xor(kx[i - 2], w_shr(kx[i - 3], 23)), w_shl(kx[i - 3], 41)));
    for (unsigned w = 0; w < key_bits / 64; w++)
        kx[w] = w_xor(kx[w], w_make(cl_load32_be(key + 8 * w), cl_load32_be(key + 8 * w + 4)));
    hpc_stir(kx, 3, HPC_MAY1999_FIX);
    for (unsigned i = 0; i < 30; i++)
        kx[256 + i] = kx[i];
    return CL_OK;
}

/* PI19 + blocksize = 0x2b992ddfa2324a56 */
static const hpc_w hpc_pi19_b = {0x2b992ddfu, 0xa2324a56u};

/* HPC-Medium round i, spice terms dropped (spice = 0); see word64.c. */
#define HPC_ENC_ROUND(i)                                               \
    do {                                                               \
        hpc_w k_ = kx[s0.l & 255], kk_;                                \
        unsigned t_;                                                   \
        s1 = w_add(s1, k_);                                            \
        s0 = w_xor(s0, w_shl(k_, 8));                                  \
        s1 = w_xor(s1, s0);                                            \
        s0 = w_sub(s0, w_shr(s1, 11));                                 \
        s0 = w_xor(s0, w_shl(s1, 2));                                  \
        s0 = w_add(s0, w_xor(w_make(s0.l, 0), hpc_pi19_b));            \
        s0 = w_xor(s0, w_shr(s0, 17));                                 \
        s0 = w_xor(s0, w_shr(s0, 34));                                 \
        s0 = w_add(s0, w_shl(s0, 22 + (s0.l & 31)));                   \
        s0 = w_xor(s0, w_shr(s0, 23));                                 \
        t_ = s0.l & 255;                                               \
        k_ = kx[t_];                                                   \
        kk_ = kx[t_ + 3 * (i) + 1];                                    \
        s1 = w_xor(s1, k_);                                            \
        s0 = w_xor(s0, w_shl(kk_, 8));                                 \
        kk_ = w_xor(kk_, k_);                                          \
        s1 = w_add(s1, w_shr(kk_, 5));                                 \
        s0 = w_sub(s0, w_shl(kk_, 12));                                \
        s0 = w_xor(s0, w_make(kk_.h, kk_.l & ~0xffu));                 \
        s1 = w_add(s1, s0);                                            \
        s0 = w_add(s0, w_shl(s1, 3));                                  \
        s0 = w_add(s0, kx[HPC_BLOCK_BITS + 16 + (i)]);                 \
        s0 = w_add(s0, w_shl(s0, 22));                                 \
        s0 = w_xor(s0, w_shr(s1, 4));                                  \
        s0 = w_xor(s0, w_shr(s0, 33 + (i)));                           \
    } while (0)

#define HPC_DEC_ROUND(i)                                               \
    do {                                                               \
        hpc_w k_, kk_, kkx_, u_;                                       \
        unsigned t_;                                                   \
        s0 = w_xor(s0, w_shr(s0, 33 + (i)));                           \
        s0 = w_xor(s0, w_shr(s1, 4));                                  \
        u_ = w_sub(s0, w_shl(s0, 22));                                 \
        s0 = w_sub(s0, w_shl(u_, 22));                                 \
        s0 = w_sub(s0, kx[HPC_BLOCK_BITS + 16 + (i)]);                 \
        s0 = w_sub(s0, w_shl(s1, 3));                                  \
        s1 = w_sub(s1, s0);                                            \
        t_ = s0.l & 255;                                               \
        k_ = kx[t_];                                                   \
        kk_ = kx[t_ + 3 * (i) + 1];                                    \
        kkx_ = w_xor(kk_, k_);                                         \
        s0 = w_xor(s0, w_make(kkx_.h, kkx_.l & ~0xffu));               \
        s0 = w_add(s0, w_shl(kkx_, 12));                               \
        s1 = w_sub(s1, w_shr(kkx_, 5));                                \
        s0 = w_xor(s0, w_shl(kk_, 8));                                 \
        s1 = w_xor(s1, k_);                                            \
        s0 = w_xor(s0, w_shr(s0, 23));                                 \
        s0 = w_xor(s0, w_shr(s0, 46));                                 \
        t_ = 22 + (s0.l & 31);                                         \
        u_ = w_sub(s0, w_shl(s0, t_));                                 \
        s0 = w_sub(s0, w_shl(u_, t_));                                 \
        s0 = w_xor(s0, w_shr(s0, 17));                                 \
        u_ = w_sub(s0, w_xor(w_make(s0.l, 0), hpc_pi19_b));            \
        s0 = w_sub(s0, w_xor(w_make(u_.l, 0), hpc_pi19_b));            \
        s0 = w_xor(s0, w_shl(s1, 2));                                  \
        s0 = w_add(s0, w_shr(s1, 11));                                 \
        s1 = w_xor(s1, s0);                                            \
        k_ = kx[s0.l & 255];                                           \
        s0 = w_xor(s0, w_shl(k_, 8));                                  \
        s1 = w_sub(s1, k_);                                            \
    } while (0)

static inline hpc_w hpc_load(const uint8_t *p)
{
    return w_make(cl_load32_be(p), cl_load32_be(p + 4));
}

static inline void hpc_store(uint8_t *p, hpc_w v)
{
    cl_store32_be(p, v.h);
    cl_store32_be(p + 4, v.l);
}

static void hpc_encrypt(const void *ks, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    const hpc_w *const kx = ((const hpc_ks *)ks)->kx;
    for (; nblocks; nblocks--, in += 16, out += 16) {
        hpc_w s0 = w_add(hpc_load(in), kx[HPC_BLOCK_BITS]);
        hpc_w s1 = w_add(hpc_load(in + 8), kx[HPC_BLOCK_BITS + 1]);
        HPC_ENC_ROUND(0);
        HPC_ENC_ROUND(1);
        HPC_ENC_ROUND(2);
        HPC_ENC_ROUND(3);
        HPC_ENC_ROUND(4);
        HPC_ENC_ROUND(5);
        HPC_ENC_ROUND(6);
        HPC_ENC_ROUND(7);
        hpc_store(out, w_add(s0, kx[HPC_BLOCK_BITS + 8]));
        hpc_store(out + 8, w_add(s1, kx[HPC_BLOCK_BITS + 9]));
    }
}

static void hpc_decrypt(const void *ks, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    const hpc_w *const kx = ((const hpc_ks *)ks)->kx;
    for (; nblocks; nblocks--, in += 16, out += 16) {
        hpc_w s0 = w_sub(hpc_load(in), kx[HPC_BLOCK_BITS + 8]);
        hpc_w s1 = w_sub(hpc_load(in + 8), kx[HPC_BLOCK_BITS + 9]);
        HPC_DEC_ROUND(7);
        HPC_DEC_ROUND(6);
        HPC_DEC_ROUND(5);
        HPC_DEC_ROUND(4);
        HPC_DEC_ROUND(3);
        HPC_DEC_ROUND(2);
        HPC_DEC_ROUND(1);
        HPC_DEC_ROUND(0);
        hpc_store(out, w_sub(s0, kx[HPC_BLOCK_BITS]));
        hpc_store(out + 8, w_sub(s1, kx[HPC_BLOCK_BITS + 1]));
    }
}

const cl_impl cl_impl_hpc_ansi32 = {
    .cipher = "hpc",
    .strategy = "ansi32",
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

/*
 * serpent/avx2.c -- Serpent bitsliced across blocks, 8 blocks per 256-bit
 * AVX2 register (see cipherlab.h and simd_body.h).
 *
 * Source: shared/specs/serpent-aes-submission.pdf (cipher p3, bitslice
 * description and linear transformation p5-p6, S-boxes p21).
 *
 * A register loaded from memory holds two blocks, one per 128-bit lane; the
 * 4 x 4 transpose runs inside each lane (vpunpck*), so after loading blocks
 * 0..7 lane 0 of x_j holds word j of blocks 0, 2, 4, 6 and lane 1 that of
 * blocks 1, 3, 5, 7.  Block order does not matter to bitslicing, and storing
 * applies the same transpose, so no cross-lane shuffle is needed.  AVX2 has
 * no rotation: x <<< n is (x << n) | (x >> 32 - n); the subkey words are
 * broadcast from memory (vpbroadcastd).  SV_GROUPS independent groups of 8
 * blocks are interleaved, then one group of 8, then the scalar code for the
 * last 0..7 blocks.  The functions carry __attribute__((target("avx2"))), so
 * no build flag is needed; available() checks the CPU at run time.
 * Elsewhere than x86-64 the file compiles to the scalar code and available()
 * returns 0.  Branch-free and table-free.
 */
#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "cipherlab.h"

static const unsigned short avx2_key_bits[] = {128, 192, 256, 0};

#if defined(__x86_64__)

#include <immintrin.h>

#define SV_T __m256i
#define SV_LANES 8
#ifndef SV_GROUPS
#define SV_GROUPS 2
#endif
#define SV_ATTR __attribute__((target("avx2")))
#define SV_ROTL(x, n) _mm256_or_si256(_mm256_slli_epi32((x), (n)), _mm256_srli_epi32((x), 32 - (n)))
#define SV_SHL(x, n) _mm256_slli_epi32((x), (n))
#define SV_KEY(w) _mm256_set1_epi32((int)(w))
#define SV_TRANSPOSE(x0, x1, x2, x3)                                            \
    do {                                                                        \
        const __m256i t0 = _mm256_unpacklo_epi32(x0, x1), t1 = _mm256_unpackhi_epi32(x0, x1); \
        const __m256i t2 = _mm256_unpacklo_epi32(x2, x3), t3 = _mm256_unpackhi_epi32(x2, x3); \
        x0 = _mm256_unpacklo_epi64(t0, t2);                                     \
        x1 = _mm256_unpackhi_epi64(t0, t2);                                     \
        x2 = _mm256_unpacklo_epi64(t1, t3);                                     \
        x3 = _mm256_unpackhi_epi64(t1, t3);                                     \
    } while (0)
/* Registers i holds blocks 2i, 2i+1. */
#define SV_LOAD(p, x0, x1, x2, x3)                                              \
    do {                                                                        \
        x0 = _mm256_loadu_si256((const __m256i *)(const void *)(p));            \
        x1 = _mm256_loadu_si256((const __m256i *)(const void *)((p) + 32));     \
        x2 = _mm256_loadu_si256((const __m256i *)(const void *)((p) + 64));     \
        x3 = _mm256_loadu_si256((const __m256i *)(const void *)((p) + 96));     \
        SV_TRANSPOSE(x0, x1, x2, x3);                                           \
    } while (0)
#define SV_STORE(p, x0, x1, x2, x3)                                             \
    do {                                                                        \
        SV_TRANSPOSE(x0, x1, x2, x3);                                           \
        _mm256_storeu_si256((__m256i *)(void *)(p), x0);                        \
        _mm256_storeu_si256((__m256i *)(void *)((p) + 32), x1);                 \
        _mm256_storeu_si256((__m256i *)(void *)((p) + 64), x2);                 \
        _mm256_storeu_si256((__m256i *)(void *)((p) + 96), x3);                 \
    } while (0)

#include "simd_body.h"

static int avx2_available(void)
{
    return __builtin_cpu_supports("avx2");
}

#define AVX2_AVAILABLE avx2_available
#define AVX2_ENCRYPT sv_encrypt
#define AVX2_DECRYPT sv_decrypt
#define AVX2_SET_KEY sv_set_key

#else /* not x86-64: recorded as unavailable; the scalar code stands in */

extern const cl_impl cl_impl_serpent_bitslice;
static int avx2_unavailable(void) { return 0; }
static int avx2_set_key(void *ks, const uint8_t *key, unsigned key_bits)
{
    return cl_impl_serpent_bitslice.set_encrypt_key(ks, key, key_bits);
}
static void avx2_encrypt(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    cl_impl_serpent_bitslice.encrypt(ks, in, out, n);
}
static void avx2_decrypt(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    cl_impl_serpent_bitslice.decrypt(ks, in, out, n);
}
#define AVX2_AVAILABLE avx2_unavailable
#define AVX2_ENCRYPT avx2_encrypt
#define AVX2_DECRYPT avx2_decrypt
#define AVX2_SET_KEY avx2_set_key

#endif

const cl_impl cl_impl_serpent_avx2 = {
    .cipher = "serpent",
    .strategy = "avx2",
    .block_bytes = 16,
    .key_bits = avx2_key_bits,
    .ks_bytes = 33 * 4 * sizeof(uint32_t),
    .table_bytes = 0,
    .available = AVX2_AVAILABLE,
    .set_encrypt_key = AVX2_SET_KEY,
    .set_decrypt_key = AVX2_SET_KEY,
    .encrypt = AVX2_ENCRYPT,
    .decrypt = AVX2_DECRYPT,
    .init_hook = NULL,
};

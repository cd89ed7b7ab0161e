/*
 * serpent/sse2.c -- Serpent bitsliced across blocks, 4 blocks per 128-bit
 * SSE2 register (see cipherlab.h and simd_body.h): the direct heir of
 * Gladman's MMX Serpent (two blocks per 64-bit MMX register, 1999).
 *
 * Source: shared/specs/serpent-aes-submission.pdf (cipher p3, bitslice
 * description and linear transformation p5-p6, S-boxes p21).
 *
 * Two groups of four blocks are interleaved (8 blocks per step; 16 XMM
 * registers hold the eight state words and the S-box temporaries), then one
 * group of four, then the scalar code for the last 0..3 blocks.  SSE2 has no
 * rotation: x <<< n is (x << n) | (x >> 32 - n).  The functions carry
 * __attribute__((target("sse2"))), so no build flag is needed; available()
 * checks the CPU at run time.  Elsewhere than x86-64 the file compiles to the
 * scalar code and available() returns 0.  Branch-free and table-free.
 */
#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "cipherlab.h"

static const unsigned short sse2_key_bits[] = {128, 192, 256, 0};

#if defined(__x86_64__)

#include <emmintrin.h>

#define SV_T __m128i
#define SV_LANES 4
#define SV_GROUPS 2
#define SV_ATTR __attribute__((target("sse2")))
#define SV_ROTL(x, n) _mm_or_si128(_mm_slli_epi32((x), (n)), _mm_srli_epi32((x), 32 - (n)))
#define SV_SHL(x, n) _mm_slli_epi32((x), (n))
#define SV_KEY(w) _mm_set1_epi32((int)(w))
/* Four blocks b0..b3 (words w0..w3 each) to x_j = (w_j of b0, b1, b2, b3). */
#define SV_TRANSPOSE(x0, x1, x2, x3)                                            \
    do {                                                                        \
        const __m128i t0 = _mm_unpacklo_epi32(x0, x1), t1 = _mm_unpackhi_epi32(x0, x1); \
        const __m128i t2 = _mm_unpacklo_epi32(x2, x3), t3 = _mm_unpackhi_epi32(x2, x3); \
        x0 = _mm_unpacklo_epi64(t0, t2);                                        \
        x1 = _mm_unpackhi_epi64(t0, t2);                                        \
        x2 = _mm_unpacklo_epi64(t1, t3);                                        \
        x3 = _mm_unpackhi_epi64(t1, t3);                                        \
    } while (0)
#define SV_LOAD(p, x0, x1, x2, x3)                                              \
    do {                                                                        \
        x0 = _mm_loadu_si128((const __m128i *)(const void *)(p));               \
        x1 = _mm_loadu_si128((const __m128i *)(const void *)((p) + 16));        \
        x2 = _mm_loadu_si128((const __m128i *)(const void *)((p) + 32));        \
        x3 = _mm_loadu_si128((const __m128i *)(const void *)((p) + 48));        \
        SV_TRANSPOSE(x0, x1, x2, x3);                                           \
    } while (0)
#define SV_STORE(p, x0, x1, x2, x3)                                             \
    do {                                                                        \
        SV_TRANSPOSE(x0, x1, x2, x3);                                           \
        _mm_storeu_si128((__m128i *)(void *)(p), x0);                           \
        _mm_storeu_si128((__m128i *)(void *)((p) + 16), x1);                    \
        _mm_storeu_si128((__m128i *)(void *)((p) + 32), x2);                    \
        _mm_storeu_si128((__m128i *)(void *)((p) + 48), x3);                    \
    } while (0)

#include "simd_body.h"

static int sse2_available(void)
{
    return __builtin_cpu_supports("sse2");
}

#define SSE2_AVAILABLE sse2_available
#define SSE2_ENCRYPT sv_encrypt
#define SSE2_DECRYPT sv_decrypt
#define SSE2_SET_KEY sv_set_key

#else /* not x86-64: recorded as unavailable; the scalar code stands in */

extern const cl_impl cl_impl_serpent_bitslice;
static int sse2_unavailable(void) { return 0; }
static int sse2_set_key(void *ks, const uint8_t *key, unsigned key_bits)
{
    return cl_impl_serpent_bitslice.set_encrypt_key(ks, key, key_bits);
}
static void sse2_encrypt(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    cl_impl_serpent_bitslice.encrypt(ks, in, out, n);
}
static void sse2_decrypt(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    cl_impl_serpent_bitslice.decrypt(ks, in, out, n);
}
#define SSE2_AVAILABLE sse2_unavailable
#define SSE2_ENCRYPT sse2_encrypt
#define SSE2_DECRYPT sse2_decrypt
#define SSE2_SET_KEY sse2_set_key

#endif

const cl_impl cl_impl_serpent_sse2 = {
    .cipher = "serpent",
    .strategy = "sse2",
    .block_bytes = 16,
    .key_bits = sse2_key_bits,
    .ks_bytes = 33 * 4 * sizeof(uint32_t),
    .table_bytes = 0,
    .available = SSE2_AVAILABLE,
    .set_encrypt_key = SSE2_SET_KEY,
    .set_decrypt_key = SSE2_SET_KEY,
    .encrypt = SSE2_ENCRYPT,
    .decrypt = SSE2_DECRYPT,
    .init_hook = NULL,
};

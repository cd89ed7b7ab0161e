/*
 * serpent/avx512.c -- Serpent bitsliced across blocks, 16 blocks per 512-bit
 * AVX-512 register (see cipherlab.h and simd_body.h).
 *
 * Source: shared/specs/serpent-aes-submission.pdf (cipher p3, bitslice
 * description and linear transformation p5-p6, S-boxes p21).
 *
 * A register loaded from memory holds four blocks, one per 128-bit lane; the
 * 4 x 4 transpose runs inside each lane (vpunpck*), as in avx2.c, and storing
 * applies the same transpose.  AVX-512F has what AVX2 lacks for Serpent: a
 * lane-wise rotation (vprold, one instruction for the ten rotations of the
 * linear transformation instead of three each), three-input boolean gates
 * (vpternlogd: the S-box circuits and the xor chains of the linear
 * transformation merge two or three gates into one), subkey words broadcast
 * by the xor itself ({1to16} memory operands), and 32 registers, so two
 * groups of 16 blocks (32 blocks per step) are interleaved without spills.
 * Then one group of 16, then the scalar code for the last 0..15 blocks.
 * The functions carry __attribute__((target("avx512f"))), so no build flag is
 * needed; available() checks the CPU at run time.  Elsewhere than x86-64 the
 * file compiles to the scalar code and available() returns 0.  Branch-free
 * and table-free.
 */
#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "cipherlab.h"

static const unsigned short avx512_key_bits[] = {128, 192, 256, 0};

#if defined(__x86_64__)

#include <immintrin.h>

#define SV_T __m512i
#define SV_LANES 16
#ifndef SV_GROUPS
#define SV_GROUPS 2
#endif
#define SV_ATTR __attribute__((target("avx512f")))
#define SV_ROTL(x, n) _mm512_rol_epi32((x), (n))
#define SV_SHL(x, n) _mm512_slli_epi32((x), (n))
#define SV_KEY(w) _mm512_set1_epi32((int)(w))
#define SV_TRANSPOSE(x0, x1, x2, x3)                                            \
    do {                                                                        \
        const __m512i t0 = _mm512_unpacklo_epi32(x0, x1), t1 = _mm512_unpackhi_epi32(x0, x1); \
        const __m512i t2 = _mm512_unpacklo_epi32(x2, x3), t3 = _mm512_unpackhi_epi32(x2, x3); \
        x0 = _mm512_unpacklo_epi64(t0, t2);                                     \
        x1 = _mm512_unpackhi_epi64(t0, t2);                                     \
        x2 = _mm512_unpacklo_epi64(t1, t3);                                     \
        x3 = _mm512_unpackhi_epi64(t1, t3);                                     \
    } while (0)
/* Register i holds blocks 4i..4i+3. */
#define SV_LOAD(p, x0, x1, x2, x3)                                              \
    do {                                                                        \
        x0 = _mm512_loadu_si512((const void *)(p));                             \
        x1 = _mm512_loadu_si512((const void *)((p) + 64));                      \
        x2 = _mm512_loadu_si512((const void *)((p) + 128));                     \
        x3 = _mm512_loadu_si512((const void *)((p) + 192));                     \
        SV_TRANSPOSE(x0, x1, x2, x3);                                           \
    } while (0)
#define SV_STORE(p, x0, x1, x2, x3)                                             \
    do {                                                                        \
        SV_TRANSPOSE(x0, x1, x2, x3);                                           \
        _mm512_storeu_si512((void *)(p), x0);                                   \
        _mm512_storeu_si512((void *)((p) + 64), x1);                            \
        _mm512_storeu_si512((void *)((p) + 128), x2);                           \
        _mm512_storeu_si512((void *)((p) + 192), x3);                           \
    } while (0)

#include "simd_body.h"

static int avx512_available(void)
{
    return __builtin_cpu_supports("avx512f");
}

#define AVX512_AVAILABLE avx512_available
#define AVX512_ENCRYPT sv_encrypt
#define AVX512_DECRYPT sv_decrypt
#define AVX512_SET_KEY sv_set_key

#else /* not x86-64: recorded as unavailable; the scalar code stands in */

extern const cl_impl cl_impl_serpent_bitslice;
static int avx512_unavailable(void) { return 0; }
static int avx512_set_key(void *ks, const uint8_t *key, unsigned key_bits)
{
    return cl_impl_serpent_bitslice.set_encrypt_key(ks, key, key_bits);
}
static void avx512_encrypt(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    cl_impl_serpent_bitslice.encrypt(ks, in, out, n);
}
static void avx512_decrypt(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    cl_impl_serpent_bitslice.decrypt(ks, in, out, n);
}
#define AVX512_AVAILABLE avx512_unavailable
#define AVX512_ENCRYPT avx512_encrypt
#define AVX512_DECRYPT avx512_decrypt
#define AVX512_SET_KEY avx512_set_key

#endif

const cl_impl cl_impl_serpent_avx512 = {
    .cipher = "serpent",
    .strategy = "avx512",
    .block_bytes = 16,
    .key_bits = avx512_key_bits,
    .ks_bytes = 33 * 4 * sizeof(uint32_t),
    .table_bytes = 0,
    .available = AVX512_AVAILABLE,
    .set_encrypt_key = AVX512_SET_KEY,
    .set_decrypt_key = AVX512_SET_KEY,
    .encrypt = AVX512_ENCRYPT,
    .decrypt = AVX512_DECRYPT,
    .init_hook = NULL,
};

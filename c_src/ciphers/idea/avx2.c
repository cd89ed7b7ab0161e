/*
 * idea/avx2.c -- IDEA on AVX2: 16 blocks per group (two groups of 8 side by side), 16-bit lanes (idea_simd.h), the rest and
 * 1-block calls through the scalar code of ref.c (idea_core.h).  The functions carry
 * __attribute__((target("avx2"))), so no build flag is needed; available() checks CPUID and XGETBV.  Other
 * architectures compile to a stub whose available() returns 0.
 */
#define IS_IMPL cl_impl_idea_avx2
#define IS_STRATEGY "avx2"

#if defined(__x86_64__)
#include <immintrin.h>

#define IS_V __m256i
#define IS_LANES 16
#define IS_ATTR __attribute__((target("avx2")))
#define IS_LOAD(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define IS_STORE(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), v)
#define IS_SET1(x) _mm256_set1_epi16((short)(x))
#define IS_KEY(p) _mm256_broadcastsi128_si256(_mm_load_si128((const __m128i *)(const void *)(p)))
#define IS_ADD _mm256_add_epi16
#define IS_SUB _mm256_sub_epi16
#define IS_SUBS_U _mm256_subs_epu16
#define IS_MULLO _mm256_mullo_epi16
#define IS_MULHI_U _mm256_mulhi_epu16
#define IS_CMPEQ _mm256_cmpeq_epi16
#define IS_AND _mm256_and_si256
#define IS_OR _mm256_or_si256
#define IS_XOR _mm256_xor_si256
#define IS_SLL _mm256_slli_epi16
#define IS_SRL _mm256_srli_epi16
#define IS_UNPACKLO16 _mm256_unpacklo_epi16
#define IS_UNPACKHI16 _mm256_unpackhi_epi16
#define IS_UNPACKLO32 _mm256_unpacklo_epi32
#define IS_UNPACKHI32 _mm256_unpackhi_epi32
#define IS_UNPACKLO64 _mm256_unpacklo_epi64
#define IS_UNPACKHI64 _mm256_unpackhi_epi64

#include "cl_cpu.h"
static int is_available(void)
{
    return cl_x86_has(0, 1u << 5, 0, CL_XCR0_YMM); /* AVX2 */
}
#define IS_AVAILABLE is_available

#endif

#include "idea_simd.h"

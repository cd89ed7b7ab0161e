/*
 * idea/sse2.c -- IDEA on SSE2: 8 blocks per group, 16-bit lanes (idea_simd.h), the rest and
 * 1-block calls through the scalar code of ref.c (idea_core.h).  The functions carry
 * __attribute__((target("sse2"))), so no build flag is needed; available() asks the CPU.  Other
 * architectures compile to a stub whose available() returns 0.
 */
#define IS_IMPL cl_impl_idea_sse2
#define IS_STRATEGY "sse2"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define IS_V __m128i
#define IS_LANES 8
#define IS_ATTR __attribute__((target("sse2")))
#define IS_LOAD(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define IS_STORE(p, v) _mm_storeu_si128((__m128i *)(void *)(p), v)
#define IS_SET1(x) _mm_set1_epi16((short)(x))
#define IS_KEY(p) _mm_load_si128((const __m128i *)(const void *)(p))
#define IS_ADD _mm_add_epi16
#define IS_SUB _mm_sub_epi16
#define IS_SUBS_U _mm_subs_epu16
#define IS_MULLO _mm_mullo_epi16
#define IS_MULHI_U _mm_mulhi_epu16
#define IS_CMPEQ _mm_cmpeq_epi16
#define IS_AND _mm_and_si128
#define IS_OR _mm_or_si128
#define IS_XOR _mm_xor_si128
#define IS_SLL _mm_slli_epi16
#define IS_SRL _mm_srli_epi16
#define IS_UNPACKLO16 _mm_unpacklo_epi16
#define IS_UNPACKHI16 _mm_unpackhi_epi16
#define IS_UNPACKLO32 _mm_unpacklo_epi32
#define IS_UNPACKHI32 _mm_unpackhi_epi32
#define IS_UNPACKLO64 _mm_unpacklo_epi64
#define IS_UNPACKHI64 _mm_unpackhi_epi64

static int is_available(void)
{
    return __builtin_cpu_supports("sse2");
}
#define IS_AVAILABLE is_available

#endif

#include "idea_simd.h"

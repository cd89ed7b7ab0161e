/*
 * des/bitslice_avx2.c -- bitsliced DES on 256-bit avx2 words: 256 blocks per group (one
 * 64 x 64 bit transpose per 64 of them), the S-boxes as the boolean circuits of
 * des/gen_bitslice.py (des/des_bitslice_sboxes.h), core in des/des_bitslice.h, strategy in
 * des/des_bitslice_body.h.  The functions carry __attribute__((target("avx2"))), so no build
 * flag is needed; available() checks CPUID and XGETBV.  A rest of at least 32 blocks runs as
 * one zero-padded group, smaller rests and 1-block calls the scalar SP-box path.  Other
 * architectures compile to a stub whose available() returns 0.
 */
#include <stdint.h>

#include "cipherlab.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define BS_W __m256i
#define BS_LANES 4
#define BS_ATTR __attribute__((target("avx2")))
#define BS_SPLAT(m) _mm256_set1_epi64x((long long)(m))
#define BS_ANDNOT(a, b) _mm256_andnot_si256((b), (a))
#define BS_SRL64(a, n) _mm256_srli_epi64((a), (int)(n))
#define BS_SLL64(a, n) _mm256_slli_epi64((a), (int)(n))
#define BS_PASSES 1
#define BS_NEED 2
#define BS_PAD_MIN 32 /* a padded group costs less than this many scalar blocks (measured, see README) */
#define BS_IMPL cl_impl_des_bitslice_avx2
#define BS_CIPHER "des"
#define BS_STRATEGY "bitslice_avx2"
#include "des_bitslice_body.h"

#else

static const unsigned short key_bits[] = {64, 0};
static int unavailable(void) { return 0; }
static int no_key(void *ks, const uint8_t *key, unsigned bits)
{
    (void)ks, (void)key, (void)bits;
    return CL_UNAVAILABLE;
}
static void no_crypt(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    (void)ks, (void)in, (void)out, (void)n;
}
const cl_impl cl_impl_des_bitslice_avx2 = {
    .cipher = "des", .strategy = "bitslice_avx2", .block_bytes = 8, .key_bits = key_bits,
    .ks_bytes = 8, .table_bytes = 0, .available = unavailable, .set_encrypt_key = no_key,
    .set_decrypt_key = no_key, .encrypt = no_crypt, .decrypt = no_crypt, .init_hook = NULL};

#endif

/*
 * 3des/bitslice_avx512.c -- bitsliced 3DES (EDE: E_K1 D_K2 E_K3, IP once, IP^-1 once) on 512-bit avx512 words: 512 blocks per group (one
 * 64 x 64 bit transpose per 64 of them), the S-boxes as the boolean circuits of
 * des/gen_bitslice.py (des/des_bitslice_sboxes.h), core in des/des_bitslice.h, strategy in
 * des/des_bitslice_body.h.  The functions carry __attribute__((target("avx2,avx512f"))), so no build
 * flag is needed; available() checks CPUID and XGETBV.  A rest of at least 26 blocks runs as
 * one zero-padded group, smaller rests and 1-block calls the scalar SP-box path.  Other
 * architectures compile to a stub whose available() returns 0.
 */
#include <stdint.h>

#include "cipherlab.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define BS_W __m512i
#define BS_LANES 8
#define BS_ATTR __attribute__((target("avx2,avx512f")))
#define BS_SPLAT(m) _mm512_set1_epi64((long long)(m))
#define BS_ANDNOT(a, b) _mm512_andnot_si512((b), (a))
#define BS_SRL64(a, n) _mm512_srli_epi64((a), (unsigned)(n))
#define BS_SLL64(a, n) _mm512_slli_epi64((a), (unsigned)(n))
#define BS_PASSES 3
#define BS_NEED 512
#define BS_PAD_MIN 26 /* a padded group costs less than this many scalar blocks (measured, see README) */
#define BS_IMPL cl_impl_3des_bitslice_avx512
#define BS_CIPHER "3des"
#define BS_STRATEGY "bitslice_avx512"
#include "../des/des_bitslice_body.h"

#else

static const unsigned short key_bits[] = {192, 0};
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
const cl_impl cl_impl_3des_bitslice_avx512 = {
    .cipher = "3des", .strategy = "bitslice_avx512", .block_bytes = 8, .key_bits = key_bits,
    .ks_bytes = 8, .table_bytes = 0, .available = unavailable, .set_encrypt_key = no_key,
    .set_decrypt_key = no_key, .encrypt = no_crypt, .decrypt = no_crypt, .init_hook = NULL};

#endif

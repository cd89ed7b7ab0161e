/*
 * des_bitslice_body.h -- the cl_impl of a bitsliced DES or 3DES strategy around des_bitslice.h.
 *
 * The including file defines only what differs between the strategies:
 *   BS_PASSES        1 (DES) or 3 (3DES EDE, key K1 || K2 || K3)
 *   BS_NEED          the word (see des_bitslice.h) and the CPU check: 0 = uint64_t, portable, no
 *                    check; 2 = __m256i, AVX2; 512 = __m512i, AVX-512F.  The AVX words are built
 *                    on x86-64 only, their functions carrying __attribute__((target(...))) (no build
 *                    flag needed) and available() checking CPUID and XGETBV; elsewhere the file
 *                    compiles to a stub whose available() returns 0 and whose key setup returns
 *                    CL_UNAVAILABLE
 *   BS_PAD_MIN       the smallest rest run as a zero-padded group (default BS_BLOCKS / 4)
 *   BS_IMPL          the cl_impl symbol, BS_CIPHER and BS_STRATEGY its names
 *
 * The schedule holds both forms: the SP-box round keys of des_core (for the scalar path) and the
 * 16 x 48 masks per pass of the bitsliced path.  An n-block call runs whole groups of BS_BLOCKS
 * blocks bitsliced; a rest of at least BS_PAD_MIN blocks is copied into a zeroed group-sized
 * buffer and run bitsliced too (one group costs less than that many scalar blocks); a smaller
 * rest and 1-block calls (NIST's blocks_per_call: 1) take the scalar SP-box path.  No load or
 * store reaches past the n blocks given.
 */
#ifndef DES_BITSLICE_BODY_H
#define DES_BITSLICE_BODY_H

#include "cipherlab.h"

#if BS_NEED == 0 || defined(__x86_64__)

#if BS_NEED == 0
#define BS_W uint64_t
#define BS_LANES 1
#define BS_ATTR
#define BS_SPLAT(m) (m)
#define BS_ANDNOT(a, b) ((a) & ~(b))
#define BS_SRL64(a, n) ((a) >> (n))
#define BS_SLL64(a, n) ((a) << (n))
#elif BS_NEED == 2
#include <immintrin.h>
#define BS_W __m256i
#define BS_LANES 4
#define BS_ATTR __attribute__((target("avx2")))
#define BS_SPLAT(m) _mm256_set1_epi64x((long long)(m))
#define BS_ANDNOT(a, b) _mm256_andnot_si256((b), (a))
#define BS_SRL64(a, n) _mm256_srli_epi64((a), (int)(n))
#define BS_SLL64(a, n) _mm256_slli_epi64((a), (int)(n))
#elif BS_NEED == 512
#include <immintrin.h>
#define BS_W __m512i
#define BS_LANES 8
#define BS_ATTR __attribute__((target("avx2,avx512f")))
#define BS_SPLAT(m) _mm512_set1_epi64((long long)(m))
#define BS_ANDNOT(a, b) _mm512_andnot_si512((b), (a))
#define BS_SRL64(a, n) _mm512_srli_epi64((a), (unsigned)(n))
#define BS_SLL64(a, n) _mm512_slli_epi64((a), (unsigned)(n))
#else
#error "BS_NEED must be 0, 2 or 512"
#endif

#include "des_core.h"
#include "des_bitslice.h"

#ifndef BS_PAD_MIN
#define BS_PAD_MIN (BS_BLOCKS / 4)
#endif

typedef struct {
    uint64_t km[BS_PASSES * BS_SCHEDULE_MASKS];
    uint32_t sk[BS_PASSES * CL_DES_SCHEDULE_WORDS];
} bs_ks;

static const unsigned short bs_key_bits[] = {64 * BS_PASSES, 0}; /* DES 64, 3DES 192 */

#if BS_NEED != 0
#include "cl_cpu.h"
static int bs_available(void)
{
#if BS_NEED == 2
    return cl_x86_has(0, 1u << 5, 0, CL_XCR0_YMM); /* AVX2 */
#else
    return cl_x86_has(0, 1u << 16, 0, CL_XCR0_ZMM); /* AVX512F */
#endif
}
#define BS_AVAILABLE bs_available
#else
#define BS_AVAILABLE NULL
#endif

/* Pass p of the chain uses key part key_index[p] and runs decryption when dec[p]. */
static int bs_set_key(void *ks_, const uint8_t *key, unsigned bits, int decrypt)
{
    bs_ks *ks = (bs_ks *)ks_;
    if (bits != 64 * BS_PASSES)
        return CL_BAD_KEY_LENGTH;
    for (int p = 0; p < BS_PASSES; p++) {
        /* DES: E_K / D_K.  EDE encryption: E_K1 D_K2 E_K3; decryption: D_K3 E_K2 D_K1. */
        int part = decrypt ? BS_PASSES - 1 - p : p;
        int dec = (p & 1) ? !decrypt : decrypt;
        uint32_t *sk = ks->sk + p * CL_DES_SCHEDULE_WORDS;
        cl_des_key_schedule(sk, key + 8 * part); /* parity bits are ignored */
        if (dec)
            cl_des_reverse_schedule(sk, sk);
        bs_key_masks(ks->km + p * BS_SCHEDULE_MASKS, key + 8 * part, dec);
    }
    return CL_OK;
}

static int bs_set_encrypt_key(void *ks, const uint8_t *key, unsigned bits)
{
    return bs_set_key(ks, key, bits, 0);
}

static int bs_set_decrypt_key(void *ks, const uint8_t *key, unsigned bits)
{
    return bs_set_key(ks, key, bits, 1);
}

/* The scalar SP-box path (as des/spbox.c and 3des/ede.c). */
static void bs_scalar(const uint32_t *sk, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    for (size_t i = 0; i < nblocks; i++, in += 8, out += 8) {
        uint32_t l = cl_load32_be(in), r = cl_load32_be(in + 4);
        cl_des_ip(&l, &r);
        cl_des_rounds(&l, &r, sk);
#if BS_PASSES == 3
        cl_des_rounds(&r, &l, sk + CL_DES_SCHEDULE_WORDS);
        cl_des_rounds(&l, &r, sk + 2 * CL_DES_SCHEDULE_WORDS);
#endif
        cl_des_fp(&r, &l);
        cl_store32_be(out, r);
        cl_store32_be(out + 4, l);
    }
}

BS_ATTR static void bs_crypt(const void *ks_, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    const bs_ks *ks = (const bs_ks *)ks_;
    if (nblocks < BS_PAD_MIN) { /* 1-block calls first, with the fewest branches */
        bs_scalar(ks->sk, in, out, nblocks);
        return;
    }
    for (; nblocks >= BS_BLOCKS; nblocks -= BS_BLOCKS, in += 8 * BS_BLOCKS, out += 8 * BS_BLOCKS)
        bs_crypt_group(ks->km, BS_PASSES, in, out);
    if (nblocks >= BS_PAD_MIN) {
        uint8_t buf[8 * BS_BLOCKS];
        memcpy(buf, in, 8 * nblocks);
        memset(buf + 8 * nblocks, 0, 8 * (BS_BLOCKS - nblocks));
        bs_crypt_group(ks->km, BS_PASSES, buf, buf);
        memcpy(out, buf, 8 * nblocks);
    } else if (nblocks) {
        bs_scalar(ks->sk, in, out, nblocks);
    }
}

#define BS_KS_BYTES sizeof(bs_ks)
#define BS_TABLE_BYTES                                                                            \
    (CL_DES_CORE_TABLE_BYTES + sizeof bs_ip + sizeof bs_e + sizeof bs_p + sizeof bs_pc1 +       \
     sizeof bs_shifts + sizeof bs_pc2)
#define BS_SET_ENCRYPT_KEY bs_set_encrypt_key
#define BS_SET_DECRYPT_KEY bs_set_decrypt_key

#else /* an x86-64 strategy elsewhere: recorded as unavailable */

static const unsigned short bs_key_bits[] = {64 * BS_PASSES, 0};
static int bs_unavailable(void) { return 0; }
static int bs_no_key(void *ks, const uint8_t *key, unsigned bits)
{
    (void)ks, (void)key, (void)bits;
    return CL_UNAVAILABLE;
}
static void bs_crypt(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    (void)ks, (void)in, (void)out, (void)n;
}
#define BS_KS_BYTES 8
#define BS_TABLE_BYTES 0
#define BS_AVAILABLE bs_unavailable
#define BS_SET_ENCRYPT_KEY bs_no_key
#define BS_SET_DECRYPT_KEY bs_no_key

#endif

const cl_impl BS_IMPL = {
    .cipher = BS_CIPHER,
    .strategy = BS_STRATEGY,
    .block_bytes = 8,
    .key_bits = bs_key_bits,
    .ks_bytes = BS_KS_BYTES,
    .table_bytes = BS_TABLE_BYTES,
    .available = BS_AVAILABLE,
    .set_encrypt_key = BS_SET_ENCRYPT_KEY,
    .set_decrypt_key = BS_SET_DECRYPT_KEY,
    .encrypt = bs_crypt,
    .decrypt = bs_crypt,
    .init_hook = NULL,
};

#endif

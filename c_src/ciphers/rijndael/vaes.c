/*
 * rijndael/vaes.c -- AES with VAES on AVX-512 (see cipherlab.h).
 *
 * VAESENC/VAESENCLAST/VAESDEC/VAESDECLAST on a ZMM register do one AES
 * round (the AESENC... of aesni_core.h) on each of its four 128-bit lanes,
 * so one instruction advances four blocks, each lane with its own copy of
 * the round key (the 16-byte key broadcast to the four lanes).  Blocks sit
 * in the lanes in memory order: a 64-byte load is four consecutive blocks,
 * no shuffling.  FIPS-197 (rijndael-fips197.pdf): Cipher Fig. 5 p19,
 * Equivalent Inverse Cipher Fig. 15 p29 -- the lanes do exactly what AES-NI
 * does, so the key schedule (and the decryption keys with AESIMC) is the
 * AES-NI one from aesni_core.h, and so is the layout of the schedule.
 *
 * ECB over n blocks: 32 blocks (8 ZMM registers) per loop iteration to
 * cover the latency of VAESENC with independent work, then one group each
 * of 16, 8 and 4 blocks as the bits of the remainder say, then the last 0..3
 * blocks through the AES-NI code on XMM registers (2 and 1 at a time), so
 * no load or store ever reaches past the n blocks given.  A one-block call
 * (NIST's blocks_per_call: 1) is therefore the AES-NI single-block path.
 *
 * The functions carry __attribute__((target("aes,sse2,avx2,avx512f,vaes"))),
 * so no build flag is needed.  available() checks CPUID (leaf 1: AES,
 * OSXSAVE; leaf 7: AVX512F, VAES) and, with XGETBV, that the OS saves the
 * XMM, YMM, opmask and full ZMM state (XCR0 bits 1, 2, 5, 6, 7).  Other
 * architectures (i386 included) compile to stubs; available() returns 0.
 * No tables; constant time.
 */
#include <stdint.h>
#include <stddef.h>

#include "cipherlab.h"

static const unsigned short rjva_key_bits[] = {128, 192, 256, 0};

#if defined(__x86_64__)

#include "cl_cpu.h"
#include <immintrin.h>

#include "aesni_core.h"

#define RJVA_TARGET __attribute__((target("aes,sse2,avx2,avx512f,vaes")))

static int rjva_available(void)
{
    return cl_x86_has(1u << 25, 1u << 16, 1u << 9, CL_XCR0_ZMM); /* AES; AVX512F; VAES */
}

#define RJVA_LOAD(p) _mm512_loadu_si512((const void *)(p))
#define RJVA_STORE(p, v) _mm512_storeu_si512((void *)(p), v)

/* The register set RJVA of RJNI_BLOCKS_S (aesni_core.h): the four-block registers z0_..z7_,
 * each round key broadcast to the four lanes. */
#define RJVA_V __m512i
#define RJVA_KEY(i) _mm512_broadcast_i32x4(rk_[i])
#define RJVA_DECL_(j, a, b, c) __m512i z##j##_;
#define RJVA_FIRST_(j, in, k, c) z##j##_ = _mm512_xor_si512(RJVA_LOAD((in) + 64 * (j)), k);
#define RJVA_ROUND_(j, ROUND, k, c) z##j##_ = ROUND(z##j##_, k);
#define RJVA_LAST_(j, LAST, k, out) RJVA_STORE((out) + 64 * (j), LAST(z##j##_, k));

/* 4N blocks (N ZMM registers) from in to out. */
#define RJVA_BLOCKS(N, ROUND, LAST, rk, nr, in, out)                                              \
    RJNI_BLOCKS_S(RJVA, N, ROUND, LAST, rk, nr, in, out)

/* Z* are the ZMM instructions, X* the XMM ones for the last 0..3 blocks. */
#define RJVA_ECB(ZROUND, ZLAST, XROUND, XLAST)                                                    \
    do {                                                                                          \
        const rjni_ks *ks = (const rjni_ks *)ks_;                                                 \
        const unsigned nr = ks->nr;                                                               \
        if (nblocks == 1) { /* NIST's blocks_per_call: 1: the AES-NI block, no ZMM touched */     \
            RJNI_BLOCKS(1, XROUND, XLAST, ks->rk, nr, in, out);                                   \
            return;                                                                               \
        }                                                                                         \
        for (; nblocks >= 32; nblocks -= 32, in += 512, out += 512)                               \
            RJVA_BLOCKS(8, ZROUND, ZLAST, ks->rk, nr, in, out);                                   \
        if (nblocks & 16) {                                                                       \
            RJVA_BLOCKS(4, ZROUND, ZLAST, ks->rk, nr, in, out);                                   \
            in += 256, out += 256;                                                                \
        }                                                                                         \
        if (nblocks & 8) {                                                                        \
            RJVA_BLOCKS(2, ZROUND, ZLAST, ks->rk, nr, in, out);                                   \
            in += 128, out += 128;                                                                \
        }                                                                                         \
        if (nblocks & 4) {                                                                        \
            RJVA_BLOCKS(1, ZROUND, ZLAST, ks->rk, nr, in, out);                                   \
            in += 64, out += 64;                                                                  \
        }                                                                                         \
        nblocks &= 3;                                                                             \
        RJNI_TAIL(XROUND, XLAST, ks->rk, nr, in, out, nblocks);                                   \
    } while (0)

RJVA_TARGET static void rjva_encrypt(const void *ks_, const uint8_t *in, uint8_t *out,
                                     size_t nblocks)
{
    RJVA_ECB(_mm512_aesenc_epi128, _mm512_aesenclast_epi128, _mm_aesenc_si128,
             _mm_aesenclast_si128);
}

RJVA_TARGET static void rjva_decrypt(const void *ks_, const uint8_t *in, uint8_t *out,
                                     size_t nblocks)
{
    RJVA_ECB(_mm512_aesdec_epi128, _mm512_aesdeclast_epi128, _mm_aesdec_si128,
             _mm_aesdeclast_si128);
}

#define RJVA_KS_BYTES sizeof(rjni_ks)
#define RJVA_AVAILABLE rjva_available
#define RJVA_SET_ENCRYPT_KEY rjni_set_encrypt_key
#define RJVA_SET_DECRYPT_KEY rjni_set_decrypt_key

#else /* not x86-64: this implementation is recorded as unavailable */

static int rjva_unavailable(void) { return 0; }

static int rjva_set_key(void *ks, const uint8_t *key, unsigned key_bits)
{
    (void)ks, (void)key, (void)key_bits;
    return CL_UNAVAILABLE;
}

static void rjva_encrypt(const void *ks, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    (void)ks, (void)in, (void)out, (void)nblocks;
}

static void rjva_decrypt(const void *ks, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    (void)ks, (void)in, (void)out, (void)nblocks;
}

#define RJVA_KS_BYTES ((size_t)256)
#define RJVA_AVAILABLE rjva_unavailable
#define RJVA_SET_ENCRYPT_KEY rjva_set_key
#define RJVA_SET_DECRYPT_KEY rjva_set_key

#endif

const cl_impl cl_impl_rijndael_vaes = {
    .cipher = "rijndael",
    .strategy = "vaes",
    .block_bytes = 16,
    .key_bits = rjva_key_bits,
    .ks_bytes = RJVA_KS_BYTES,
    .table_bytes = 0,
    .available = RJVA_AVAILABLE,
    .set_encrypt_key = RJVA_SET_ENCRYPT_KEY,
    .set_decrypt_key = RJVA_SET_DECRYPT_KEY,
    .encrypt = rjva_encrypt,
    .decrypt = rjva_decrypt,
    .init_hook = NULL,
};

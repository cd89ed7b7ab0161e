/*
 * rijndael/aesni.c -- AES with the x86 AES-NI instructions (see cipherlab.h).
 *
 * The key schedule (AESKEYGENASSIST, AESIMC) and the round sequence are in
 * aesni_core.h, shared with vaes.c; the algorithm notes are there.
 *
 * The functions carry __attribute__((target("aes,sse2"))), so no -maes flag
 * is needed; available() checks the CPU at run time.  On other architectures
 * the file compiles to stubs and available() returns 0.
 *
 * ECB over n blocks runs 8 independent blocks at a time on x86-64 (4 on
 * i386, which has only 8 XMM registers) to fill the AES unit's pipeline,
 * then 4, 2 and 1.  Every group has its rounds written out (no loop over
 * the rounds), so a one-block call is the straight sequence of AESENC with
 * their keys as memory operands.  No tables; constant time.
 */
#include <stdint.h>
#include <stddef.h>

#include "cipherlab.h"

static const unsigned short rjni_key_bits[] = {128, 192, 256, 0};

#if defined(__x86_64__) || defined(__i386__)

#include "aesni_core.h"

#if defined(__x86_64__)
#define RJNI_PAR 8
#else
#define RJNI_PAR 4
#endif

static int rjni_available(void)
{
    return __builtin_cpu_supports("sse2") && __builtin_cpu_supports("aes");
}

/* The same code for both directions: ROUND/LAST are the AES instructions. */
#define RJNI_ECB(ROUND, LAST)                                                                     \
    do {                                                                                          \
        const rjni_ks *ks = (const rjni_ks *)ks_;                                                 \
        const unsigned nr = ks->nr;                                                               \
        if (nblocks == 1) { /* NIST's blocks_per_call: 1, first and with the fewest branches */   \
            RJNI_BLOCKS(1, ROUND, LAST, ks->rk, nr, in, out);                                     \
            return;                                                                               \
        }                                                                                         \
        for (; nblocks >= RJNI_PAR; nblocks -= RJNI_PAR, in += 16 * RJNI_PAR,                     \
                                    out += 16 * RJNI_PAR)                                         \
            RJNI_BLOCKS(RJNI_PAR, ROUND, LAST, ks->rk, nr, in, out);                              \
        RJNI_TAIL(ROUND, LAST, ks->rk, nr, in, out, nblocks);                                     \
    } while (0)

RJNI_TARGET static void rjni_encrypt(const void *ks_, const uint8_t *in, uint8_t *out,
                                     size_t nblocks)
{
    RJNI_ECB(_mm_aesenc_si128, _mm_aesenclast_si128);
}

RJNI_TARGET static void rjni_decrypt(const void *ks_, const uint8_t *in, uint8_t *out,
                                     size_t nblocks)
{
    RJNI_ECB(_mm_aesdec_si128, _mm_aesdeclast_si128);
}

#define RJNI_KS_BYTES sizeof(rjni_ks)
#define RJNI_AVAILABLE rjni_available

#else /* not x86: this implementation is recorded as unavailable */

static int rjni_unavailable(void) { return 0; }

static int rjni_set_encrypt_key(void *ks, const uint8_t *key, unsigned key_bits)
{
    (void)ks, (void)key, (void)key_bits;
    return CL_UNAVAILABLE;
}

static int rjni_set_decrypt_key(void *ks, const uint8_t *key, unsigned key_bits)
{
    (void)ks, (void)key, (void)key_bits;
    return CL_UNAVAILABLE;
}

static void rjni_encrypt(const void *ks, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    (void)ks, (void)in, (void)out, (void)nblocks;
}

static void rjni_decrypt(const void *ks, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    (void)ks, (void)in, (void)out, (void)nblocks;
}

#define RJNI_KS_BYTES ((size_t)256)
#define RJNI_AVAILABLE rjni_unavailable

#endif

const cl_impl cl_impl_rijndael_aesni = {
    .cipher = "rijndael",
    .strategy = "aesni",
    .block_bytes = 16,
    .key_bits = rjni_key_bits,
    .ks_bytes = RJNI_KS_BYTES,
    .table_bytes = 0,
    .available = RJNI_AVAILABLE,
    .set_encrypt_key = rjni_set_encrypt_key,
    .set_decrypt_key = rjni_set_decrypt_key,
    .encrypt = rjni_encrypt,
    .decrypt = rjni_decrypt,
    .init_hook = NULL,
};

/*
 * rijndael/aesni_core.h -- what the AES-NI strategies (aesni.c, vaes.c)
 * share: the key schedule layout, the key expansion with AESKEYGENASSIST,
 * the decryption keys with AESIMC, and the fully unrolled N-block round
 * sequence (RJNI_BLOCKS_S, on XMM registers here and ZMM ones in vaes.c).  x86 only: include it inside
 * #if defined(__x86_64__) || defined(__i386__).
 *
 * Algorithm: FIPS-197 (rijndael-fips197.pdf, PDF pages): KeyExpansion Fig. 11
 * p24, Cipher Fig. 5 p19, Equivalent Inverse Cipher Fig. 15 p29.  The
 * instructions do one round each: AESENC = ShiftRows, SubBytes, MixColumns,
 * AddRoundKey; AESENCLAST without MixColumns; AESDEC/AESDECLAST the rounds of
 * the equivalent inverse cipher; AESIMC = InvMixColumns (for the decryption
 * round keys 1..Nr-1, as Fig. 15 prescribes); AESKEYGENASSIST(x, rcon) gives
 * SubWord(x1), RotWord(SubWord(x1)) ^ rcon, SubWord(x3), RotWord(SubWord(x3))
 * ^ rcon for the 32-bit lanes x1, x3 of x.  An XMM register holds the 16
 * state bytes in FIPS-197 order (byte 0 in the low lane), so blocks and keys
 * are loaded as they are, with no byte-order conversion.
 *
 * Every function carries __attribute__((target("aes,sse2"))), so no -maes
 * flag is needed; a caller with a wider target (vaes.c: AVX-512 + VAES)
 * inlines them, since its target includes "aes" and "sse2".
 */
#ifndef RIJNDAEL_AESNI_CORE_H
#define RIJNDAEL_AESNI_CORE_H

#include <stdint.h>
#include <stddef.h>

#include <emmintrin.h>
#include <wmmintrin.h>

#include "cipherlab.h"

#define RJNI_TARGET __attribute__((target("aes,sse2")))

typedef struct {
    __m128i rk[15]; /* Nr + 1 round keys, Nr <= 14 */
    unsigned nr;
} rjni_ks;

/* x ^ (x << 32) ^ (x << 64) ^ (x << 96): the running xor w[i-Nk] ^ ... of
 * Fig. 11 over the four words of one register (word 0 in the low lane). */
RJNI_TARGET static inline __m128i rjni_prefix_xor(__m128i x)
{
    x = _mm_xor_si128(x, _mm_slli_si128(x, 4));
    return _mm_xor_si128(x, _mm_slli_si128(x, 8));
}

/* Rcon[i] = x^(i-1) in GF(2^8) (FIPS-197 p23): 01 02 04 08 10 20 40 80 1b 36. */

/* One AES-128 step: the next four words from the previous four. */
#define RJNI_128(prev, rcon)                                                                      \
    _mm_xor_si128(rjni_prefix_xor(prev),                                                          \
                  _mm_shuffle_epi32(_mm_aeskeygenassist_si128(prev, rcon), 0xff))

RJNI_TARGET static void rjni_expand128(__m128i *rk, const uint8_t *key)
{
    rk[0] = _mm_loadu_si128((const __m128i *)(const void *)key);
    rk[1] = RJNI_128(rk[0], 0x01);
    rk[2] = RJNI_128(rk[1], 0x02);
    rk[3] = RJNI_128(rk[2], 0x04);
    rk[4] = RJNI_128(rk[3], 0x08);
    rk[5] = RJNI_128(rk[4], 0x10);
    rk[6] = RJNI_128(rk[5], 0x20);
    rk[7] = RJNI_128(rk[6], 0x40);
    rk[8] = RJNI_128(rk[7], 0x80);
    rk[9] = RJNI_128(rk[8], 0x1b);
    rk[10] = RJNI_128(rk[9], 0x36);
}

/* AES-192: a = words 6i..6i+3, b = words 6i+4, 6i+5 (low two lanes).  The
 * next six words: a' = prefix_xor(a) ^ SubWord(RotWord(w[6i+5])) ^ Rcon
 * (lane 1 of the assist on b), then w[6i+10] = w[6i+4] ^ w[6i+9] and
 * w[6i+11] = w[6i+5] ^ w[6i+10], i.e. b' = b ^ (b << 32) ^ broadcast(a'[3])
 * in the low lanes.  The words are collected in a byte buffer and reloaded
 * as 13 round keys of four words. */
#define RJNI_192(rcon)                                                                            \
    do {                                                                                          \
        __m128i t_ = _mm_shuffle_epi32(_mm_aeskeygenassist_si128(b, rcon), 0x55);                 \
        a = _mm_xor_si128(rjni_prefix_xor(a), t_);                                                \
        b = _mm_xor_si128(_mm_xor_si128(b, _mm_slli_si128(b, 4)), _mm_shuffle_epi32(a, 0xff));    \
        p += 24;                                                                                  \
        _mm_storeu_si128((__m128i *)(void *)p, a);                                                \
        _mm_storel_epi64((__m128i *)(void *)(p + 16), b);                                         \
    } while (0)

RJNI_TARGET static void rjni_expand192(__m128i *rk, const uint8_t *key)
{
    uint8_t buf[9 * 24]; /* 54 words; 52 are used */
    uint8_t *p = buf;
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)key);
    __m128i b = _mm_loadl_epi64((const __m128i *)(const void *)(key + 16));
    _mm_storeu_si128((__m128i *)(void *)p, a);
    _mm_storel_epi64((__m128i *)(void *)(p + 16), b);
    RJNI_192(0x01);
    RJNI_192(0x02);
    RJNI_192(0x04);
    RJNI_192(0x08);
    RJNI_192(0x10);
    RJNI_192(0x20);
    RJNI_192(0x40);
    RJNI_192(0x80);
    for (int i = 0; i < 13; i++)
        rk[i] = _mm_loadu_si128((const __m128i *)(const void *)(buf + 16 * i));
}

/* AES-256: even round keys from the previous even one and
 * SubWord(RotWord(w[i-1])) ^ Rcon (lane 3 of the assist on the odd key);
 * odd ones with SubWord(w[i-1]) (lane 2 of the assist on the even key). */
#define RJNI_256(i, rcon)                                                                         \
    do {                                                                                          \
        rk[2 * (i)] = _mm_xor_si128(                                                              \
            rjni_prefix_xor(rk[2 * (i) - 2]),                                                     \
            _mm_shuffle_epi32(_mm_aeskeygenassist_si128(rk[2 * (i) - 1], rcon), 0xff));           \
        if ((i) < 7)                                                                              \
            rk[2 * (i) + 1] = _mm_xor_si128(                                                      \
                rjni_prefix_xor(rk[2 * (i) - 1]),                                                 \
                _mm_shuffle_epi32(_mm_aeskeygenassist_si128(rk[2 * (i)], 0x00), 0xaa));           \
    } while (0)

RJNI_TARGET static void rjni_expand256(__m128i *rk, const uint8_t *key)
{
    rk[0] = _mm_loadu_si128((const __m128i *)(const void *)key);
    rk[1] = _mm_loadu_si128((const __m128i *)(const void *)(key + 16));
    RJNI_256(1, 0x01);
    RJNI_256(2, 0x02);
    RJNI_256(3, 0x04);
    RJNI_256(4, 0x08);
    RJNI_256(5, 0x10);
    RJNI_256(6, 0x20);
    RJNI_256(7, 0x40);
}

RJNI_TARGET static int rjni_set_encrypt_key(void *ks_, const uint8_t *key, unsigned key_bits)
{
    rjni_ks *ks = (rjni_ks *)ks_;
    switch (key_bits) {
    case 128: rjni_expand128(ks->rk, key); ks->nr = 10; break;
    case 192: rjni_expand192(ks->rk, key); ks->nr = 12; break;
    case 256: rjni_expand256(ks->rk, key); ks->nr = 14; break;
    default: return CL_BAD_KEY_LENGTH;
    }
    return CL_OK;
}

/* Equivalent inverse cipher keys (Fig. 15): reversed, InvMixColumns on 1..Nr-1. */
RJNI_TARGET static int rjni_set_decrypt_key(void *ks_, const uint8_t *key, unsigned key_bits)
{
    rjni_ks *ks = (rjni_ks *)ks_;
    __m128i ek[15];
    switch (key_bits) {
    case 128: rjni_expand128(ek, key); ks->nr = 10; break;
    case 192: rjni_expand192(ek, key); ks->nr = 12; break;
    case 256: rjni_expand256(ek, key); ks->nr = 14; break;
    default: return CL_BAD_KEY_LENGTH;
    }
    unsigned nr = ks->nr;
    ks->rk[0] = ek[nr];
    for (unsigned i = 1; i < nr; i++)
        ks->rk[i] = _mm_aesimc_si128(ek[nr - i]);
    ks->rk[nr] = ek[0];
    return CL_OK;
}

#define RJNI_LOAD(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define RJNI_STORE(p, v) _mm_storeu_si128((__m128i *)(void *)(p), v)

/* M(j, a, b, c) for the blocks j = 0..N-1 (N = 1, 2, 4, 8): the blocks are
 * named variables x0_..x7_, not an array, so that gcc keeps them in
 * registers across the Nr tests (with an array it stored the four blocks of
 * the 4-block group to the stack before the test and reloaded them). */
#define RJNI_EACH1(M, a, b, c) M(0, a, b, c)
#define RJNI_EACH2(M, a, b, c) RJNI_EACH1(M, a, b, c) M(1, a, b, c)
#define RJNI_EACH4(M, a, b, c) RJNI_EACH2(M, a, b, c) M(2, a, b, c) M(3, a, b, c)
#define RJNI_EACH8(M, a, b, c) RJNI_EACH4(M, a, b, c) M(4, a, b, c) M(5, a, b, c) M(6, a, b, c) M(7, a, b, c)

#define RJNI_EACH(N, M, a, b, c) RJNI_EACH_(N, M, a, b, c) /* expands N first */
#define RJNI_EACH_(N, M, a, b, c) RJNI_EACH##N(M, a, b, c)

/* The register set of N blocks S (a prefix): S##_V the register type, S##_KEY(i) round key i
 * (of const __m128i *rk_) as one register, S##_DECL_, S##_FIRST_, S##_ROUND_ and S##_LAST_ the
 * per-register steps for RJNI_EACH.  RJNI: one block per XMM register; vaes.c's RJVA: four
 * blocks per ZMM register. */
#define RJNI_V __m128i
#define RJNI_KEY(i) rk_[i]
#define RJNI_DECL_(j, a, b, c) __m128i x##j##_;
#define RJNI_FIRST_(j, in, k, c) x##j##_ = _mm_xor_si128(RJNI_LOAD((in) + 16 * (j)), k);
#define RJNI_ROUND_(j, ROUND, k, c) x##j##_ = ROUND(x##j##_, k);
#define RJNI_LAST_(j, LAST, k, out) RJNI_STORE((out) + 16 * (j), LAST(x##j##_, k));

/* One round (key i) on the N registers of set S: the key is read once. */
#define RJNI_RND_S(S, N, ROUND, i)                                                                \
    do {                                                                                          \
        const S##_V k_ = S##_KEY(i);                                                              \
        RJNI_EACH(N, S##_ROUND_, ROUND, k_, ~)                                                    \
    } while (0)

/* N independent registers of set S from in to out, with the rounds written out: rounds
 * 1..9 always, 10..11 when Nr >= 12, 12..13 when Nr = 14.  No loop over the
 * rounds (its counter, compare and branch per round cost as much as the
 * AESENC at one block per call), and the two Nr tests are the same every
 * call, so they are predicted. */
#define RJNI_BLOCKS_S(S, N, ROUND, LAST, rk, nr, in, out)                                         \
    do {                                                                                          \
        const __m128i *const rk_ = (rk);                                                          \
        const unsigned nr_ = (nr);                                                                \
        RJNI_EACH(N, S##_DECL_, ~, ~, ~)                                                          \
        const S##_V k0_ = S##_KEY(0);                                                             \
        RJNI_EACH(N, S##_FIRST_, in, k0_, ~)                                                      \
        RJNI_RND_S(S, N, ROUND, 1);                                                               \
        RJNI_RND_S(S, N, ROUND, 2);                                                               \
        RJNI_RND_S(S, N, ROUND, 3);                                                               \
        RJNI_RND_S(S, N, ROUND, 4);                                                               \
        RJNI_RND_S(S, N, ROUND, 5);                                                               \
        RJNI_RND_S(S, N, ROUND, 6);                                                               \
        RJNI_RND_S(S, N, ROUND, 7);                                                               \
        RJNI_RND_S(S, N, ROUND, 8);                                                               \
        RJNI_RND_S(S, N, ROUND, 9);                                                               \
        if (nr_ > 10) {                                                                           \
            RJNI_RND_S(S, N, ROUND, 10);                                                          \
            RJNI_RND_S(S, N, ROUND, 11);                                                          \
            if (nr_ > 12) {                                                                       \
                RJNI_RND_S(S, N, ROUND, 12);                                                      \
                RJNI_RND_S(S, N, ROUND, 13);                                                      \
            }                                                                                     \
        }                                                                                         \
        const S##_V kl_ = S##_KEY(nr_);                                                           \
        RJNI_EACH(N, S##_LAST_, LAST, kl_, out)                                                   \
    } while (0)

/* N blocks (N = 1, 2, 4, 8) on XMM registers. */
#define RJNI_BLOCKS(N, ROUND, LAST, rk, nr, in, out)                                              \
    RJNI_BLOCKS_S(RJNI, N, ROUND, LAST, rk, nr, in, out)

/* Fewer than 8 blocks: 4, 2 and 1 at a time (at most three groups). */
#define RJNI_TAIL(ROUND, LAST, rk, nr, in, out, nblocks)                                          \
    do {                                                                                          \
        if ((nblocks) & 4) {                                                                      \
            RJNI_BLOCKS(4, ROUND, LAST, rk, nr, in, out);                                         \
            (in) += 64, (out) += 64;                                                              \
        }                                                                                         \
        if ((nblocks) & 2) {                                                                      \
            RJNI_BLOCKS(2, ROUND, LAST, rk, nr, in, out);                                         \
            (in) += 32, (out) += 32;                                                              \
        }                                                                                         \
        if ((nblocks) & 1)                                                                        \
            RJNI_BLOCKS(1, ROUND, LAST, rk, nr, in, out);                                         \
    } while (0)

#endif

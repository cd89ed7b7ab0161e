/*
 * rijndael/aesni.c -- AES with the x86 AES-NI instructions (see cipherlab.h).
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
 * The functions carry __attribute__((target("aes,sse2"))), so no -maes flag
 * is needed; available() checks the CPU at run time.  On other architectures
 * the file compiles to stubs and available() returns 0.
 *
 * ECB over n blocks runs 8 independent blocks at a time on x86-64 (4 on
 * i386, which has only 8 XMM registers) to fill the AES unit's pipeline,
 * then the remaining blocks one by one.  No tables; constant time.
 */
#include <stdint.h>
#include <stddef.h>

#include "cipherlab.h"

static const unsigned short rjni_key_bits[] = {128, 192, 256, 0};

#if defined(__x86_64__) || defined(__i386__)

#include <emmintrin.h>
#include <wmmintrin.h>

#define RJNI_TARGET __attribute__((target("aes,sse2")))

#if defined(__x86_64__)
#define RJNI_PAR 8
#else
#define RJNI_PAR 4
#endif

typedef struct {
    __m128i rk[15]; /* Nr + 1 round keys, Nr <= 14 */
    unsigned nr;
} rjni_ks;

static int rjni_available(void)
{
    return __builtin_cpu_supports("sse2") && __builtin_cpu_supports("aes");
}

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

/* The same loop for both directions: ROUND/LAST are the AES instructions. */
#define RJNI_ECB(ROUND, LAST)                                                                     \
    do {                                                                                          \
        const rjni_ks *ks = (const rjni_ks *)ks_;                                                 \
        const __m128i *const rk = ks->rk;                                                         \
        const unsigned nr = ks->nr;                                                               \
        for (; nblocks >= RJNI_PAR; nblocks -= RJNI_PAR, in += 16 * RJNI_PAR,                     \
                                    out += 16 * RJNI_PAR) {                                       \
            __m128i x[RJNI_PAR];                                                                  \
            __m128i k = rk[0];                                                                    \
            for (int j = 0; j < RJNI_PAR; j++)                                                    \
                x[j] = _mm_xor_si128(RJNI_LOAD(in + 16 * j), k);                                  \
            for (unsigned r = 1; r < nr; r++) {                                                   \
                k = rk[r];                                                                        \
                for (int j = 0; j < RJNI_PAR; j++)                                                \
                    x[j] = ROUND(x[j], k);                                                        \
            }                                                                                     \
            k = rk[nr];                                                                           \
            for (int j = 0; j < RJNI_PAR; j++)                                                    \
                RJNI_STORE(out + 16 * j, LAST(x[j], k));                                          \
        }                                                                                         \
        for (; nblocks; nblocks--, in += 16, out += 16) {                                         \
            __m128i x = _mm_xor_si128(RJNI_LOAD(in), rk[0]);                                      \
            for (unsigned r = 1; r < nr; r++)                                                     \
                x = ROUND(x, rk[r]);                                                              \
            RJNI_STORE(out, LAST(x, rk[nr]));                                                     \
        }                                                                                         \
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

/*
 * rc6/ref.c -- RC6-32/20/b, straightforward 32-bit C (see cipherlab.h).
 *
 * Written from Rivest, Robshaw, Sidney, Yin, "The RC6 Block Cipher" v1.1
 * (Aug 20 1998), ../../../../shared/specs/rc6-v1.1-rsa1998.pdf:
 *   - byte order: first byte of the block in the least significant byte of A,
 *     last byte in the most significant byte of D (p3) -> little-endian words;
 *   - encryption p3, decryption p5;
 *   - key schedule (L[] loaded little-endian, P32/Q32, v = 3*max(c, 2r+4)
 *     mixing steps) p20-p21.
 * No tables; the 20 rounds are unrolled with the register renaming
 * (A,B,C,D) = (B,C,D,A) done by the macro arguments, so there are no moves.
 * Data-dependent rotations are constant time on every CPU the lab targets.
 */
#include <stdint.h>
#include <stddef.h>

#include "cipherlab.h"
#include "cl_bytes.h"

#define RC6_ROUNDS 20
#define RC6_KS_WORDS (2 * RC6_ROUNDS + 4) /* S[0 .. 2r+3] = 44 words */

#define RC6_P32 0xB7E15163u /* p21 */
#define RC6_Q32 0x9E3779B9u /* p21 */

typedef struct {
    uint32_t S[RC6_KS_WORDS];
} rc6_ks;

static const unsigned short rc6_key_bits[] = {128, 192, 256, 0};

/* Key schedule, p20-p21.  Encryption and decryption use the same S[]. */
static int rc6_set_key(void *ks, const uint8_t *key, unsigned key_bits)
{
    if (key_bits != 128 && key_bits != 192 && key_bits != 256)
        return CL_BAD_KEY_LENGTH;
    uint32_t *S = ((rc6_ks *)ks)->S;
    uint32_t L[8];
    unsigned c = key_bits / 32;
    for (unsigned k = 0; k < c; k++)
        L[k] = cl_load32_le(key + 4 * k);

    S[0] = RC6_P32;
    for (unsigned k = 1; k < RC6_KS_WORDS; k++)
        S[k] = S[k - 1] + RC6_Q32;

    uint32_t A = 0, B = 0;
    unsigned i = 0, j = 0;
    unsigned v = 3 * (c > RC6_KS_WORDS ? c : RC6_KS_WORDS);
    for (unsigned s = 1; s <= v; s++) {
        A = S[i] = cl_rotl32(S[i] + A + B, 3);
        B = L[j] = cl_rotl32(L[j] + A + B, A + B);
        if (++i == RC6_KS_WORDS)
            i = 0;
        if (++j == c)
            j = 0;
    }
    return CL_OK;
}

/* x <<< n and x >>> n for a count already in 0..31.  The rounds pass the
 * top five bits of the product, f(X) >> 27, which equal (f(X) <<< 5) mod 32
 * = lg w bits of t (or u) as p3 asks, so the count is explicit and needs no
 * mask (measured neutral on its own; the gain is the product form below).
 * Plain C, any byte order. */
static inline uint32_t rc6_rotl(uint32_t x, uint32_t n)
{
    return (x << n) | (x >> ((32 - n) & 31));
}
static inline uint32_t rc6_rotr(uint32_t x, uint32_t n)
{
    return (x >> n) | (x << ((32 - n) & 31));
}

/* One encryption round i (p3), with the registers named by the caller:
 * t = (B*(2B+1)) <<< 5, u = (D*(2D+1)) <<< 5,
 * the product written as 2*B*B + B: one multiply of B by itself, then an
 * add; from B*(2*B+1) gcc emits a three-operand lea 1(B,B) (2-3 cycles on
 * current x86) in front of the multiply, on the critical path (gcc 12:
 * 10.0 -> 7.9 ticks/B; clang unchanged),
 * A = ((A^t) <<< u) + S[2i], C = ((C^u) <<< t) + S[2i+1]. */
#define RC6_ENC_ROUND(A, B, C, D, i)                                 \
    do {                                                             \
        uint32_t mb_ = B * B, md_ = D * D;                           \
        mb_ = mb_ + mb_ + B;                                         \
        md_ = md_ + md_ + D;                                         \
        uint32_t t_ = cl_rotl32(mb_, 5), u_ = cl_rotl32(md_, 5);     \
        A = rc6_rotl(A ^ t_, md_ >> 27) + S[2 * (i)];                \
        C = rc6_rotl(C ^ u_, mb_ >> 27) + S[2 * (i) + 1];            \
    } while (0)

/* Inverse of round i (p5), applied to the same register naming:
 * C = ((C - S[2i+1]) >>> t) ^ u, A = ((A - S[2i]) >>> u) ^ t. */
#define RC6_DEC_ROUND(A, B, C, D, i)                                 \
    do {                                                             \
        uint32_t mb_ = B * B, md_ = D * D;                           \
        mb_ = mb_ + mb_ + B;                                         \
        md_ = md_ + md_ + D;                                         \
        uint32_t t_ = cl_rotl32(mb_, 5), u_ = cl_rotl32(md_, 5);     \
        C = rc6_rotr(C - S[2 * (i) + 1], mb_ >> 27) ^ u_;            \
        A = rc6_rotr(A - S[2 * (i)], md_ >> 27) ^ t_;                \
    } while (0)

/* Four rounds return the register names to their starting roles. */
#define RC6_ENC4(i)                                                  \
    RC6_ENC_ROUND(a, b, c, d, (i) + 0);                              \
    RC6_ENC_ROUND(b, c, d, a, (i) + 1);                              \
    RC6_ENC_ROUND(c, d, a, b, (i) + 2);                              \
    RC6_ENC_ROUND(d, a, b, c, (i) + 3)

#define RC6_DEC4(i)                                                  \
    RC6_DEC_ROUND(d, a, b, c, (i) + 3);                              \
    RC6_DEC_ROUND(c, d, a, b, (i) + 2);                              \
    RC6_DEC_ROUND(b, c, d, a, (i) + 1);                              \
    RC6_DEC_ROUND(a, b, c, d, (i) + 0)

static void rc6_encrypt(const void *ks, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    const uint32_t *const S = ((const rc6_ks *)ks)->S;
    for (; nblocks; nblocks--, in += 16, out += 16) {
        uint32_t a = cl_load32_le(in), b = cl_load32_le(in + 4);
        uint32_t c = cl_load32_le(in + 8), d = cl_load32_le(in + 12);
        b += S[0];
        d += S[1];
        RC6_ENC4(1);
        RC6_ENC4(5);
        RC6_ENC4(9);
        RC6_ENC4(13);
        RC6_ENC4(17);
        a += S[2 * RC6_ROUNDS + 2];
        c += S[2 * RC6_ROUNDS + 3];
        cl_store32_le(out, a);
        cl_store32_le(out + 4, b);
        cl_store32_le(out + 8, c);
        cl_store32_le(out + 12, d);
    }
}

static void rc6_decrypt(const void *ks, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    const uint32_t *const S = ((const rc6_ks *)ks)->S;
    for (; nblocks; nblocks--, in += 16, out += 16) {
        uint32_t a = cl_load32_le(in), b = cl_load32_le(in + 4);
        uint32_t c = cl_load32_le(in + 8), d = cl_load32_le(in + 12);
        c -= S[2 * RC6_ROUNDS + 3];
        a -= S[2 * RC6_ROUNDS + 2];
        RC6_DEC4(17);
        RC6_DEC4(13);
        RC6_DEC4(9);
        RC6_DEC4(5);
        RC6_DEC4(1);
        d -= S[1];
        b -= S[0];
        cl_store32_le(out, a);
        cl_store32_le(out + 4, b);
        cl_store32_le(out + 8, c);
        cl_store32_le(out + 12, d);
    }
}

const cl_impl cl_impl_rc6_ref = {
    .cipher = "rc6",
    .strategy = "ref",
    .block_bytes = 16,
    .key_bits = rc6_key_bits,
    .ks_bytes = sizeof(rc6_ks),
    .table_bytes = 0,
    .available = NULL,
    .set_encrypt_key = rc6_set_key,
    .set_decrypt_key = rc6_set_key,
    .encrypt = rc6_encrypt,
    .decrypt = rc6_decrypt,
    .init_hook = NULL,
};

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
 * The schedule keeps W[k] = 2*S[k] + 1 beside S[] for the encryption rounds.
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
    uint32_t W[RC6_KS_WORDS]; /* 2*S[k] + 1: see RC6_ENC_ROUND */
} rc6_ks;

static const unsigned short rc6_key_bits[] = {128, 192, 256, 0};

/* v = 3 * max(c, 2r+4) mixing steps (p21), c key words.  Called with c a
 * constant (4, 6 or 8), so the compiler keeps L[] in registers: a word is
 * stored and read back c steps later, which through memory put RC6's key
 * setup in per-process speed groups 2-3 % apart (docs/measurement.md). */
static inline __attribute__((always_inline)) void rc6_mix(uint32_t *S, uint32_t *L, unsigned c)
{
    uint32_t A = 0, B = 0;
    unsigned i = 0;
    const unsigned v = 3 * (c > RC6_KS_WORDS ? c : RC6_KS_WORDS);
#define RC6_MIX_STEP(j)                            \
    do {                                           \
        A = S[i] = cl_rotl32(S[i] + A + B, 3);     \
        B = L[j] = cl_rotl32(L[j] + A + B, A + B); \
        i = i + 1 == RC6_KS_WORDS ? 0 : i + 1;     \
    } while (0)
    unsigned s = 0;
    for (; s + c <= v; s += c) /* whole passes over L[]: j a constant after unrolling */
        for (unsigned j = 0; j < c; j++)
            RC6_MIX_STEP(j);
    for (unsigned j = 0; s < v; s++, j++) /* v mod c steps left (c = 8) */
        RC6_MIX_STEP(j);
#undef RC6_MIX_STEP
}

/* Key schedule, p20-p21.  Encryption and decryption use the same S[];
 * encryption also reads W[]. */
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

    if (c == 4)
        rc6_mix(S, L, 4);
    else if (c == 6)
        rc6_mix(S, L, 6);
    else
        rc6_mix(S, L, 8);
    for (unsigned k = 0; k < RC6_KS_WORDS; k++)
        ((rc6_ks *)ks)->W[k] = 2 * S[k] + 1;
    return CL_OK;
}

/* x >>> n for a count already in 0..31.  Decryption passes the top five bits
 * of the product, f(X) >> 27, which equal (f(X) <<< 5) mod 32 = lg w bits of
 * t (or u) as p5 asks, so the count is explicit and needs no mask.
 * Plain C, any byte order. */
static inline uint32_t rc6_rotr(uint32_t x, uint32_t n)
{
    return (x >> n) | (x << ((32 - n) & 31));
}

/* The four output words: four 32-bit stores (cl_store32_le; gcc 12 -O3 had
 * vectorised the 16 byte stores they once were at a cost of about 35 of 127
 * ticks a block, 1024 blocks; c_src/include/cl_bytes.h). */
static inline void rc6_store_block(uint8_t *out, uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    cl_store32_le(out, a);
    cl_store32_le(out + 4, b);
    cl_store32_le(out + 8, c);
    cl_store32_le(out + 12, d);
}

/* One encryption round i (p3), with the registers named by the caller:
 * t = (B*(2B+1)) <<< 5, u = (D*(2D+1)) <<< 5,
 * A = ((A^t) <<< u) + S[2i], C = ((C^u) <<< t) + S[2i+1].
 * B2 and D2 hold 2B+1 and 2D+1, made by the round that made B and D: with
 * x = (A^t) <<< u, the new 2A+1 = x + x + W[2i] is computed from x beside
 * A = x + S[2i], not after it.  From A, clang (generic tuning) splits the
 * three-operand lea 1(A,A) into a lea and an add, two cycles in front of the
 * multiply; gcc's lea takes one here, and the old form 2*B*B + B put a
 * scaled lea (2 cycles on this Intel core) after the multiply.
 * The rotation counts are t and u themselves (x86 rotates mask the count);
 * CL_OPAQUE keeps gcc from seeing that u mod 32 = D*(2D+1) >> 27 and adding
 * a shift for it. */
#define RC6_ENC_ROUND(A, B, C, D, A2, B2, C2, D2, i)                 \
    do {                                                             \
        uint32_t t_ = cl_rotl32(B * B2, 5), u_ = cl_rotl32(D * D2, 5); \
        CL_OPAQUE(t_);                                               \
        CL_OPAQUE(u_);                                               \
        uint32_t x_ = cl_rotl32(A ^ t_, u_);                         \
        uint32_t y_ = cl_rotl32(C ^ u_, t_);                         \
        A = x_ + S[2 * (i)];                                         \
        A2 = x_ + x_ + W[2 * (i)];                                   \
        C = y_ + S[2 * (i) + 1];                                     \
        C2 = y_ + y_ + W[2 * (i) + 1];                               \
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
    RC6_ENC_ROUND(a, b, c, d, a2, b2, c2, d2, (i) + 0);              \
    RC6_ENC_ROUND(b, c, d, a, b2, c2, d2, a2, (i) + 1);              \
    RC6_ENC_ROUND(c, d, a, b, c2, d2, a2, b2, (i) + 2);              \
    RC6_ENC_ROUND(d, a, b, c, d2, a2, b2, c2, (i) + 3)

#define RC6_DEC4(i)                                                  \
    RC6_DEC_ROUND(d, a, b, c, (i) + 3);                              \
    RC6_DEC_ROUND(c, d, a, b, (i) + 2);                              \
    RC6_DEC_ROUND(b, c, d, a, (i) + 1);                              \
    RC6_DEC_ROUND(a, b, c, d, (i) + 0)

static void rc6_encrypt(const void *ks, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    const uint32_t *const S = ((const rc6_ks *)ks)->S;
    const uint32_t *const W = ((const rc6_ks *)ks)->W;
    for (; nblocks; nblocks--, in += 16, out += 16) {
        uint32_t a = cl_load32_le(in), b = cl_load32_le(in + 4);
        uint32_t c = cl_load32_le(in + 8), d = cl_load32_le(in + 12);
        uint32_t a2, c2, b2 = b + b + W[0], d2 = d + d + W[1];
        b += S[0];
        d += S[1];
        RC6_ENC4(1);
        RC6_ENC4(5);
        RC6_ENC4(9);
        RC6_ENC4(13);
        RC6_ENC4(17);
        a += S[2 * RC6_ROUNDS + 2];
        c += S[2 * RC6_ROUNDS + 3];
        rc6_store_block(out, a, b, c, d);
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
        rc6_store_block(out, a, b, c, d);
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

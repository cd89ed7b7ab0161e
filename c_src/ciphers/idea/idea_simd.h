/*
 * idea_simd.h -- IDEA on 16-bit vector lanes, one block per lane position, shared by sse2.c and
 * avx2.c.  Lai's thesis ch. 3 (shared/specs/idea-lai-thesis-ch3.pdf), as in ref.c.
 *
 * A group is IS_LANES blocks (one per 16-bit lane): four vectors are loaded, their 16-bit words byte-swapped
 * (big-endian), and transposed with 16/32/64-bit unpacks so that vector Xi holds subblock Xi of
 * IS_LANES blocks (the unpacks work inside 128-bit lanes; on AVX2 the two halves are two
 * independent groups of 8 and the inverse transpose undoes exactly the same order).  The rounds
 * then run on all lanes at once; the subkeys are pre-broadcast vectors in the schedule.
 *
 * Multiplication modulo 2^16+1 (0 standing for 2^16): with lo, hi the low and high halves of
 * the 32-bit product (mullo/mulhi, unsigned), a*b == lo - hi (+1 when lo < hi) when neither
 * factor is 0.  When one is 0 the product of the 16-bit values is 0, so lo = hi = 0 and that
 * formula gives 0, and the right result is 1 - a - b; so r | (z & (1 - a - b)) with z the lanes
 * where a == 0 or b == 0.  Branch-free: the data reach the result only through that select.
 *
 * The including file defines IS_IMPL (the cl_impl symbol) and IS_STRATEGY (its name), and, where
 * the instructions exist, IS_AVAILABLE (the CPU check), IS_V (vector type), IS_LANES (16-bit
 * lanes), IS_ATTR, and the operations IS_LOAD, IS_STORE, IS_SET1 (from a 16-bit value), IS_KEY(p)
 * (load a pre-broadcast 8-lane key vector), IS_ADD, IS_SUB, IS_SUBS_U, IS_MULLO, IS_MULHI_U,
 * IS_CMPEQ, IS_AND, IS_OR, IS_XOR, IS_SLL, IS_SRL (16-bit shifts), IS_UNPACK{LO,HI}{16,32,64}.
 * Where it defines no IS_V (another architecture) this file gives a stub whose available()
 * returns 0 and whose key setup returns CL_UNAVAILABLE.
 */
#ifndef IDEA_SIMD_H
#define IDEA_SIMD_H

#include "cipherlab.h"

static const unsigned short is_key_bits[] = {128, 0};

#if defined(IS_V)

#include <string.h>

#include "idea_core.h"

#define IS_BLOCKS IS_LANES

/* The schedule: the scalar subkeys for key setup, tails and 1-block calls, then per subkey three
 * 8-lane vectors: k, 1 - k, and all ones where k == 0. */
typedef struct {
    uint16_t z[64]; /* IDEA_SUBKEYS used; 128 bytes keep the vectors 64-byte aligned */
    uint16_t k[IDEA_SUBKEYS][8];
    uint16_t one_minus_k[IDEA_SUBKEYS][8];
    uint16_t k_zero[IDEA_SUBKEYS][8];
} is_ks;

static void is_expand(is_ks *ks)
{
    for (int i = 0; i < IDEA_SUBKEYS; i++)
        for (int j = 0; j < 8; j++) {
            ks->k[i][j] = ks->z[i];
            ks->one_minus_k[i][j] = (uint16_t)(1u - ks->z[i]);
            ks->k_zero[i][j] = ks->z[i] ? 0 : 0xffff;
        }
}

static int is_set_encrypt_key(void *ks, const uint8_t *key, unsigned bits)
{
    int r = idea_set_encrypt_key(((is_ks *)ks)->z, key, bits);
    if (r == CL_OK)
        is_expand((is_ks *)ks);
    return r;
}

static int is_set_decrypt_key(void *ks, const uint8_t *key, unsigned bits)
{
    int r = idea_set_decrypt_key(((is_ks *)ks)->z, key, bits);
    if (r == CL_OK)
        is_expand((is_ks *)ks);
    return r;
}

/* a (.) k modulo 2^16+1 in every lane, k = subkey i. */
IS_ATTR static inline __attribute__((always_inline)) IS_V is_mul(IS_V a, const is_ks *ks, int i)
{
    const IS_V zero = IS_SET1(0), one = IS_SET1(1);
    const IS_V k = IS_KEY(ks->k[i]);
    const IS_V lo = IS_MULLO(a, k), hi = IS_MULHI_U(a, k);
    const IS_V ge = IS_CMPEQ(IS_SUBS_U(hi, lo), zero); /* all ones where lo >= hi */
    const IS_V r = IS_ADD(IS_ADD(IS_SUB(lo, hi), one), ge);
    const IS_V z = IS_OR(IS_CMPEQ(a, zero), IS_KEY(ks->k_zero[i]));
    return IS_OR(r, IS_AND(z, IS_SUB(IS_KEY(ks->one_minus_k[i]), a)));
}
#define IS_MUL(a, i) is_mul((a), ks, (i))

#define IS_BSWAP(x) IS_OR(IS_SLL(x, 8), IS_SRL(x, 8))

/* G groups side by side (G = 1 or 2): IDEA's MA structure is a serial chain of four
 * multiplications per round, so a second independent group fills the multiplier's latency. */
IS_ATTR static inline __attribute__((always_inline)) void is_groups(const is_ks *ks, const uint8_t *in,
                                                                    uint8_t *out, const int G)
{
    IS_V x1[2], x2[2], x3[2], x4[2];
    for (int g = 0; g < G; g++) {
        const uint8_t *p = in + 4 * sizeof(IS_V) * g;
        IS_V a0 = IS_BSWAP(IS_LOAD(p)), a1 = IS_BSWAP(IS_LOAD(p + sizeof(IS_V)));
        IS_V a2 = IS_BSWAP(IS_LOAD(p + 2 * sizeof(IS_V))), a3 = IS_BSWAP(IS_LOAD(p + 3 * sizeof(IS_V)));
        /* per 128-bit lane: a0..a3 hold blocks (0,1) (2,3) (4,5) (6,7), words w0..w3 each */
        IS_V t0 = IS_UNPACKLO16(a0, a1), t1 = IS_UNPACKHI16(a0, a1); /* (0,2) words; (1,3) words */
        IS_V t2 = IS_UNPACKLO16(a2, a3), t3 = IS_UNPACKHI16(a2, a3); /* (4,6); (5,7) */
        IS_V u0 = IS_UNPACKLO16(t0, t1), u1 = IS_UNPACKHI16(t0, t1); /* w0,w1 of 0..3; w2,w3 of 0..3 */
        IS_V u2 = IS_UNPACKLO16(t2, t3), u3 = IS_UNPACKHI16(t2, t3); /* the same of 4..7 */
        x1[g] = IS_UNPACKLO64(u0, u2), x2[g] = IS_UNPACKHI64(u0, u2);
        x3[g] = IS_UNPACKLO64(u1, u3), x4[g] = IS_UNPACKHI64(u1, u3);
    }
    int i = 0;
    for (int r = 0; r < 8; r++, i += 6) {
        for (int g = 0; g < G; g++) {
            x1[g] = IS_MUL(x1[g], i);
            x2[g] = IS_ADD(x2[g], IS_KEY(ks->k[i + 1]));
            x3[g] = IS_ADD(x3[g], IS_KEY(ks->k[i + 2]));
            x4[g] = IS_MUL(x4[g], i + 3);
        }
        IS_V u[2], v[2];
        for (int g = 0; g < G; g++)
            u[g] = IS_MUL(IS_XOR(x1[g], x3[g]), i + 4);
        for (int g = 0; g < G; g++)
            v[g] = IS_MUL(IS_ADD(u[g], IS_XOR(x2[g], x4[g])), i + 5);
        for (int g = 0; g < G; g++) {
            u[g] = IS_ADD(u[g], v[g]);
            x1[g] = IS_XOR(x1[g], v[g]);
            x4[g] = IS_XOR(x4[g], u[g]);
            IS_V t = IS_XOR(x2[g], u[g]); /* and exchange the middle subblocks */
            x2[g] = IS_XOR(x3[g], v[g]);
            x3[g] = t;
        }
    }
    for (int g = 0; g < G; g++) {
        /* output transformation (it undoes the last exchange) */
        IS_V y1 = IS_MUL(x1[g], i), y2 = IS_ADD(x3[g], IS_KEY(ks->k[i + 1]));
        IS_V y3 = IS_ADD(x2[g], IS_KEY(ks->k[i + 2])), y4 = IS_MUL(x4[g], i + 3);
        IS_V v0 = IS_UNPACKLO16(y1, y2), v1 = IS_UNPACKHI16(y1, y2); /* w0 w1 of 0..3; of 4..7 */
        IS_V v2 = IS_UNPACKLO16(y3, y4), v3 = IS_UNPACKHI16(y3, y4); /* w2 w3 likewise */
        uint8_t *q = out + 4 * sizeof(IS_V) * g;
        IS_STORE(q, IS_BSWAP(IS_UNPACKLO32(v0, v2)));
        IS_STORE(q + sizeof(IS_V), IS_BSWAP(IS_UNPACKHI32(v0, v2)));
        IS_STORE(q + 2 * sizeof(IS_V), IS_BSWAP(IS_UNPACKLO32(v1, v3)));
        IS_STORE(q + 3 * sizeof(IS_V), IS_BSWAP(IS_UNPACKHI32(v1, v3)));
    }
}

/* n blocks: whole groups on the vectors (two at a time, then one), the rest (and 1-block calls) through the scalar code. */
IS_ATTR static void is_crypt(const void *ks_, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    const is_ks *ks = (const is_ks *)ks_;
    for (; nblocks >= 2 * IS_BLOCKS; nblocks -= 2 * IS_BLOCKS, in += 16 * IS_BLOCKS, out += 16 * IS_BLOCKS)
        is_groups(ks, in, out, 2);
    if (nblocks >= IS_BLOCKS) {
        is_groups(ks, in, out, 1);
        nblocks -= IS_BLOCKS, in += 8 * IS_BLOCKS, out += 8 * IS_BLOCKS;
    }
    if (nblocks)
        idea_crypt_blocks(ks->z, in, out, nblocks);
}

#define IS_KS_BYTES sizeof(is_ks)
#define IS_SET_ENCRYPT_KEY is_set_encrypt_key
#define IS_SET_DECRYPT_KEY is_set_decrypt_key

#else /* not this architecture: recorded as unavailable */

static int is_unavailable(void) { return 0; }
static int is_no_key(void *ks, const uint8_t *key, unsigned bits)
{
    (void)ks, (void)key, (void)bits;
    return CL_UNAVAILABLE;
}
static void is_crypt(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    (void)ks, (void)in, (void)out, (void)n;
}
#define IS_KS_BYTES 8
#define IS_AVAILABLE is_unavailable
#define IS_SET_ENCRYPT_KEY is_no_key
#define IS_SET_DECRYPT_KEY is_no_key

#endif

const cl_impl IS_IMPL = {
    .cipher = "idea",
    .strategy = IS_STRATEGY,
    .block_bytes = 8,
    .key_bits = is_key_bits,
    .ks_bytes = IS_KS_BYTES,
    .table_bytes = 0,
    .available = IS_AVAILABLE,
    .set_encrypt_key = IS_SET_ENCRYPT_KEY,
    .set_decrypt_key = IS_SET_DECRYPT_KEY,
    .encrypt = is_crypt,
    .decrypt = is_crypt,
    .init_hook = NULL,
};

#endif

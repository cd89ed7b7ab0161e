/*
 * idea_core.h -- the scalar IDEA of ref.c (key schedule, multiplication modulo 2^16+1, the
 * block loop), shared with the SIMD strategies for their key setup, their tails and 1-block
 * calls.  The comments and references are those of ref.c.
 */
#ifndef IDEA_CORE_H
#define IDEA_CORE_H

#include "cipherlab.h"
#include "cl_bytes.h"

#define IDEA_SUBKEYS 52 /* 6 per round x 8 rounds + 4 for the output transformation */

/* a (.) b modulo 2^16+1 on 16-bit values, 0 standing for 2^16. */
static inline uint32_t idea_mul(uint32_t a, uint32_t b)
{
    uint32_t p = a * b;
    uint32_t lo = p & 0xffffu, hi = p >> 16;
    /* p != 0: lo - hi, plus 2^16+1 when negative (== +1 modulo 2^16).
     * p == 0: a or b is 0 (= 2^16 = -1), so the product is -(other) = 1 - a - b. */
    uint32_t r = lo - hi + (lo < hi);
    return (p ? r : 1u - a - b) & 0xffffu;
}

/* Multiplicative inverse modulo 2^16+1 (0 = 2^16 and 1 are their own inverses):
 * x^(2^16-1) = x^-1 by Fermat, as the chain x^(2^2-1), x^(2^4-1), x^(2^8-1),
 * x^(2^16-1) -- 15 squarings and 4 multiplications. */
static uint32_t mul_inverse(uint32_t x)
{
    uint32_t e = idea_mul(idea_mul(x, x), x); /* x^3 = x^(2^2-1) */
    for (unsigned k = 2; k < 16; k *= 2) {
        uint32_t s = e;
        for (unsigned i = 0; i < k; i++)
            s = idea_mul(s, s);
        e = idea_mul(s, e); /* x^(2^(2k)-1) */
    }
    return e;
}

/* Encryption subkeys Z1(1)..Z6(1), Z1(2)..., Z1(9)..Z4(9): the key's eight
 * 16-bit words, then the key rotated left by 25 bits, and so on (p3, p5). */
static void idea_encryption_subkeys(uint16_t z[IDEA_SUBKEYS], const uint8_t *key)
{
    uint64_t hi = cl_load64_be(key), lo = cl_load64_be(key + 8);
    for (int i = 0; i < IDEA_SUBKEYS; i += 8) {
        for (int j = 0; j < 8 && i + j < IDEA_SUBKEYS; j++)
            z[i + j] = (uint16_t)((j < 4 ? hi : lo) >> (48 - 16 * (j & 3)));
        uint64_t h = (hi << 25) | (lo >> 39);
        lo = (lo << 25) | (hi >> 39);
        hi = h;
    }
}

static int idea_set_encrypt_key(void *ks, const uint8_t *key, unsigned bits)
{
    if (bits != 128)
        return CL_BAD_KEY_LENGTH;
    idea_encryption_subkeys((uint16_t *)ks, key);
    return CL_OK;
}

/* Decryption subkeys (p3, Table 3.1): round r uses the inverses of the
 * subkeys of encryption round 10-r, with the two additive subkeys exchanged
 * in rounds 2..8 (the cipher swaps X2 and X3 there), and the MA subkeys of
 * encryption round 9-r. */
static int idea_set_decrypt_key(void *ks, const uint8_t *key, unsigned bits)
{
    uint16_t z[IDEA_SUBKEYS], *dk = (uint16_t *)ks;
    if (bits != 128)
        return CL_BAD_KEY_LENGTH;
    idea_encryption_subkeys(z, key);
    for (int r = 1; r <= 9; r++) {
        const uint16_t *e = z + 6 * (9 - r); /* encryption round 10-r */
        uint16_t *d = dk + 6 * (r - 1);
        int swap = (r != 1 && r != 9);
        d[0] = (uint16_t)mul_inverse(e[0]);
        d[1] = (uint16_t)(0u - e[swap ? 2 : 1]);
        d[2] = (uint16_t)(0u - e[swap ? 1 : 2]);
        d[3] = (uint16_t)mul_inverse(e[3]);
        if (r <= 8) {
            d[4] = z[6 * (8 - r) + 4]; /* encryption round 9-r */
            d[5] = z[6 * (8 - r) + 5];
        }
    }
    return CL_OK;
}

/* Encryption and decryption differ only in the subkeys. */
static inline void idea_crypt_blocks(const void *ks, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    const uint16_t *z = (const uint16_t *)ks;
    for (size_t n = 0; n < nblocks; n++, in += 8, out += 8) {
        uint32_t x1 = cl_load16_be(in), x2 = cl_load16_be(in + 2);
        uint32_t x3 = cl_load16_be(in + 4), x4 = cl_load16_be(in + 6);
        const uint16_t *k = z;
        for (int r = 0; r < 8; r++, k += 6) {
            x1 = idea_mul(x1, k[0]);
            x2 = (x2 + k[1]) & 0xffffu;
            x3 = (x3 + k[2]) & 0xffffu;
            x4 = idea_mul(x4, k[3]);
            /* MA structure */
            uint32_t u = idea_mul(x1 ^ x3, k[4]);
            uint32_t v = idea_mul((u + (x2 ^ x4)) & 0xffffu, k[5]);
            u = (u + v) & 0xffffu;
            x1 ^= v;
            x4 ^= u;
            uint32_t t = x2 ^ u; /* and exchange the middle subblocks */
            x2 = x3 ^ v;
            x3 = t;
        }
        /* output transformation; it undoes the last exchange */
        cl_store16_be(out, (uint16_t)idea_mul(x1, k[0]));
        cl_store16_be(out + 2, (uint16_t)(x3 + k[1]));
        cl_store16_be(out + 4, (uint16_t)(x2 + k[2]));
        cl_store16_be(out + 6, (uint16_t)idea_mul(x4, k[3]));
    }
}

#endif

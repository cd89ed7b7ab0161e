/*
 * des_sp64.h -- DES rounds on 64-bit expanded halves (strategy sp64 of des and 3des).
 *
 * des_core.h keeps a half rotated by one bit, h' = rotl(h, 1), and a round
 * rotates, masks and shifts eight 6-bit groups out of it.  Here a half is kept
 * as X(h') = (rotr(h', 4) << 32 | h') & 0x3f3f3f3f3f3f3f3f: byte j holds one
 * 6-bit group of E(h) in its low six bits, so X is E itself spread over the
 * eight bytes of a 64-bit word.  E is linear, so the SP tables can return X of
 * their output (cl_des_sp64, generated and checked in gen_tables.py) and the
 * halves stay expanded through all rounds -- and, in 3DES, through all three
 * passes.  A round is one XOR with the 64-bit round key (ko << 32 | ke) and
 * eight loads indexed by the bytes of the result: no rotation, no mask.  The
 * idea is the one of libgcrypt's x86-64 DES assembly (64-bit table entries,
 * expanded halves); this is our own C, derived in gen_tables.py.
 */
#ifndef CL_DES_SP64_H
#define CL_DES_SP64_H

#include <stddef.h>
#include <stdint.h>

#include "des_core.h"

#define CL_DES_SP64_TABLE_BYTES (8 * 64 * 8)
#define CL_DES_SP64_ROUNDS 16

/* cl_des_sp64[j][b]: X(SP[i][b]) for the S-box whose group is byte j of X (des_sp64.c). */
extern const uint64_t cl_des_sp64[8][64];

#define CL_DES_M6 0x3f3f3f3f3f3f3f3full

static inline uint64_t cl_des64_expand(uint32_t h)
{
    return (((uint64_t)cl_rotr32(h, 4) << 32) | h) & CL_DES_M6;
}

static inline uint32_t cl_des64_compress(uint64_t x)
{
    return ((uint32_t)x & 0x3f3f3f3fu) | (cl_rotl32((uint32_t)(x >> 32), 4) & 0xc0c0c0c0u);
}

/* The 64-bit round keys of a des_core schedule (same order). */
static inline void cl_des64_schedule(uint64_t k64[CL_DES_SP64_ROUNDS], const uint32_t sk[CL_DES_SCHEDULE_WORDS])
{
    for (int i = 0; i < CL_DES_SP64_ROUNDS; i++)
        k64[i] = ((uint64_t)sk[2 * i] << 32) | sk[2 * i + 1];
}

/* f of an expanded half and a 64-bit round key, in the expanded form.  Every
 * byte of t is below 64 (both operands have the top two bits of each byte clear). */
static inline uint64_t cl_des64_f(uint64_t r, uint64_t k)
{
    uint64_t t = r ^ k;
    return cl_des_sp64[0][t & 0xff] ^ cl_des_sp64[1][(t >> 8) & 0xff] ^
           cl_des_sp64[2][(t >> 16) & 0xff] ^ cl_des_sp64[3][(t >> 24) & 0xff] ^
           cl_des_sp64[4][(t >> 32) & 0xff] ^ cl_des_sp64[5][(t >> 40) & 0xff] ^
           cl_des_sp64[6][(t >> 48) & 0xff] ^ cl_des_sp64[7][t >> 56];
}

/* 16 rounds on expanded (l, r); as cl_des_rounds, the preoutput is (r, l). */
static inline void cl_des64_rounds(uint64_t *lp, uint64_t *rp, const uint64_t *k)
{
    uint64_t l = *lp, r = *rp;
    for (int i = 0; i < CL_DES_SP64_ROUNDS; i += 2) {
        l ^= cl_des64_f(r, k[i]);
        r ^= cl_des64_f(l, k[i + 1]);
    }
    *lp = l;
    *rp = r;
}

/* The same on two independent blocks, interleaved: each round waits for its
 * loads, and the other block's round fills that wait. */
static inline void cl_des64_rounds_x2(uint64_t *l0p, uint64_t *r0p, uint64_t *l1p, uint64_t *r1p,
                                      const uint64_t *k)
{
    uint64_t l0 = *l0p, r0 = *r0p, l1 = *l1p, r1 = *r1p;
    for (int i = 0; i < CL_DES_SP64_ROUNDS; i += 2) {
        l0 ^= cl_des64_f(r0, k[i]);
        l1 ^= cl_des64_f(r1, k[i]);
        r0 ^= cl_des64_f(l0, k[i + 1]);
        r1 ^= cl_des64_f(l1, k[i + 1]);
    }
    *l0p = l0;
    *r0p = r0;
    *l1p = l1;
    *r1p = r1;
}

/* Load 8 bytes, IP, expand: (l, r) = (X(rotl(L0,1)), X(rotl(R0,1))). */
static inline void cl_des64_load(const uint8_t *in, uint64_t *lp, uint64_t *rp)
{
    uint32_t l = cl_load32_be(in), r = cl_load32_be(in + 4);
    cl_des_ip(&l, &r);
    *lp = cl_des64_expand(l);
    *rp = cl_des64_expand(r);
}

/* The preoutput halves (r, l) -> IP^-1 -> 8 bytes. */
static inline void cl_des64_store(uint8_t *out, uint64_t r, uint64_t l)
{
    uint32_t a = cl_des64_compress(r), b = cl_des64_compress(l);
    cl_des_fp(&a, &b);
    cl_store32_be(out, a);
    cl_store32_be(out + 4, b);
}

#endif

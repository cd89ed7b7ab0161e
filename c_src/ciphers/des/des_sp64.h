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

/* f's table part for t = (expanded half) ^ (round key): eight loads indexed by
 * the bytes of t, every one below 64 (both operands have the top two bits of
 * each byte clear).  The eight entries have pairwise disjoint bits (each output
 * bit of f comes from one S-box; gen_tables.py checks it), so XOR, OR and +
 * agree on them; mixing the three fixes a tree of depth three.  Written as one
 * XOR chain, gcc and clang keep a chain of eight dependent XORs, and a round
 * -- which waits for the one before -- takes that much longer. */
static inline uint64_t cl_des64_sp(uint64_t t)
{
    uint64_t a = cl_des_sp64[0][t & 0xff] | cl_des_sp64[1][(t >> 8) & 0xff];
    uint64_t b = cl_des_sp64[2][(t >> 16) & 0xff] | cl_des_sp64[3][(t >> 24) & 0xff];
    uint64_t c = cl_des_sp64[4][(t >> 32) & 0xff] | cl_des_sp64[5][(t >> 40) & 0xff];
    uint64_t d = cl_des_sp64[6][(t >> 48) & 0xff] | cl_des_sp64[7][t >> 56];
    return (a + b) | (c + d);
}

/* One round: x ^= f(the other half, K_i), where t already holds (the other
 * half) ^ K_i; then t = x ^ K_next for the next round, which reads x.  That t
 * is the round's critical path, so it is computed first and x from it:
 * x ^ K_next does not wait for the loads; bytes 0, 1 and 7 of t take one
 * instruction to extract and their loads come back a cycle before the other
 * five, so they are combined first (e, and f7 with x ^ K_next), and the last
 * loads (p_) are an OR, a + and one XOR from the next round's t.  xq_ is
 * written before p_: with p_ defined first, gcc grouped the XORs as
 * (p_ ^ xk_) ^ q_, one level more after the late loads. */
#define CL_DES64_ROUND(t, x, knext)                                                         \
    do {                                                                                    \
        uint64_t e_ = cl_des_sp64[0][(t) & 0xff] | cl_des_sp64[1][((t) >> 8) & 0xff];       \
        uint64_t q_ = cl_des_sp64[6][((t) >> 48) & 0xff] + e_;                              \
        uint64_t xk_ = ((x) ^ (knext)) ^ cl_des_sp64[7][(t) >> 56];                         \
        uint64_t xq_ = xk_ ^ q_;                                                            \
        uint64_t p_ = (cl_des_sp64[2][((t) >> 16) & 0xff] | cl_des_sp64[3][((t) >> 24) & 0xff]) + \
                      (cl_des_sp64[4][((t) >> 32) & 0xff] | cl_des_sp64[5][((t) >> 40) & 0xff]);  \
        (t) = xq_ ^ p_;                                                                     \
        (x) = (t) ^ (knext);                                                                \
    } while (0)
#define CL_DES64_ROUND_PAIR(t, l, r, k, i)                                      \
    do {                                                                        \
        CL_DES64_ROUND(t, l, (k)[(i) + 1]);                                     \
        CL_DES64_ROUND(t, r, (k)[(i) + 2]);                                     \
    } while (0)

/* 16 rounds on expanded (l, r) with round keys k[0..15], t = r ^ k[0] on
 * entry, unrolled; as cl_des_rounds, the preoutput is (r, l).  Macros rather
 * than functions taking pointers: clang did not inline three calls of such a
 * function in 3DES and sent the halves through memory between passes. */
#define CL_DES64_PASS(t, l, r, k)                                               \
    do {                                                                        \
        CL_DES64_ROUND_PAIR(t, l, r, k, 0);                                     \
        CL_DES64_ROUND_PAIR(t, l, r, k, 2);                                     \
        CL_DES64_ROUND_PAIR(t, l, r, k, 4);                                     \
        CL_DES64_ROUND_PAIR(t, l, r, k, 6);                                     \
        CL_DES64_ROUND_PAIR(t, l, r, k, 8);                                     \
        CL_DES64_ROUND_PAIR(t, l, r, k, 10);                                    \
        CL_DES64_ROUND_PAIR(t, l, r, k, 12);                                    \
        CL_DES64_ROUND(t, l, (k)[15]);                                          \
        (r) ^= cl_des64_sp(t);                                                  \
    } while (0)

/* The same on two independent blocks, interleaved (each round waits for its
 * loads, and the other block's round fills that wait); t0 = r0 ^ k[0] and
 * t1 = r1 ^ k[0] on entry. */
#define CL_DES64_PASS_X2(t0, l0, r0, t1, l1, r1, k)                             \
    do {                                                                        \
        for (int i_ = 0; i_ < CL_DES_SP64_ROUNDS - 2; i_ += 2) {                \
            CL_DES64_ROUND(t0, l0, (k)[i_ + 1]);                                \
            CL_DES64_ROUND(t1, l1, (k)[i_ + 1]);                                \
            CL_DES64_ROUND(t0, r0, (k)[i_ + 2]);                                \
            CL_DES64_ROUND(t1, r1, (k)[i_ + 2]);                                \
        }                                                                       \
        CL_DES64_ROUND(t0, l0, (k)[CL_DES_SP64_ROUNDS - 1]);                    \
        CL_DES64_ROUND(t1, l1, (k)[CL_DES_SP64_ROUNDS - 1]);                    \
        (r0) ^= cl_des64_sp(t0);                                                \
        (r1) ^= cl_des64_sp(t1);                                                \
    } while (0)

/* IP by multiplication.  IP is a transpose: with the block loaded
 * little-endian (byte k in bits 8k..8k+7), the byte j of L (j = 3 the most
 * significant) is bit 2j of the eight bytes and the byte j of R bit 2j + 1,
 * byte 7's bit first.  One multiplication gathers such a column: the bits p of
 * the eight bytes, moved to bit 0 of each byte, times 0x0102040810204080 land
 * side by side in the product's top byte (bit 56 + k = byte k's bit; no two
 * partial products meet there, so nothing carries into it).  The eight columns
 * are independent, so IP is a shift, a mask and a multiplication deep, then
 * the pieces of the expanded halves.  cl_des_ip's bit swaps are one chain of
 * about 25 cycles, and on the one-block path nothing runs beside it.
 * gen_tables.py checks this against the IP table. */
/* Column p of x in the top byte of the product (bit 56 + k = bit p of byte k). */
static inline uint64_t cl_des64_column(uint64_t x, unsigned p)
{
    return ((x >> p) & 0x0101010101010101ull) * 0x0102040810204080ull;
}

/* X(rotl(H, 1)) for the half H whose bytes 3, 2, 1, 0 are the columns in the
 * top bytes of c3, c2, c1, c0, put together from the columns: the low word
 * rotl(H, 1) has them at bit 8j + 1 (c3's top bit wrapping to bit 0), the high
 * word rotr(rotl(H, 1), 4) = rotr(H, 3) at bit 8j - 3 (c0's low three bits
 * wrapping to the top), every piece masked to the six bits a byte of X keeps.
 * Assembling H and expanding it (X above) costs three levels more (rotation,
 * shift, OR), and clang made that rotation a shld of two of the pieces (three
 * cycles). */
static inline uint64_t cl_des64_expanded_half(uint64_t c3, uint64_t c2, uint64_t c1, uint64_t c0)
{
    const uint32_t m = 0x3f3f3f3fu;
    uint32_t lo = (((uint32_t)(c3 >> 31) & (0xfe000000u & m)) | ((uint32_t)(c2 >> 39) & (0x01fe0000u & m))) |
                  (((uint32_t)(c1 >> 47) & (0x0001fe00u & m)) | ((uint32_t)(c0 >> 55) & (0x000001feu & m))) |
                  (uint32_t)(c3 >> 63);
    uint32_t hi = (((uint32_t)(c3 >> 35) & (0x1fe00000u & m)) | ((uint32_t)(c2 >> 43) & (0x001fe000u & m))) |
                  (((uint32_t)(c1 >> 51) & (0x00001fe0u & m)) | (uint32_t)(c0 >> 59)) |
                  ((uint32_t)(c0 >> 27) & (0xe0000000u & m));
    return (uint64_t)hi << 32 | lo;
}

/* Load 8 bytes, IP, expand: (l, r) = (X(rotl(L0,1)), X(rotl(R0,1))). */
static inline void cl_des64_load(const uint8_t *in, uint64_t *lp, uint64_t *rp)
{
    uint64_t x = cl_load64_le(in);
    *lp = cl_des64_expanded_half(cl_des64_column(x, 6), cl_des64_column(x, 4), cl_des64_column(x, 2),
                                 cl_des64_column(x, 0));
    *rp = cl_des64_expanded_half(cl_des64_column(x, 7), cl_des64_column(x, 5), cl_des64_column(x, 3),
                                 cl_des64_column(x, 1));
}

/* The preoutput halves (r, l) -> IP^-1 -> 8 bytes.  IP^-1 stays the bit swaps
 * of des_core.h: spreading the columns back by multiplication (the inverse of
 * the gathers above) measured no faster with gcc and slower with clang, which
 * split the 64-bit store of the two-block loop into bytes. */
static inline void cl_des64_store(uint8_t *out, uint64_t r, uint64_t l)
{
    uint32_t a = cl_des64_compress(r), b = cl_des64_compress(l);
    cl_des_fp(&a, &b);
    cl_store32_be(out, a);
    cl_store32_be(out + 4, b);
}

#endif

/*
 * cl_bytes.h -- byte order and rotations, the only place they live (and CL_OPAQUE).
 *
 * Every load is written with shifts on bytes, so it is correct on any host
 * byte order and needs no alignment; gcc and clang turn these patterns into
 * single (byte-swapping) moves.  Stores are one word-sized __builtin_memcpy
 * of the word in the wanted order with gcc and clang (see below), bytes
 * elsewhere.  The host's byte order is tested here and nowhere else: cipher
 * code must use these instead of casting byte pointers to wider types or
 * testing the host's endianness.
 */
#ifndef CL_BYTES_H
#define CL_BYTES_H

#include <stdint.h>

static inline uint16_t cl_load16_be(const uint8_t *p) { return (uint16_t)((p[0] << 8) | p[1]); }
static inline uint16_t cl_load16_le(const uint8_t *p) { return (uint16_t)((p[1] << 8) | p[0]); }
static inline void cl_store16_be(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void cl_store16_le(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }

static inline uint32_t cl_load32_be(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}
static inline uint32_t cl_load32_le(const uint8_t *p)
{
    return ((uint32_t)p[3] << 24) | ((uint32_t)p[2] << 16) | ((uint32_t)p[1] << 8) | (uint32_t)p[0];
}
/* Stores: with gcc and clang one 32-bit store of the word in the wanted byte
 * order (__builtin_memcpy: no alignment needed, a byte swap where the host's
 * order differs), because byte stores are what they do not merge well: gcc 12
 * -O3 vectorised the 16 byte stores of a block's four words by rebuilding the
 * block in general registers and on the stack (about 70 instructions and six
 * push/pop pairs a call), clang 14 merged the bytes of one word only.  Byte
 * stores elsewhere, correct on any host. */
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && \
    (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ || __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define CL_TO_BE(bits, v) __builtin_bswap##bits(v)
#define CL_TO_LE(bits, v) (v)
#else
#define CL_TO_BE(bits, v) (v)
#define CL_TO_LE(bits, v) __builtin_bswap##bits(v)
#endif
static inline void cl_store32_be(uint8_t *p, uint32_t v) { v = CL_TO_BE(32, v); __builtin_memcpy(p, &v, 4); }
static inline void cl_store32_le(uint8_t *p, uint32_t v) { v = CL_TO_LE(32, v); __builtin_memcpy(p, &v, 4); }
#define CL_STORES_WORDS 1
#else
static inline void cl_store32_be(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}
static inline void cl_store32_le(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}
#endif

static inline uint64_t cl_load64_be(const uint8_t *p)
{
    return ((uint64_t)cl_load32_be(p) << 32) | cl_load32_be(p + 4);
}
static inline uint64_t cl_load64_le(const uint8_t *p)
{
    return ((uint64_t)cl_load32_le(p + 4) << 32) | cl_load32_le(p);
}
#ifdef CL_STORES_WORDS
static inline void cl_store64_be(uint8_t *p, uint64_t v) { v = CL_TO_BE(64, v); __builtin_memcpy(p, &v, 8); }
static inline void cl_store64_le(uint8_t *p, uint64_t v) { v = CL_TO_LE(64, v); __builtin_memcpy(p, &v, 8); }
#undef CL_TO_BE
#undef CL_TO_LE
#undef CL_STORES_WORDS
#else
static inline void cl_store64_be(uint8_t *p, uint64_t v) { cl_store32_be(p, (uint32_t)(v >> 32)); cl_store32_be(p + 4, (uint32_t)v); }
static inline void cl_store64_le(uint8_t *p, uint64_t v) { cl_store32_le(p, (uint32_t)v); cl_store32_le(p + 4, (uint32_t)(v >> 32)); }
#endif

/* Rotations; n is reduced mod the width so n == 0 and data-dependent counts
 * (RC6, MARS) are well defined; compilers emit one rotate instruction. */
static inline uint32_t cl_rotl32(uint32_t x, unsigned n) { n &= 31; return (x << n) | (x >> ((32 - n) & 31)); }
static inline uint32_t cl_rotr32(uint32_t x, unsigned n) { n &= 31; return (x >> n) | (x << ((32 - n) & 31)); }
static inline uint64_t cl_rotl64(uint64_t x, unsigned n) { n &= 63; return (x << n) | (x >> ((64 - n) & 63)); }
static inline uint64_t cl_rotr64(uint64_t x, unsigned n) { n &= 63; return (x >> n) | (x << ((64 - n) & 63)); }
static inline uint16_t cl_rotl16(uint16_t x, unsigned n) { n &= 15; return (uint16_t)((x << n) | (x >> ((16 - n) & 15))); }
static inline uint8_t cl_rotl8(uint8_t x, unsigned n) { n &= 7; return (uint8_t)((x << n) | (x >> ((8 - n) & 7))); }

/* Byte b (0 = least significant) of a 32-bit word. */
#define CL_BYTE(x, b) ((uint8_t)((x) >> (8 * (b))))

/* CL_OPAQUE(v): v becomes a value of its own that the compiler cannot see
 * into (an empty asm statement, no instruction), so it cannot re-associate
 * the expression v came from with what follows.  The one-block rounds of
 * Twofish `full` and T-table AES use it to keep XORs paired for latency, where
 * gcc and clang would rebuild one chain.  Nothing on other compilers. */
#if defined(__GNUC__)
#define CL_OPAQUE(v) __asm__("" : "+r"(v))
#else
#define CL_OPAQUE(v) ((void)0)
#endif

#endif

/*
 * rijndael/small.c -- AES with only the byte S-boxes (see cipherlab.h).
 *
 * Written from FIPS-197 (rijndael-fips197.pdf; PDF page numbers):
 *   Cipher Fig. 5 p19; SubBytes p19-p20; ShiftRows p21; MixColumns eq. 5.6
 *   p21-p22; KeyExpansion Fig. 11 p24; Inverse Cipher Fig. 12 p25 with
 *   InvShiftRows p25-p26, InvSubBytes p26, InvMixColumns eq. 5.10 p27.
 *
 * A state column is the word cl_load32_be(in + 4c) (row 0 = most
 * significant byte).  SubBytes+ShiftRows are 16 byte lookups per round that
 * assemble the shifted columns; MixColumns works on a whole column word with
 * a packed xtime (multiplication by {02} of four bytes at once):
 *   MixColumns(w)    = xtime(u) ^ rotl8(w) ^ rotl16(u),  u = w ^ rotl8(w)
 *   (row r: 02 a_r ^ 03 a_(r+1) ^ a_(r+2) ^ a_(r+3), eq. 5.6);
 *   InvMixColumns(w) = MixColumns(w ^ xtime(xtime(w ^ rotl16(w))))
 *   since d(x) = {0b}x^3+{0d}x^2+{09}x+{0e} = c(x) * ({04}x^2 + {05})
 *   mod x^4+1 (c(x) = {03}x^3+{01}x^2+{01}x+{02}, eq. 5.5 and 5.9).
 * Decryption is the straightforward Inverse Cipher (Fig. 12), reading the
 * encryption key schedule backwards, so both key setups are the key
 * expansion of rijndael_core.c.
 *
 * Tables: S-box + inverse S-box, 512 bytes (rijndael_core.c).
 * Not constant time (secret-indexed byte lookups), but the tables span only
 * 4 + 4 cache lines.
 */
#include <stdint.h>
#include <stddef.h>

#include "cipherlab.h"
#include "cl_bytes.h"
#include "rijndael_core.h"

static const unsigned short rj_key_bits[] = {128, 192, 256, 0};

/* xtime on each of the four bytes of w (FIPS-197 Sec. 4.2.1, p15). */
static inline uint32_t rj_xtime4(uint32_t w)
{
    return ((w & 0x7f7f7f7fu) << 1) ^ (((w >> 7) & 0x01010101u) * 0x1bu);
}

static inline uint32_t rj_mix(uint32_t w)
{
    uint32_t r8 = cl_rotl32(w, 8), u = w ^ r8;
    return rj_xtime4(u) ^ r8 ^ cl_rotl32(u, 16);
}

static inline uint32_t rj_inv_mix(uint32_t w)
{
    return rj_mix(w ^ rj_xtime4(rj_xtime4(w ^ cl_rotl32(w, 16))));
}

/* SubBytes + ShiftRows for output column c: row k from column c+k. */
#define RJ_SUBSHIFT(a0, a1, a2, a3)                                                               \
    (((uint32_t)cl_rj_sbox[a0 >> 24] << 24) | ((uint32_t)cl_rj_sbox[CL_BYTE(a1, 2)] << 16) |       \
     ((uint32_t)cl_rj_sbox[CL_BYTE(a2, 1)] << 8) | (uint32_t)cl_rj_sbox[CL_BYTE(a3, 0)])
/* InvShiftRows + InvSubBytes for output column c: row k from column c-k. */
#define RJ_INVSUBSHIFT(a0, a1, a2, a3)                                                            \
    (((uint32_t)cl_rj_inv_sbox[a0 >> 24] << 24) | ((uint32_t)cl_rj_inv_sbox[CL_BYTE(a3, 2)] << 16) | \
     ((uint32_t)cl_rj_inv_sbox[CL_BYTE(a2, 1)] << 8) | (uint32_t)cl_rj_inv_sbox[CL_BYTE(a1, 0)])

/* One full round (SubBytes, ShiftRows, MixColumns, AddRoundKey with rk) of s0..s3, through t0..t3. */
#define RJ_ROUND(rk)                                                                               \
    do {                                                                                           \
        t0 = RJ_SUBSHIFT(s0, s1, s2, s3);                                                          \
        t1 = RJ_SUBSHIFT(s1, s2, s3, s0);                                                          \
        t2 = RJ_SUBSHIFT(s2, s3, s0, s1);                                                          \
        t3 = RJ_SUBSHIFT(s3, s0, s1, s2);                                                          \
        s0 = rj_mix(t0) ^ (rk)[0];                                                                 \
        s1 = rj_mix(t1) ^ (rk)[1];                                                                 \
        s2 = rj_mix(t2) ^ (rk)[2];                                                                 \
        s3 = rj_mix(t3) ^ (rk)[3];                                                                 \
    } while (0)
/* One full inverse round (InvShiftRows, InvSubBytes, AddRoundKey with rk, InvMixColumns). */
#define RJ_INV_ROUND(rk)                                                                           \
    do {                                                                                           \
        t0 = RJ_INVSUBSHIFT(s0, s1, s2, s3) ^ (rk)[0];                                             \
        t1 = RJ_INVSUBSHIFT(s1, s2, s3, s0) ^ (rk)[1];                                             \
        t2 = RJ_INVSUBSHIFT(s2, s3, s0, s1) ^ (rk)[2];                                             \
        t3 = RJ_INVSUBSHIFT(s3, s0, s1, s2) ^ (rk)[3];                                             \
        s0 = rj_inv_mix(t0);                                                                       \
        s1 = rj_inv_mix(t1);                                                                       \
        s2 = rj_inv_mix(t2);                                                                       \
        s3 = rj_inv_mix(t3);                                                                       \
    } while (0)

/* Nr - 1 full rounds, two per loop pass (Nr/2 - 1 passes, then one more; Nr is 10, 12 or 14), then the
 * final round without MixColumns.  Built by gcc, a loop of one round per pass ran a 256-bit key's 14 rounds
 * at two speeds 3 % apart (104 or 107 ns per block on the lab's VM), from one process to the next and in
 * stretches within one, while its 10 rounds stayed at one; two rounds per pass encrypt 1-2 % faster with
 * gcc and clang, at one speed (docs/measurement.md, "What the remaining differences are made of"). */
static void rj_encrypt(const void *ks_, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    const cl_rj_ks *ks = (const cl_rj_ks *)ks_;
    const unsigned pairs = ks->nr / 2 - 1;
    for (; nblocks; nblocks--, in += 16, out += 16) {
        const uint32_t *rk = ks->rk;
        uint32_t s0 = cl_load32_be(in) ^ rk[0], s1 = cl_load32_be(in + 4) ^ rk[1];
        uint32_t s2 = cl_load32_be(in + 8) ^ rk[2], s3 = cl_load32_be(in + 12) ^ rk[3];
        uint32_t t0, t1, t2, t3;
        for (unsigned r = pairs; r; r--, rk += 8) {
            RJ_ROUND(rk + 4);
            RJ_ROUND(rk + 8);
        }
        RJ_ROUND(rk + 4);
        rk += 8;
        t0 = RJ_SUBSHIFT(s0, s1, s2, s3);
        t1 = RJ_SUBSHIFT(s1, s2, s3, s0);
        t2 = RJ_SUBSHIFT(s2, s3, s0, s1);
        t3 = RJ_SUBSHIFT(s3, s0, s1, s2);
        cl_store32_be(out, t0 ^ rk[0]);
        cl_store32_be(out + 4, t1 ^ rk[1]);
        cl_store32_be(out + 8, t2 ^ rk[2]);
        cl_store32_be(out + 12, t3 ^ rk[3]);
    }
}

/* The Inverse Cipher the same way: the round keys from the last back to the first. */
static void rj_decrypt(const void *ks_, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    const cl_rj_ks *ks = (const cl_rj_ks *)ks_;
    const unsigned pairs = ks->nr / 2 - 1;
    for (; nblocks; nblocks--, in += 16, out += 16) {
        const uint32_t *rk = ks->rk + 4 * ks->nr;
        uint32_t s0 = cl_load32_be(in) ^ rk[0], s1 = cl_load32_be(in + 4) ^ rk[1];
        uint32_t s2 = cl_load32_be(in + 8) ^ rk[2], s3 = cl_load32_be(in + 12) ^ rk[3];
        uint32_t t0, t1, t2, t3;
        for (unsigned r = pairs; r; r--, rk -= 8) {
            RJ_INV_ROUND(rk - 4);
            RJ_INV_ROUND(rk - 8);
        }
        RJ_INV_ROUND(rk - 4);
        rk -= 8;
        cl_store32_be(out, RJ_INVSUBSHIFT(s0, s1, s2, s3) ^ rk[0]);
        cl_store32_be(out + 4, RJ_INVSUBSHIFT(s1, s2, s3, s0) ^ rk[1]);
        cl_store32_be(out + 8, RJ_INVSUBSHIFT(s2, s3, s0, s1) ^ rk[2]);
        cl_store32_be(out + 12, RJ_INVSUBSHIFT(s3, s0, s1, s2) ^ rk[3]);
    }
}

const cl_impl cl_impl_rijndael_small = {
    .cipher = "rijndael",
    .strategy = "small",
    .block_bytes = 16,
    .key_bits = rj_key_bits,
    .ks_bytes = sizeof(cl_rj_ks),
    .table_bytes = sizeof cl_rj_sbox + sizeof cl_rj_inv_sbox,
    .available = NULL,
    .set_encrypt_key = cl_rj_expand_key,
    .set_decrypt_key = cl_rj_expand_key,
    .encrypt = rj_encrypt,
    .decrypt = rj_decrypt,
    .init_hook = NULL,
};

/*
 * saferplus/ref.c -- SAFER+ (see cipherlab.h).
 *
 * Written from Cylink's AES submission "Nomination of SAFER+ as Candidate
 * Algorithm for the AES" (Massey, Khachatrian, Kuregian; 12 June 1998),
 * shared/specs/saferplus-aes-submission.pdf (numbers from the decoded text
 * layer, checked against the page images):
 *   - byte numbering (byte 1 = first byte), rounds r = 8/12/16, output
 *     transformation with K_{2r+1}: Sec. 2.1, PDF p3;
 *   - encryption round (xor/add K_{2i-1}, exp/log, add/xor K_{2i}, y = xM):
 *     Sec. 2.1.1, p4-p5 and Fig. 2 (p41); decryption round Sec. 2.1.2, p5-p7;
 *   - key schedules (17/25/33-byte key register, rotate every byte left by 3,
 *     add bias word B_i to 16 consecutive register bytes): Sec. 2.1.3, p8-p11;
 *   - worked examples with all round subkeys: p12 (128), p13 (192), p14 (256).
 * Byte order: block and key bytes in natural order, SAFER+ byte 1 = byte 0.
 *
 * Bytes 1,4,5,8,9,12,13,16 ("A" bytes: index 0,3,4,7,8,11,12,15) take
 * xor-key, exp, add-key; the others ("B" bytes) add-key, log, xor-key.
 * The matrix M is applied as 4 levels of 8 PHT butterflies with a fixed
 * shuffle between levels (recovered from M by gen_tables.py); the shuffles
 * are renamings of the 16 state variables, so a round is 16 table lookups,
 * 32 key additions and 128 byte additions.  State bytes live in unsigned
 * ints and are reduced mod 256 only where a table is indexed or a byte is
 * stored (all operations are additions/xors, so the low 8 bits are exact).
 */
#include <stddef.h>
#include <stdint.h>

#include "cipherlab.h"
#include "cl_bytes.h"

#define SAFERP_MAX_ROUNDS 16

typedef struct {
    uint8_t K[2 * SAFERP_MAX_ROUNDS + 1][16]; /* K[i] = round subkey K_{i+1} */
    uint32_t rounds;                          /* 8, 12 or 16 */
} saferp_ks;

static const unsigned short saferp_key_bits[] = {128, 192, 256, 0};

/* One PHT butterfly (a, b) -> (2a + b, a + b) on each of 8 pairs, and its
 * inverse (2a + b, a + b) -> (a, b). */
#define PHT1(a, b) b += a; a += b;
#define IPHT1(a, b) a -= b; b -= a;
#define PHT(a0, b0, a1, b1, a2, b2, a3, b3, a4, b4, a5, b5, a6, b6, a7, b7) \
    PHT1(a0, b0) PHT1(a1, b1) PHT1(a2, b2) PHT1(a3, b3)                      \
    PHT1(a4, b4) PHT1(a5, b5) PHT1(a6, b6) PHT1(a7, b7)
#define IPHT(a0, b0, a1, b1, a2, b2, a3, b3, a4, b4, a5, b5, a6, b6, a7, b7) \
    IPHT1(a0, b0) IPHT1(a1, b1) IPHT1(a2, b2) IPHT1(a3, b3)                  \
    IPHT1(a4, b4) IPHT1(a5, b5) IPHT1(a6, b6) IPHT1(a7, b7)
/* x_j = j-th argument, all at once. */
#define SAFERP_RENAME(n0, n1, n2, n3, n4, n5, n6, n7, n8, n9, n10, n11, n12, n13, n14, n15) \
    {                                                                                    \
        unsigned t0 = n0, t1 = n1, t2 = n2, t3 = n3, t4 = n4, t5 = n5, t6 = n6, t7 = n7; \
        unsigned t8 = n8, t9 = n9, t10 = n10, t11 = n11, t12 = n12, t13 = n13;           \
        unsigned t14 = n14, t15 = n15;                                                   \
        x0 = t0, x1 = t1, x2 = t2, x3 = t3, x4 = t4, x5 = t5, x6 = t6, x7 = t7;          \
        x8 = t8, x9 = t9, x10 = t10, x11 = t11, x12 = t12, x13 = t13, x14 = t14;         \
        x15 = t15;                                                                       \
    }

/* BEGIN GENERATED TABLES (gen_tables.py) */
/* exp[x] = 45^x mod 257 (256 -> 0), log = inverse (log 0 = 128); Sec. 2.1.1, PDF p4.  By gen_tables.py. */
static const uint8_t saferp_exp[256] = {
      1,  45, 226, 147, 190,  69,  21, 174, 120,   3, 135, 164, 184,  56, 207,  63,
      8, 103,   9, 148, 235,  38, 168, 107, 189,  24,  52,  27, 187, 191, 114, 247,
     64,  53,  72, 156,  81,  47,  59,  85, 227, 192, 159, 216, 211, 243, 141, 177,
    255, 167,  62, 220, 134, 119, 215, 166,  17, 251, 244, 186, 146, 145, 100, 131,
    241,  51, 239, 218,  44, 181, 178,  43, 136, 209, 153, 203, 140, 132,  29,  20,
    129, 151, 113, 202,  95, 163, 139,  87,  60, 130, 196,  82,  92,  28, 232, 160,
      4, 180, 133,  74, 246,  19,  84, 182, 223,  12,  26, 142, 222, 224,  57, 252,
     32, 155,  36,  78, 169, 152, 158, 171, 242,  96, 208, 108, 234, 250, 199, 217,
      0, 212,  31, 110,  67, 188, 236,  83, 137, 254, 122,  93,  73, 201,  50, 194,
    249, 154, 248, 109,  22, 219,  89, 150,  68, 233, 205, 230,  70,  66, 143,  10,
    193, 204, 185, 101, 176, 210, 198, 172,  30,  65,  98,  41,  46,  14, 116,  80,
      2,  90, 195,  37, 123, 138,  42,  91, 240,   6,  13,  71, 111, 112, 157, 126,
     16, 206,  18,  39, 213,  76,  79, 214, 121,  48, 104,  54, 117, 125, 228, 237,
    128, 106, 144,  55, 162,  94, 118, 170, 197, 127,  61, 175, 165, 229,  25,  97,
    253,  77, 124, 183,  11, 238, 173,  75,  34, 245, 231, 115,  35,  33, 200,   5,
    225, 102, 221, 179,  88, 105,  99,  86,  15, 161,  49, 149,  23,   7,  58,  40,
};
static const uint8_t saferp_log[256] = {
    128,   0, 176,   9,  96, 239, 185, 253,  16,  18, 159, 228, 105, 186, 173, 248,
    192,  56, 194, 101,  79,   6, 148, 252,  25, 222, 106,  27,  93,  78, 168, 130,
    112, 237, 232, 236, 114, 179,  21, 195, 255, 171, 182,  71,  68,   1, 172,  37,
    201, 250, 142,  65,  26,  33, 203, 211,  13, 110, 254,  38,  88, 218,  50,  15,
     32, 169, 157, 132, 152,   5, 156, 187,  34, 140,  99, 231, 197, 225, 115, 198,
    175,  36,  91, 135, 102,  39, 247,  87, 244, 150, 177, 183,  92, 139, 213,  84,
    121, 223, 170, 246,  62, 163, 241,  17, 202, 245, 209,  23, 123, 147, 131, 188,
    189,  82,  30, 235, 174, 204, 214,  53,   8, 200, 138, 180, 226, 205, 191, 217,
    208,  80,  89,  63,  77,  98,  52,  10,  72, 136, 181,  86,  76,  46, 107, 158,
    210,  61,  60,   3,  19, 251, 151,  81, 117,  74, 145, 113,  35, 190, 118,  42,
     95, 249, 212,  85,  11, 220,  55,  49,  22, 116, 215, 119, 167, 230,   7, 219,
    164,  47,  70, 243,  97,  69, 103, 227,  12, 162,  59,  28, 133,  24,   4,  29,
     41, 160, 143, 178,  90, 216, 166, 126, 238, 141,  83,  75, 161, 154, 193,  14,
    122,  73, 165,  44, 129, 196, 199,  54,  43, 127,  67, 149,  51, 242, 108, 104,
    109, 240,   2,  40, 206, 221, 155, 234,  94, 153, 124,  20, 134, 207, 229,  66,
    184,  64, 120,  45,  58, 233, 100,  31, 146, 144, 125,  57, 111, 224, 137,  48,
};

/* Bias words B2..B33 (bias[i-2] = B_i): formulas of Sec. 2.1.3 (PDF p8), equal to Table I (p9).
 * By gen_tables.py. */
static const uint8_t saferp_bias[32][16] = {
    { 70, 151, 177, 186, 163, 183,  16,  10, 197,  55, 179, 201,  90,  40, 172, 100},
    {236, 171, 170, 198, 103, 149,  88,  13, 248, 154, 246, 110, 102, 220,   5,  61},
    {138, 195, 216, 137, 106, 233,  54,  73,  67, 191, 235, 212, 150, 155, 104, 160},
    { 93,  87, 146,  31, 213, 113,  92, 187,  34, 193, 190, 123, 188, 153,  99, 148},
    { 42,  97, 184,  52,  50,  25, 253, 251,  23,  64, 230,  81,  29,  65,  68, 143},
    {221,   4, 128, 222, 231,  49, 214, 127,   1, 162, 247,  57, 218, 111,  35, 202},
    { 58, 208,  28, 209,  48,  62,  18, 161, 205,  15, 224, 168, 175, 130,  89,  44},
    {125, 173, 178, 239, 194, 135, 206, 117,   6,  19,   2, 144,  79,  46, 114,  51},
    {192, 141, 207, 169, 129, 226, 196,  39,  47, 108, 122, 159,  82, 225,  21,  56},
    {252,  32,  66, 199,   8, 228,   9,  85,  94, 140,  20, 118,  96, 255, 223, 215},
    {250,  11,  33,   0,  26, 249, 166, 185, 232, 158,  98,  76, 217, 145,  80, 210},
    { 24, 180,   7, 132, 234,  91, 164, 200,  14, 203,  72, 105,  75,  78, 156,  53},
    { 69,  77,  84, 229,  37,  60,  12,  74, 139,  63, 204, 167, 219, 107, 174, 244},
    { 45, 243, 124, 109, 157, 181,  38, 116, 242, 147,  83, 176, 240,  17, 237, 131},
    {182,   3,  22, 115,  59,  30, 142, 112, 189, 134,  27,  71, 126,  36,  86, 241},
    {136,  70, 151, 177, 186, 163, 183,  16,  10, 197,  55, 179, 201,  90,  40, 172},
    {220, 134, 119, 215, 166,  17, 251, 244, 186, 146, 145, 100, 131, 241,  51, 239},
    { 44, 181, 178,  43, 136, 209, 153, 203, 140, 132,  29,  20, 129, 151, 113, 202},
    {163, 139,  87,  60, 130, 196,  82,  92,  28, 232, 160,   4, 180, 133,  74, 246},
    { 84, 182, 223,  12,  26, 142, 222, 224,  57, 252,  32, 155,  36,  78, 169, 152},
    {171, 242,  96, 208, 108, 234, 250, 199, 217,   0, 212,  31, 110,  67, 188, 236},
    {137, 254, 122,  93,  73, 201,  50, 194, 249, 154, 248, 109,  22, 219,  89, 150},
    {233, 205, 230,  70,  66, 143,  10, 193, 204, 185, 101, 176, 210, 198, 172,  30},
    { 98,  41,  46,  14, 116,  80,   2,  90, 195,  37, 123, 138,  42,  91, 240,   6},
    { 71, 111, 112, 157, 126,  16, 206,  18,  39, 213,  76,  79, 214, 121,  48, 104},
    {117, 125, 228, 237, 128, 106, 144,  55, 162,  94, 118, 170, 197, 127,  61, 175},
    {229,  25,  97, 253,  77, 124, 183,  11, 238, 173,  75,  34, 245, 231, 115,  35},
    {200,   5, 225, 102, 221, 179,  88, 105,  99,  86,  15, 161,  49, 149,  23,   7},
    { 40,   1,  45, 226, 147, 190,  69,  21, 174, 120,   3, 135, 164, 184,  56, 207},
    {  8, 103,   9, 148, 235,  38, 168, 107, 189,  24,  52,  27, 187, 191, 114, 247},
    { 53,  72, 156,  81,  47,  59,  85, 227, 192, 159, 216, 211, 243, 141, 177, 255},
    { 62, 220, 134, 119, 215, 166,  17, 251, 244, 186, 146, 145, 100, 131, 241,  51},
};

/* y = xM (p5) as 4 levels of 8 PHT butterflies with the shuffle sigma = {8, 11, 12, 15, 2, 1, 6, 5, 10, 9, 14, 13, 0, 7, 4, 3}
 * (new[j] = old[sigma[j]], 0-based) between levels; sigma recovered from M by gen_tables.py. */
/* y = xM on x0..x15 (byte j in xj); the result is renamed back into x0..x15 */
#define SAFERP_M \
    PHT(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15) \
    PHT(x8, x11, x12, x15, x2, x1, x6, x5, x10, x9, x14, x13, x0, x7, x4, x3) \
    PHT(x10, x13, x0, x3, x12, x11, x6, x1, x14, x9, x4, x7, x8, x5, x2, x15) \
    PHT(x14, x7, x8, x15, x0, x13, x6, x11, x4, x9, x2, x5, x10, x1, x12, x3) \
    SAFERP_RENAME(x14, x7, x8, x15, x0, x13, x6, x11, x4, x9, x2, x5, x10, x1, x12, x3)

/* x = yM^-1 (p6): the same network run backwards */
#define SAFERP_MINV \
    IPHT(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15) \
    IPHT(x12, x5, x4, x15, x14, x7, x6, x13, x0, x9, x8, x1, x2, x11, x10, x3) \
    IPHT(x2, x7, x14, x3, x10, x13, x6, x11, x12, x9, x0, x5, x4, x1, x8, x15) \
    IPHT(x4, x13, x10, x15, x8, x11, x6, x1, x2, x9, x12, x7, x14, x5, x0, x3) \
    SAFERP_RENAME(x4, x13, x10, x15, x8, x11, x6, x1, x2, x9, x12, x7, x14, x5, x0, x3)
/* END GENERATED TABLES */

/* Key schedule, Sec. 2.1.3 (p8-p11): K1 = first 16 key bytes; the register
 * holds the n key bytes plus their xor; for i = 2..2r+1 every register byte
 * is rotated left by 3 and K_i[j] = reg[(i - 1 + j) mod (n + 1)] + B_i[j]. */
static int saferp_set_key(void *vks, const uint8_t *key, unsigned key_bits)
{
    saferp_ks *ks = (saferp_ks *)vks;
    uint8_t reg[33];
    unsigned n = key_bits / 8, rounds;
    switch (key_bits) {
    case 128: rounds = 8; break;
    case 192: rounds = 12; break;
    case 256: rounds = 16; break;
    default: return CL_BAD_KEY_LENGTH;
    }
    ks->rounds = rounds;
    uint8_t parity = 0;
    for (unsigned j = 0; j < n; j++) {
        reg[j] = key[j];
        parity ^= key[j];
    }
    reg[n] = parity;
    for (unsigned j = 0; j < 16; j++)
        ks->K[0][j] = key[j];
    for (unsigned i = 2; i <= 2 * rounds + 1; i++) {
        for (unsigned j = 0; j <= n; j++)
            reg[j] = cl_rotl8(reg[j], 3);
        unsigned pos = i - 1;
        for (unsigned j = 0; j < 16; j++) {
            ks->K[i - 1][j] = (uint8_t)(reg[pos] + saferp_bias[i - 2][j]);
            if (++pos == n + 1)
                pos = 0;
        }
    }
    return CL_OK;
}

#define EXP(v) saferp_exp[(v) & 0xFF]
#define LOG(v) saferp_log[(v) & 0xFF]

/* Encryption round with subkeys k1 = K_{2i-1}, k2 = K_{2i} (p4, Fig. 2). */
#define ENC_ROUND(k1, k2)                                                             \
    do {                                                                              \
        x0 = EXP(x0 ^ k1[0]) + k2[0];     x1 = LOG(x1 + k1[1]) ^ k2[1];               \
        x2 = LOG(x2 + k1[2]) ^ k2[2];     x3 = EXP(x3 ^ k1[3]) + k2[3];               \
        x4 = EXP(x4 ^ k1[4]) + k2[4];     x5 = LOG(x5 + k1[5]) ^ k2[5];               \
        x6 = LOG(x6 + k1[6]) ^ k2[6];     x7 = EXP(x7 ^ k1[7]) + k2[7];               \
        x8 = EXP(x8 ^ k1[8]) + k2[8];     x9 = LOG(x9 + k1[9]) ^ k2[9];               \
        x10 = LOG(x10 + k1[10]) ^ k2[10]; x11 = EXP(x11 ^ k1[11]) + k2[11];           \
        x12 = EXP(x12 ^ k1[12]) + k2[12]; x13 = LOG(x13 + k1[13]) ^ k2[13];           \
        x14 = LOG(x14 + k1[14]) ^ k2[14]; x15 = EXP(x15 ^ k1[15]) + k2[15];           \
        SAFERP_M                                                                      \
    } while (0)

/* Decryption round undoing the encryption round with k1, k2 (p5-p7). */
#define DEC_ROUND(k1, k2)                                                             \
    do {                                                                              \
        SAFERP_MINV                                                                   \
        x0 = LOG(x0 - k2[0]) ^ k1[0];     x1 = EXP(x1 ^ k2[1]) - k1[1];               \
        x2 = EXP(x2 ^ k2[2]) - k1[2];     x3 = LOG(x3 - k2[3]) ^ k1[3];               \
        x4 = LOG(x4 - k2[4]) ^ k1[4];     x5 = EXP(x5 ^ k2[5]) - k1[5];               \
        x6 = EXP(x6 ^ k2[6]) - k1[6];     x7 = LOG(x7 - k2[7]) ^ k1[7];               \
        x8 = LOG(x8 - k2[8]) ^ k1[8];     x9 = EXP(x9 ^ k2[9]) - k1[9];               \
        x10 = EXP(x10 ^ k2[10]) - k1[10]; x11 = LOG(x11 - k2[11]) ^ k1[11];           \
        x12 = LOG(x12 - k2[12]) ^ k1[12]; x13 = EXP(x13 ^ k2[13]) - k1[13];           \
        x14 = EXP(x14 ^ k2[14]) - k1[14]; x15 = LOG(x15 - k2[15]) ^ k1[15];           \
    } while (0)

/* "A" bytes combine with the key by xor, "B" bytes by addition (A/B as above);
 * OP_A/OP_B pick the operations for the output/input transformation. */
#define KEY_LAYER(k, OP_A, OP_B)                                                      \
    do {                                                                              \
        x0 = x0 OP_A k[0];    x1 = x1 OP_B k[1];    x2 = x2 OP_B k[2];                \
        x3 = x3 OP_A k[3];    x4 = x4 OP_A k[4];    x5 = x5 OP_B k[5];                \
        x6 = x6 OP_B k[6];    x7 = x7 OP_A k[7];    x8 = x8 OP_A k[8];                \
        x9 = x9 OP_B k[9];    x10 = x10 OP_B k[10]; x11 = x11 OP_A k[11];             \
        x12 = x12 OP_A k[12]; x13 = x13 OP_B k[13]; x14 = x14 OP_B k[14];             \
        x15 = x15 OP_A k[15];                                                         \
    } while (0)

#define LOAD_STATE(p)                                                                 \
    unsigned x0 = p[0], x1 = p[1], x2 = p[2], x3 = p[3], x4 = p[4], x5 = p[5];        \
    unsigned x6 = p[6], x7 = p[7], x8 = p[8], x9 = p[9], x10 = p[10], x11 = p[11];    \
    unsigned x12 = p[12], x13 = p[13], x14 = p[14], x15 = p[15]
#define STORE_STATE(p)                                                                \
    do {                                                                              \
        p[0] = (uint8_t)x0; p[1] = (uint8_t)x1; p[2] = (uint8_t)x2;                   \
        p[3] = (uint8_t)x3; p[4] = (uint8_t)x4; p[5] = (uint8_t)x5;                   \
        p[6] = (uint8_t)x6; p[7] = (uint8_t)x7; p[8] = (uint8_t)x8;                   \
        p[9] = (uint8_t)x9; p[10] = (uint8_t)x10; p[11] = (uint8_t)x11;               \
        p[12] = (uint8_t)x12; p[13] = (uint8_t)x13; p[14] = (uint8_t)x14;             \
        p[15] = (uint8_t)x15;                                                         \
    } while (0)

static void saferp_encrypt(const void *vks, const uint8_t *in, uint8_t *out, size_t n)
{
    const saferp_ks *ks = (const saferp_ks *)vks;
    const uint8_t(*K)[16] = ks->K;
    const unsigned rounds = ks->rounds;
    for (; n; n--, in += 16, out += 16) {
        LOAD_STATE(in);
        for (unsigned i = 0; i < rounds; i++) {
            const uint8_t *k1 = K[2 * i], *k2 = K[2 * i + 1];
            ENC_ROUND(k1, k2);
        }
        const uint8_t *kl = K[2 * rounds];
        KEY_LAYER(kl, ^, +); /* output transformation with K_{2r+1} (p3) */
        STORE_STATE(out);
    }
}

static void saferp_decrypt(const void *vks, const uint8_t *in, uint8_t *out, size_t n)
{
    const saferp_ks *ks = (const saferp_ks *)vks;
    const uint8_t(*K)[16] = ks->K;
    const unsigned rounds = ks->rounds;
    for (; n; n--, in += 16, out += 16) {
        LOAD_STATE(in);
        const uint8_t *kl = K[2 * rounds];
        KEY_LAYER(kl, ^, -); /* input transformation (p3) */
        for (unsigned i = rounds; i-- > 0;) {
            const uint8_t *k1 = K[2 * i], *k2 = K[2 * i + 1];
            DEC_ROUND(k1, k2);
        }
        STORE_STATE(out);
    }
}

const cl_impl cl_impl_saferplus_ref = {
    .cipher = "saferplus",
    .strategy = "ref",
    .block_bytes = 16,
    .key_bits = saferp_key_bits,
    .ks_bytes = sizeof(saferp_ks),
    .table_bytes = sizeof saferp_exp + sizeof saferp_log + sizeof saferp_bias,
    .available = NULL,
    .set_encrypt_key = saferp_set_key,
    .set_decrypt_key = saferp_set_key,
    .encrypt = saferp_encrypt,
    .decrypt = saferp_decrypt,
    .init_hook = NULL,
};

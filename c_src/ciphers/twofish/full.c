/*
 * twofish/full.c -- Twofish with "full keying" (see cipherlab.h).
 *
 * Written from the Twofish AES submission (Schneier, Kelsey, Whiting, Wagner,
 * Hall, Ferguson, 15 June 1998), shared/specs/twofish-aes-submission.pdf:
 *   - bytes to words little-endian, whitening, 16 rounds, output swap: Sec. 4 (p7);
 *   - F and g: Sec. 4.1-4.2 (p7); MDS: p8; key schedule: Sec. 4.3 (p8-p10);
 *   - "Full Keying" (Sec. 5.1, p12): each key-dependent S-box s_j is expanded
 *     into a 256-word table that already holds the product with MDS column j,
 *     so g(X) is four lookups and three xors.
 * Key schedule: 4 x 256 words of S-box tables + the 40 expanded key words
 * (4256 bytes), the same for encryption and decryption.  The only static
 * tables (q0/q1 and the MDS-with-last-q tables of twofish_core.c) are used by
 * the key setup, not by the block loop.
 */
#include <stddef.h>
#include <stdint.h>

#include "cipherlab.h"
#include "cl_bytes.h"
#include "twofish_core.h"

typedef struct {
    uint32_t S[4][256]; /* S[j][x] = MDS column j * s_j(x) */
    uint32_t K[40];
} twofish_full_ks;

static const unsigned short twofish_key_bits[] = {128, 192, 256, 0};

/* S[j][x] = MDS column j times s_j(x) = mq[j][lane_j(x)] (see twofish_core.h). */
#define FILL_SBOXES(K3, K4)                                                   \
    for (unsigned x = 0; x < 256; x++) {                                      \
        ks->S[0][x] = cl_twofish_mq[0][CL_TWOFISH_LANE0(x, kb, K3, K4)];      \
        ks->S[1][x] = cl_twofish_mq[1][CL_TWOFISH_LANE1(x, kb, K3, K4)];      \
        ks->S[2][x] = cl_twofish_mq[2][CL_TWOFISH_LANE2(x, kb, K3, K4)];      \
        ks->S[3][x] = cl_twofish_mq[3][CL_TWOFISH_LANE3(x, kb, K3, K4)];      \
    }

static int twofish_full_set_key(void *vks, const uint8_t *key, unsigned key_bits)
{
    twofish_full_ks *ks = (twofish_full_ks *)vks;
    cl_twofish_keyinfo ki;
    if (cl_twofish_expand(&ki, key, key_bits) != 0)
        return CL_BAD_KEY_LENGTH;
    for (unsigned i = 0; i < 40; i++)
        ks->K[i] = ki.K[i];
    uint8_t(*kb)[4] = ki.sbox_key;
    switch (ki.k) {
    case 2: FILL_SBOXES(0, 0); break;
    case 3: FILL_SBOXES(1, 0); break;
    default: FILL_SBOXES(1, 1); break;
    }
    return CL_OK;
}

/* Byte n of a word as an unsigned table index (not CL_BYTE's uint8_t, which
 * gcc widened again before addressing). */
#define TF_B0(x) ((x) & 0xffu)
#define TF_B1(x) (((x) >> 8) & 0xffu)
#define TF_B2(x) (((x) >> 16) & 0xffu)
#define TF_B3(x) ((x) >> 24)

/* g(X) and g(ROL(X, 8)) (Sec. 4.1-4.2).  S is the [4][256] table of the key
 * schedule, addressed from one base register.  G0/G1 leave the order of the
 * four xors to the compiler (a chain in either); G0P/G1P, for the one-block
 * loops, where each round waits for the one before it, keep two pairs and
 * xor the pairs (CL_OPAQUE stops gcc and clang from rebuilding a chain;
 * clang then computes the pairs as it loads). */
static inline uint32_t tf_pairs(uint32_t p, uint32_t q)
{
    CL_OPAQUE(p);
    CL_OPAQUE(q);
    return p ^ q;
}
#define G0(x) (S[0][TF_B0(x)] ^ S[1][TF_B1(x)] ^ S[2][TF_B2(x)] ^ S[3][TF_B3(x)])
#define G1(x) (S[0][TF_B3(x)] ^ S[1][TF_B0(x)] ^ S[2][TF_B1(x)] ^ S[3][TF_B2(x)])
#define G0P(x) tf_pairs(S[0][TF_B0(x)] ^ S[1][TF_B1(x)], S[2][TF_B2(x)] ^ S[3][TF_B3(x)])
#define G1P(x) tf_pairs(S[0][TF_B3(x)] ^ S[1][TF_B0(x)], S[2][TF_B1(x)] ^ S[3][TF_B2(x)])

/* One round on block (a, b, c, d) with subkeys K[k], K[k+1] and g evaluated by GA, GB: encryption updates (c, d) from (a, b),
 * decryption undoes it.  The two-block loops below run two blocks' rounds side by side: a round waits
 * for its four loads and the other block's round fills that wait.
 * Each round is a chain (its output words are the next round's indices), and a one-block call waits for
 * all 16 of them, so the sums are ordered for latency: in encryption c, the input of u0 in the next
 * round, leaves a round one operation (the rotation) after d, the input of u1; so u1 is ready first and
 * u1 + K, 2 * u1 + K are formed while u0's loads are still under way, leaving one addition after u0.
 * clang orders a sum by where its terms are defined, hence k0, k1 first and u1 before u0 in encryption
 * (decryption is the other way round); gcc 12 reassociates it back into (u0 + u1) + K whatever the
 * order, so TF_EARLY hides the early partial sum from its reassociation (an empty asm statement, no
 * instruction). */
#if defined(__GNUC__) && !defined(__clang__)
#define TF_EARLY(v) CL_OPAQUE(v)
#else
#define TF_EARLY(v) ((void)0)
#endif
#define ENC_RG(a, b, c, d, k, GA, GB)                                    \
    do {                                                                  \
        uint32_t k0 = K[k], k1 = K[(k) + 1];                              \
        uint32_t u1 = GB(b);                                              \
        uint32_t u0 = GA(a);                                              \
        uint32_t v0 = k0 + u1, v1 = k1 + 2 * u1;                          \
        TF_EARLY(v0);                                                     \
        TF_EARLY(v1);                                                     \
        c = cl_rotr32(c ^ (v0 + u0), 1);                                  \
        d = cl_rotl32(d, 1) ^ (v1 + u0);                                  \
    } while (0)
#define DEC_RG(a, b, c, d, k, GA, GB)                                    \
    do {                                                                  \
        uint32_t k0 = K[k], k1 = K[(k) + 1];                              \
        uint32_t u0 = GA(a);                                              \
        uint32_t u1 = GB(b);                                              \
        uint32_t v0 = k0 + u0, v1 = k1 + u0;                              \
        TF_EARLY(v0);                                                     \
        TF_EARLY(v1);                                                     \
        c = cl_rotl32(c, 1) ^ (v0 + u1);                                  \
        d = cl_rotr32(d ^ (v1 + 2 * u1), 1);                              \
    } while (0)
#define ENC_R(a, b, c, d, k) ENC_RG(a, b, c, d, k, G0, G1)
#define DEC_R(a, b, c, d, k) DEC_RG(a, b, c, d, k, G0, G1)
#define ENC2_X2(r)                                                        \
    do {                                                                  \
        ENC_R(a0, a1, a2, a3, 4 * (r) + 8); ENC_R(b0, b1, b2, b3, 4 * (r) + 8);   \
        ENC_R(a2, a3, a0, a1, 4 * (r) + 10); ENC_R(b2, b3, b0, b1, 4 * (r) + 10); \
    } while (0)
#define DEC2_X2(r)                                                        \
    do {                                                                  \
        DEC_R(a2, a3, a0, a1, 4 * (r) + 10); DEC_R(b2, b3, b0, b1, 4 * (r) + 10); \
        DEC_R(a0, a1, a2, a3, 4 * (r) + 8); DEC_R(b0, b1, b2, b3, 4 * (r) + 8);   \
    } while (0)
/* Rounds 2r and 2r+1 of one block (x0..x3) without the swap, as CL_TWOFISH_ENC2/DEC2 of twofish_core.h.
 * The one-block loops hold x0..x3 as size_t (values below 2^32): as uint32_t, gcc 12 followed each
 * movzbl of a high byte register (byte 1's index) with a mov of the register to itself. */
/* Encryption's one-block rounds also keep w, the word before the rotation of the c path (c = ROR(w, 1)):
 * byte 2 of c, the one index that is a shift and a mask, is bits 17..24 of w, one shift from w instead
 * of one after the rotation, so all four indices of the next g(X) are ready together (G0PW). */
#define G0PW(x, w) tf_pairs(S[0][TF_B0(x)] ^ S[1][TF_B1(x)], S[2][((w) >> 17) & 0xffu] ^ S[3][TF_B3(x)])
#define ENC_RW(a, wa, b, c, wc, d, k)                                     \
    do {                                                                  \
        uint32_t k0 = K[k], k1 = K[(k) + 1];                              \
        uint32_t u1 = G1P(b);                                             \
        uint32_t u0 = G0PW(a, wa);                                        \
        uint32_t v0 = k0 + u1, v1 = k1 + 2 * u1;                          \
        TF_EARLY(v0);                                                     \
        TF_EARLY(v1);                                                     \
        wc = c ^ (v0 + u0);                                               \
        c = cl_rotr32(wc, 1);                                             \
        d = cl_rotl32(d, 1) ^ (v1 + u0);                                  \
    } while (0)
#define ENC_X2(r)                                                         \
    do {                                                                  \
        ENC_RW(x0, w0, x1, x2, w2, x3, 4 * (r) + 8);                      \
        ENC_RW(x2, w2, x3, x0, w0, x1, 4 * (r) + 10);                     \
    } while (0)
#define DEC_X2(r)                                                         \
    do {                                                                  \
        DEC_RG(x2, x3, x0, x1, 4 * (r) + 10, G0P, G1P);                   \
        DEC_RG(x0, x1, x2, x3, 4 * (r) + 8, G0P, G1P);                    \
    } while (0)

static void twofish_full_encrypt(const void *vks, const uint8_t *in, uint8_t *out, size_t n)
{
    const twofish_full_ks *ks = (const twofish_full_ks *)vks;
    const uint32_t(*S)[256] = ks->S;
    const uint32_t *K = ks->K;
    for (; n >= 2; n -= 2, in += 32, out += 32) {
        uint32_t a0 = cl_load32_le(in) ^ K[0], b0 = cl_load32_le(in + 16) ^ K[0];
        uint32_t a1 = cl_load32_le(in + 4) ^ K[1], b1 = cl_load32_le(in + 20) ^ K[1];
        uint32_t a2 = cl_load32_le(in + 8) ^ K[2], b2 = cl_load32_le(in + 24) ^ K[2];
        uint32_t a3 = cl_load32_le(in + 12) ^ K[3], b3 = cl_load32_le(in + 28) ^ K[3];
        ENC2_X2(0); ENC2_X2(1); ENC2_X2(2); ENC2_X2(3);
        ENC2_X2(4); ENC2_X2(5); ENC2_X2(6); ENC2_X2(7);
        cl_store32_le(out, a2 ^ K[4]);
        cl_store32_le(out + 4, a3 ^ K[5]);
        cl_store32_le(out + 8, a0 ^ K[6]);
        cl_store32_le(out + 12, a1 ^ K[7]);
        cl_store32_le(out + 16, b2 ^ K[4]);
        cl_store32_le(out + 20, b3 ^ K[5]);
        cl_store32_le(out + 24, b0 ^ K[6]);
        cl_store32_le(out + 28, b1 ^ K[7]);
    }
    for (; n; n--, in += 16, out += 16) {
        size_t x0 = cl_load32_le(in) ^ K[0];
        size_t x1 = cl_load32_le(in + 4) ^ K[1];
        size_t x2 = cl_load32_le(in + 8) ^ K[2];
        size_t x3 = cl_load32_le(in + 12) ^ K[3];
        size_t w0 = cl_rotl32((uint32_t)x0, 1), w2;
        ENC_X2(0); ENC_X2(1); ENC_X2(2); ENC_X2(3);
        ENC_X2(4); ENC_X2(5); ENC_X2(6); ENC_X2(7);
        /* the last swap is undone: C = (R2, R3, R0, R1) ^ K4..K7 */
        cl_store32_le(out, x2 ^ K[4]);
        cl_store32_le(out + 4, x3 ^ K[5]);
        cl_store32_le(out + 8, x0 ^ K[6]);
        cl_store32_le(out + 12, x1 ^ K[7]);
    }
}

static void twofish_full_decrypt(const void *vks, const uint8_t *in, uint8_t *out, size_t n)
{
    const twofish_full_ks *ks = (const twofish_full_ks *)vks;
    const uint32_t(*S)[256] = ks->S;
    const uint32_t *K = ks->K;
    for (; n >= 2; n -= 2, in += 32, out += 32) {
        uint32_t a2 = cl_load32_le(in) ^ K[4], b2 = cl_load32_le(in + 16) ^ K[4];
        uint32_t a3 = cl_load32_le(in + 4) ^ K[5], b3 = cl_load32_le(in + 20) ^ K[5];
        uint32_t a0 = cl_load32_le(in + 8) ^ K[6], b0 = cl_load32_le(in + 24) ^ K[6];
        uint32_t a1 = cl_load32_le(in + 12) ^ K[7], b1 = cl_load32_le(in + 28) ^ K[7];
        DEC2_X2(7); DEC2_X2(6); DEC2_X2(5); DEC2_X2(4);
        DEC2_X2(3); DEC2_X2(2); DEC2_X2(1); DEC2_X2(0);
        cl_store32_le(out, a0 ^ K[0]);
        cl_store32_le(out + 4, a1 ^ K[1]);
        cl_store32_le(out + 8, a2 ^ K[2]);
        cl_store32_le(out + 12, a3 ^ K[3]);
        cl_store32_le(out + 16, b0 ^ K[0]);
        cl_store32_le(out + 20, b1 ^ K[1]);
        cl_store32_le(out + 24, b2 ^ K[2]);
        cl_store32_le(out + 28, b3 ^ K[3]);
    }
    for (; n; n--, in += 16, out += 16) {
        size_t x2 = cl_load32_le(in) ^ K[4];
        size_t x3 = cl_load32_le(in + 4) ^ K[5];
        size_t x0 = cl_load32_le(in + 8) ^ K[6];
        size_t x1 = cl_load32_le(in + 12) ^ K[7];
        DEC_X2(7); DEC_X2(6); DEC_X2(5); DEC_X2(4);
        DEC_X2(3); DEC_X2(2); DEC_X2(1); DEC_X2(0);
        cl_store32_le(out, x0 ^ K[0]);
        cl_store32_le(out + 4, x1 ^ K[1]);
        cl_store32_le(out + 8, x2 ^ K[2]);
        cl_store32_le(out + 12, x3 ^ K[3]);
    }
}

const cl_impl cl_impl_twofish_full = {
    .cipher = "twofish",
    .strategy = "full",
    .block_bytes = 16,
    .key_bits = twofish_key_bits,
    .ks_bytes = sizeof(twofish_full_ks),
    .table_bytes = CL_TWOFISH_TABLE_BYTES,
    .available = NULL,
    .set_encrypt_key = twofish_full_set_key,
    .set_decrypt_key = twofish_full_set_key,
    .encrypt = twofish_full_encrypt,
    .decrypt = twofish_full_decrypt,
    .init_hook = NULL,
};

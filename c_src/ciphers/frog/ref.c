/*
 * frog/ref.c -- FROG with a 16-byte block (see cipherlab.h).
 *
 * Written from TecApro's AES round-1 submission (Georgoudis, Leroux, Chaves,
 * 1998), ../../../../shared/specs/frog-aes-submission.pdf:
 *   - conventions (byte arrays, index 0 = least significant byte) p3;
 *   - FROGencrypt / FROGdecrypt pseudo-code p6-p7;
 *   - makeInternalKey, hashKey (simpleKey, IV, CBC over 2304 zero bytes)
 *     p10-p12; randomSeed p13; makePermutation p13-p14; Validate p16.
 *
 * FROG works on byte arrays only, so there is no byte-order question: block
 * and key bytes are used in memory order (vectors/README.md explains that the
 * submission's KAT files printed them reversed).  The internal key is the
 * 2304-byte array the spec describes, eight records of xorBu[16],
 * substPermu[256], bombPermu[16], in that order; it is the key schedule.
 * The decryption schedule has every substPermu inverted (p10).
 *
 * Hot path: the block lives in a 16-byte local array (bombPermu indexes it
 * with key-dependent positions, so it cannot be split into registers); the
 * 16 byte steps of a round are unrolled so every other index is a constant.
 * Encryption is one serial chain of 128 table lookups; FROG_ENC_STEP below
 * explains how its critical path is cut to load -> xor -> load.  Decryption
 * has no such chain and follows the pseudo-code literally.
 * Not constant time: table lookups at secret indices, by design.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cipherlab.h"
#include "cl_bytes.h"

#define FROG_BLOCK 16
#define FROG_ROUNDS 8
#define FROG_RECORD (FROG_BLOCK + 256 + FROG_BLOCK) /* 288 bytes */
#define FROG_INTERNAL_KEY (FROG_ROUNDS * FROG_RECORD) /* 2304 bytes, p9 */

typedef struct {
    uint8_t xor_bu[FROG_BLOCK];
    uint8_t subst[256];
    uint8_t bomb[FROG_BLOCK];
} frog_record;

typedef struct {
    frog_record r[FROG_ROUNDS];
} frog_ks;

/* randomSeed: the first 251 five-digit groups of RAND's "A Million Random
 * Digits" mod 256, listed in decimal on p13 of the specification. */
static const uint8_t frog_random_seed[251] = {
    113,  21, 232,  18, 113,  92,  63, 157, 124, 193, 166, 197, 126,  56, 229, 229,
    156, 162,  54,  17, 230,  89, 189,  87, 169,   0,  81, 204,   8,  70, 203, 225,
    160,  59, 167, 189, 100, 157,  84,  11,   7, 130,  29,  51,  32,  45, 135, 237,
    139,  33,  17, 221,  24,  50,  89,  74,  21, 205, 191, 242,  84,  53,   3, 230,
    231, 118,  15,  15, 107,   4,  21,  34,   3, 156,  57,  66,  93, 255, 191,   3,
     85, 135, 205, 200, 185, 204,  52,  37,  35,  24,  68, 185, 201,  10, 224, 234,
      7, 120, 201, 115, 216, 103,  57, 255,  93, 110,  42, 249,  68,  14,  29,  55,
    128,  84,  37, 152, 221, 137,  39,  11, 252,  50, 144,  35, 178, 190,  43, 162,
    103, 249, 109,   8, 235,  33, 158, 111, 252, 205, 169,  54,  10,  20, 221, 201,
    178, 224,  89, 184, 182,  65, 201,  10,  60,   6, 191, 174,  79,  98,  26, 160,
    252,  51,  63,  79,   6, 102, 123, 173,  49,   3, 110, 233,  90, 158, 228, 210,
    209, 237,  30,  95,  28, 179, 204, 220,  72, 163,  77, 166, 192,  98, 165,  25,
    145, 162,  91, 212,  41, 230, 110,   6, 107, 187, 127,  38,  82,  98,  30,  67,
    225,  80, 208, 134,  60, 250, 153,  87, 148,  60,  66, 165,  72,  29, 165,  82,
    211, 207,   0, 177, 206,  13,   6,  14,  92, 248,  60, 201, 132,  95,  35, 215,
    118, 177, 121, 180,  27,  83, 131,  26,  39,  46,  12,
};

static const unsigned short frog_key_bits[] = {128, 192, 256, 0};

/* makePermutation (p14): turns input[0..last_elem] (arbitrary bytes) into a
 * permutation of 0..last_elem, in place. */
static void frog_make_permutation(uint8_t *input, unsigned last_elem)
{
    uint8_t use[256];
    unsigned last = last_elem, index = 0;
    for (unsigned i = 0; i <= last_elem; i++)
        use[i] = (uint8_t)i;
    for (unsigned i = 0; i < last_elem; i++) {
        index = (index + input[i]) % (last + 1);
        input[i] = use[index];
        if (index < last) /* remove use[index] */
            memmove(use + index, use + index + 1, last - index);
        last--;
        if (index > last)
            index = 0;
    }
    input[last_elem] = use[0];
}

/* Validate (p16): make bombPermu a single 16-cycle, then make sure no
 * element points to the next position. */
static void frog_validate(uint8_t *bomb)
{
    uint8_t used[FROG_BLOCK] = {0};
    unsigned index = 0;
    for (unsigned i = 0; i < FROG_BLOCK - 1; i++) {
        if (bomb[index] == 0) { /* short cycle found: splice in the next one */
            unsigned k = index;
            do
                k = (k + 1) % FROG_BLOCK;
            while (used[k]);
            bomb[index] = (uint8_t)k;
            unsigned l = k;
            while (bomb[l] != k)
                l = bomb[l];
            bomb[l] = 0;
        }
        used[index] = 1;
        index = bomb[index];
    }
    for (unsigned i = 0; i < FROG_BLOCK; i++)
        if (bomb[i] == (i + 1) % FROG_BLOCK)
            bomb[i] = (uint8_t)((i + 2) % FROG_BLOCK);
}

/* makeInternalKey (p10): the 2304 bytes of k become a valid internal key. */
static void frog_make_internal_key(frog_ks *k, int for_decryption)
{
    for (unsigned r = 0; r < FROG_ROUNDS; r++) {
        frog_record *rec = &k->r[r];
        frog_make_permutation(rec->subst, 255);
        if (for_decryption) {
            uint8_t inv[256];
            for (unsigned v = 0; v < 256; v++)
                inv[rec->subst[v]] = (uint8_t)v;
            memcpy(rec->subst, inv, sizeof inv);
        }
        frog_make_permutation(rec->bomb, FROG_BLOCK - 1);
        frog_validate(rec->bomb);
    }
}

/* One byte step of FROGencrypt (p6), position I, on a block kept PRE-XORED
 * with the xorBu of the round that will next substitute each byte: c[j] =
 * block[j] ^ xorBu[j] (step 1 done ahead).  Bombing and step 3 xor into c
 * exactly as into the block, and the byte a step writes is stored already
 * xored with the next round's xorBu (XN; zero after the last round).
 * The substitution index of byte I arrives in the register idx.  Step 3 is
 * done in that register: byte I+1 is loaded BEFORE the bombing store (step
 * 4), which is exact because Validate (p16) makes bombPermu[I] != I+1
 * (mod 16) for every internal key, so that store never touches byte I+1.
 * Byte I+1 in memory is left without step 3's xor, and is overwritten by
 * the next step before anything reads it.  The serial chain is then just
 * load S -> xor -> load S (about 2x faster than the literal order); the last
 * step of the last round leaves byte 0 unfinished, fixed at the end. */
#define FROG_ENC_STEP(I)                                       \
    do {                                                       \
        unsigned x_ = S[idx];                                  \
        c[I] = (uint8_t)(x_ ^ XN[I]);                          \
        idx = c[((I) + 1) % FROG_BLOCK] ^ x_;                  \
        c[B[I]] ^= (uint8_t)x_;                                \
    } while (0)

/* The inverse step (p7); S is the inverted substitution here. */
#define FROG_DEC_STEP(I)                                       \
    do {                                                       \
        uint8_t x_ = b[I];                                     \
        b[B[I]] ^= x_;                                         \
        b[((I) + 1) % FROG_BLOCK] ^= x_;                       \
        b[I] = (uint8_t)(S[x_] ^ X[I]);                        \
    } while (0)

static const uint8_t frog_zero_xor[FROG_BLOCK]; /* "xorBu" after the last round */

/* Encrypts in -> out (may alias). */
static void frog_encrypt_block(const frog_ks *k, const uint8_t *in, uint8_t *out)
{
    uint8_t c[FROG_BLOCK];
    cl_store64_le(c, cl_load64_le(in) ^ cl_load64_le(k->r[0].xor_bu));
    cl_store64_le(c + 8, cl_load64_le(in + 8) ^ cl_load64_le(k->r[0].xor_bu + 8));
    unsigned idx = c[0];
    for (unsigned r = 0; r < FROG_ROUNDS; r++) {
        const uint8_t *const S = k->r[r].subst, *const B = k->r[r].bomb;
        const uint8_t *const XN = r + 1 < FROG_ROUNDS ? k->r[r + 1].xor_bu : frog_zero_xor;
        FROG_ENC_STEP(0);  FROG_ENC_STEP(1);  FROG_ENC_STEP(2);  FROG_ENC_STEP(3);
        FROG_ENC_STEP(4);  FROG_ENC_STEP(5);  FROG_ENC_STEP(6);  FROG_ENC_STEP(7);
        FROG_ENC_STEP(8);  FROG_ENC_STEP(9);  FROG_ENC_STEP(10); FROG_ENC_STEP(11);
        FROG_ENC_STEP(12); FROG_ENC_STEP(13); FROG_ENC_STEP(14); FROG_ENC_STEP(15);
    }
    c[0] = (uint8_t)idx;
    memcpy(out, c, FROG_BLOCK);
}

static void frog_decrypt_block(const frog_ks *k, uint8_t b[FROG_BLOCK])
{
    for (unsigned r = FROG_ROUNDS; r-- > 0;) {
        const uint8_t *const X = k->r[r].xor_bu, *const S = k->r[r].subst,
                             *const B = k->r[r].bomb;
        FROG_DEC_STEP(15); FROG_DEC_STEP(14); FROG_DEC_STEP(13); FROG_DEC_STEP(12);
        FROG_DEC_STEP(11); FROG_DEC_STEP(10); FROG_DEC_STEP(9);  FROG_DEC_STEP(8);
        FROG_DEC_STEP(7);  FROG_DEC_STEP(6);  FROG_DEC_STEP(5);  FROG_DEC_STEP(4);
        FROG_DEC_STEP(3);  FROG_DEC_STEP(2);  FROG_DEC_STEP(1);  FROG_DEC_STEP(0);
    }
}

/* hashKey (p11-p12) followed by makeInternalKey. */
static int frog_set_key(void *ks, const uint8_t *key, unsigned key_bits, int for_decryption)
{
    if (key_bits != 128 && key_bits != 192 && key_bits != 256)
        return CL_BAD_KEY_LENGTH;
    const unsigned key_len = key_bits / 8;
    frog_ks simple_key;
    uint8_t *sk = (uint8_t *)&simple_key;

    /* Step a: user key repeated, xored with randomSeed repeated. */
    for (unsigned i = 0, s = 0, k = 0; i < FROG_INTERNAL_KEY; i++) {
        sk[i] = frog_random_seed[s] ^ key[k];
        s = s < 250 ? s + 1 : 0;
        k = k < key_len - 1 ? k + 1 : 0;
    }
    frog_make_internal_key(&simple_key, 0);

    /* Step b: IV = first (at most 16) key bytes, byte 0 xored with keyLen. */
    uint8_t buffer[FROG_BLOCK] = {0};
    memcpy(buffer, key, key_len < FROG_BLOCK ? key_len : FROG_BLOCK);
    buffer[0] ^= (uint8_t)key_len;

    /* Step c: CBC encryption of 2304 zero bytes = repeated encryption. */
    uint8_t *rk = (uint8_t *)ks;
    for (unsigned i = 0; i < FROG_INTERNAL_KEY; i += FROG_BLOCK) {
        frog_encrypt_block(&simple_key, buffer, buffer);
        memcpy(rk + i, buffer, FROG_BLOCK); /* 2304 is a multiple of 16 */
    }
    frog_make_internal_key((frog_ks *)ks, for_decryption);
    memset(&simple_key, 0, sizeof simple_key);
    return CL_OK;
}

static int frog_set_encrypt_key(void *ks, const uint8_t *key, unsigned key_bits)
{
    return frog_set_key(ks, key, key_bits, 0);
}

static int frog_set_decrypt_key(void *ks, const uint8_t *key, unsigned key_bits)
{
    return frog_set_key(ks, key, key_bits, 1);
}

static void frog_encrypt(const void *ks, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    const frog_ks *const k = (const frog_ks *)ks;
    for (; nblocks; nblocks--, in += FROG_BLOCK, out += FROG_BLOCK)
        frog_encrypt_block(k, in, out);
}

static void frog_decrypt(const void *ks, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    const frog_ks *const k = (const frog_ks *)ks;
    for (; nblocks; nblocks--, in += FROG_BLOCK, out += FROG_BLOCK) {
        uint8_t b[FROG_BLOCK];
        memcpy(b, in, FROG_BLOCK);
        frog_decrypt_block(k, b);
        memcpy(out, b, FROG_BLOCK);
    }
}

const cl_impl cl_impl_frog_ref = {
    .cipher = "frog",
    .strategy = "ref",
    .block_bytes = FROG_BLOCK,
    .key_bits = frog_key_bits,
    .ks_bytes = sizeof(frog_ks),
    .table_bytes = sizeof frog_random_seed, /* randomSeed, used by key setup only */
    .available = NULL,
    .set_encrypt_key = frog_set_encrypt_key,
    .set_decrypt_key = frog_set_decrypt_key,
    .encrypt = frog_encrypt,
    .decrypt = frog_decrypt,
    .init_hook = NULL,
};

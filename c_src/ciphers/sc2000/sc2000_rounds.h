/*
 * sc2000_rounds.h -- the SC2000 round sequence, instantiated once per strategy.
 *
 * Include after sc2000_core.h with SC2000_MS(x) defined as the strategy's
 * M o S of one 32-bit word; defines the static functions sc2000_ecb_encrypt
 * and sc2000_ecb_decrypt (see cipherlab.h).  Every strategy therefore runs the
 * same code around its own table lookups.
 *
 * Round configuration (p3, Fig. 1 p4):
 *   encrypt 128: I-B-I-R5xR5-I-B-I-R3xR3- ... (6 pairs, masks 5,3,5,3,5,3) -I-B-I
 *   encrypt 192/256: the same with 7 pairs (5,3,5,3,5,3,5)
 *   decrypt: B^-1 for B, the key groups reversed (done by the key setup) and
 *            the pair masks reversed.
 * R (p4-p5): (a, b) ^= L(M(S(c)), M(S(d))) with L(u, v) = ((u & mask) ^ v,
 * (v & ~mask) ^ u).  "R x R" is R, the cross (a,b,c,d) -> (c,d,a,b), R; written
 * here as (a,b) ^= F(c,d); (c,d) ^= F(a,b) with the halves renamed afterwards.
 */
#ifndef SC2000_MS
#error "define SC2000_MS(x) before including sc2000_rounds.h"
#endif

#define SC2000_MASK5 0x55555555u
#define SC2000_MASK3 0x33333333u

#define SC2000_I(k, a, b, c, d) \
    do { (a) ^= (k)[0]; (b) ^= (k)[1]; (c) ^= (k)[2]; (d) ^= (k)[3]; } while (0)

/* (a, b) ^= F(c, d) */
#define SC2000_R(a, b, c, d, mask)                                         \
    do {                                                                   \
        uint32_t u_ = SC2000_MS(c), v_ = SC2000_MS(d);                     \
        (a) ^= (u_ & (mask)) ^ v_;                                         \
        (b) ^= (v_ & ~(uint32_t)(mask)) ^ u_;                              \
    } while (0)

/* I-B-I-RxR on (a,b,c,d); the result is (c,d,a,b). */
#define SC2000_STEP(BFN, k, a, b, c, d, mask)                              \
    do {                                                                   \
        SC2000_I(k, a, b, c, d);                                           \
        BFN(a, b, c, d);                                                   \
        SC2000_I((k) + 4, a, b, c, d);                                     \
        SC2000_R(a, b, c, d, mask);                                        \
        SC2000_R(c, d, a, b, mask);                                        \
    } while (0)

/* Two steps, leaving the names as they were. */
#define SC2000_STEP2(BFN, k, a, b, c, d, mask1, mask2)                     \
    do {                                                                   \
        SC2000_STEP(BFN, k, a, b, c, d, mask1);                            \
        SC2000_STEP(BFN, (k) + 8, c, d, a, b, mask2);                      \
    } while (0)

#define SC2000_SWAP_HALVES(a, b, c, d)                                     \
    do { uint32_t t_ = (a); (a) = (c); (c) = t_; t_ = (b); (b) = (d); (d) = t_; } while (0)

static void sc2000_ecb_encrypt(const void *ksv, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    const sc2000_ks *ks = (const sc2000_ks *)ksv;
    const uint32_t *const ek = ks->ek;
    const int seven = ks->npairs == 7;

    for (; nblocks; nblocks--, in += 16, out += 16) {
        const uint32_t *k = ek;
        uint32_t a = cl_load32_be(in), b = cl_load32_be(in + 4);
        uint32_t c = cl_load32_be(in + 8), d = cl_load32_be(in + 12);

        SC2000_STEP2(SC2000_B, k, a, b, c, d, SC2000_MASK5, SC2000_MASK3);
        SC2000_STEP2(SC2000_B, k + 16, a, b, c, d, SC2000_MASK5, SC2000_MASK3);
        SC2000_STEP2(SC2000_B, k + 32, a, b, c, d, SC2000_MASK5, SC2000_MASK3);
        k += 48;
        if (seven) {
            SC2000_STEP(SC2000_B, k, a, b, c, d, SC2000_MASK5);
            SC2000_SWAP_HALVES(a, b, c, d);
            k += 8;
        }
        SC2000_I(k, a, b, c, d);
        SC2000_B(a, b, c, d);
        SC2000_I(k + 4, a, b, c, d);

        cl_store32_be(out, a); cl_store32_be(out + 4, b);
        cl_store32_be(out + 8, c); cl_store32_be(out + 12, d);
    }
}

static void sc2000_ecb_decrypt(const void *ksv, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    const sc2000_ks *ks = (const sc2000_ks *)ksv;
    const uint32_t *const dk = ks->ek; /* groups already in decryption order */
    const int seven = ks->npairs == 7;

    for (; nblocks; nblocks--, in += 16, out += 16) {
        const uint32_t *k = dk;
        uint32_t a = cl_load32_be(in), b = cl_load32_be(in + 4);
        uint32_t c = cl_load32_be(in + 8), d = cl_load32_be(in + 12);

        if (seven) {
            SC2000_STEP(SC2000_BINV, k, a, b, c, d, SC2000_MASK5);
            SC2000_SWAP_HALVES(a, b, c, d);
            k += 8;
        }
        SC2000_STEP2(SC2000_BINV, k, a, b, c, d, SC2000_MASK3, SC2000_MASK5);
        SC2000_STEP2(SC2000_BINV, k + 16, a, b, c, d, SC2000_MASK3, SC2000_MASK5);
        SC2000_STEP2(SC2000_BINV, k + 32, a, b, c, d, SC2000_MASK3, SC2000_MASK5);
        k += 48;
        SC2000_I(k, a, b, c, d);
        SC2000_BINV(a, b, c, d);
        SC2000_I(k + 4, a, b, c, d);

        cl_store32_be(out, a); cl_store32_be(out + 4, b);
        cl_store32_be(out + 8, c); cl_store32_be(out + 12, d);
    }
}

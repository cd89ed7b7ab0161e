/*
 * sp64.c -- Triple DES (TDEA, FIPS PUB 46-3; ANSI X9.52), three-key EDE, on the
 * 64-bit expanded halves of ../des/des_sp64.h.  The halves are expanded once
 * after IP and compressed once before IP^-1: between the three passes they
 * stay expanded (IP^-1 followed by IP cancels, as in ede.c), so 48 rounds run
 * with no conversion.  Two blocks in flight for many-block calls.  Decryption
 * is the same chain with the schedule built in the mirrored order.
 */
#include "cipherlab.h"
#include "../des/des_sp64.h"

#define KS_WORDS (3 * CL_DES_SP64_ROUNDS)

static const unsigned short key_bits[] = {192, 0};

/* One pass of the chain: a DES schedule of key k8 (reversed for decryption). */
static void pass_schedule(uint64_t *k64, const uint8_t *k8, int reverse)
{
    uint32_t sk[CL_DES_SCHEDULE_WORDS];
    cl_des_key_schedule(sk, k8);
    if (reverse)
        cl_des_reverse_schedule(sk, sk);
    cl_des64_schedule(k64, sk);
}

static int set_encrypt_key(void *ks, const uint8_t *key, unsigned bits)
{
    uint64_t *k = (uint64_t *)ks;
    if (bits != 192)
        return CL_BAD_KEY_LENGTH;
    pass_schedule(k, key, 0);                                /* E_K1 */
    pass_schedule(k + CL_DES_SP64_ROUNDS, key + 8, 1);       /* D_K2 */
    pass_schedule(k + 2 * CL_DES_SP64_ROUNDS, key + 16, 0);  /* E_K3 */
    return CL_OK;
}

static int set_decrypt_key(void *ks, const uint8_t *key, unsigned bits)
{
    uint64_t *k = (uint64_t *)ks;
    if (bits != 192)
        return CL_BAD_KEY_LENGTH;
    pass_schedule(k, key + 16, 1);                      /* D_K3 */
    pass_schedule(k + CL_DES_SP64_ROUNDS, key + 8, 0);  /* E_K2 */
    pass_schedule(k + 2 * CL_DES_SP64_ROUNDS, key, 1);  /* D_K1 */
    return CL_OK;
}

static void crypt_blocks(const void *ks, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    const uint64_t *k = (const uint64_t *)ks;
    const uint64_t *k2 = k + CL_DES_SP64_ROUNDS, *k3 = k + 2 * CL_DES_SP64_ROUNDS;
    uint64_t l0, r0, l1, r1, t0, t1;
    for (; nblocks >= 2; nblocks -= 2, in += 16, out += 16) {
        cl_des64_load(in, &l0, &r0);
        cl_des64_load(in + 8, &l1, &r1);
        t0 = r0 ^ k[0];
        t1 = r1 ^ k[0];
        CL_DES64_PASS_X2(t0, l0, r0, t1, l1, r1, k);  /* preoutput (r, l) */
        t0 = l0 ^ k2[0];
        t1 = l1 ^ k2[0];
        CL_DES64_PASS_X2(t0, r0, l0, t1, r1, l1, k2); /* preoutput (l, r) */
        t0 = r0 ^ k3[0];
        t1 = r1 ^ k3[0];
        CL_DES64_PASS_X2(t0, l0, r0, t1, l1, r1, k3); /* preoutput (r, l) */
        cl_des64_store(out, r0, l0);
        cl_des64_store(out + 8, r1, l1);
    }
    if (nblocks) {
        cl_des64_load(in, &l0, &r0);
        t0 = r0 ^ k[0];
        CL_DES64_PASS(t0, l0, r0, k);
        t0 = l0 ^ k2[0];
        CL_DES64_PASS(t0, r0, l0, k2);
        t0 = r0 ^ k3[0];
        CL_DES64_PASS(t0, l0, r0, k3);
        cl_des64_store(out, r0, l0);
    }
}

const cl_impl cl_impl_3des_sp64 = {
    .cipher = "3des",
    .strategy = "sp64",
    .block_bytes = 8,
    .key_bits = key_bits,
    .ks_bytes = KS_WORDS * sizeof(uint64_t),
    .table_bytes = CL_DES_SP64_TABLE_BYTES + CL_DES_CORE_TABLE_BYTES,
    .available = NULL,
    .set_encrypt_key = set_encrypt_key,
    .set_decrypt_key = set_decrypt_key,
    .encrypt = crypt_blocks,
    .decrypt = crypt_blocks,
    .init_hook = NULL,
};

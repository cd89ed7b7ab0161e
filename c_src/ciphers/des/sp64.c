/*
 * sp64.c -- DES (FIPS PUB 46-3) on 64-bit expanded halves (des_sp64.h): SP
 * tables of 64-bit entries that return the expanded form of their output, so a
 * round is one XOR with the round key and eight byte-indexed loads; two blocks
 * in flight for many-block calls.  Key schedule of des_core.c, widened.
 */
#include "cipherlab.h"
#include "des_sp64.h"

static const unsigned short key_bits[] = {64, 0};

static int set_encrypt_key(void *ks, const uint8_t *key, unsigned bits)
{
    uint32_t sk[CL_DES_SCHEDULE_WORDS];
    if (bits != 64)
        return CL_BAD_KEY_LENGTH;
    cl_des_key_schedule(sk, key); /* parity bits are ignored */
    cl_des64_schedule((uint64_t *)ks, sk);
    return CL_OK;
}

static int set_decrypt_key(void *ks, const uint8_t *key, unsigned bits)
{
    uint32_t sk[CL_DES_SCHEDULE_WORDS];
    if (bits != 64)
        return CL_BAD_KEY_LENGTH;
    cl_des_key_schedule(sk, key);
    cl_des_reverse_schedule(sk, sk);
    cl_des64_schedule((uint64_t *)ks, sk);
    return CL_OK;
}

/* Encryption and decryption differ only in the order of the round keys. */
static void crypt_blocks(const void *ks, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    const uint64_t *k = (const uint64_t *)ks;
    uint64_t l0, r0, l1, r1, t0, t1;
    for (; nblocks >= 2; nblocks -= 2, in += 16, out += 16) {
        cl_des64_load(in, &l0, &r0);
        cl_des64_load(in + 8, &l1, &r1);
        t0 = r0 ^ k[0];
        t1 = r1 ^ k[0];
        CL_DES64_PASS_X2(t0, l0, r0, t1, l1, r1, k);
        cl_des64_store(out, r0, l0);
        cl_des64_store(out + 8, r1, l1);
    }
    if (nblocks) {
        cl_des64_load(in, &l0, &r0);
        t0 = r0 ^ k[0];
        CL_DES64_PASS(t0, l0, r0, k);
        cl_des64_store(out, r0, l0);
    }
}

const cl_impl cl_impl_des_sp64 = {
    .cipher = "des",
    .strategy = "sp64",
    .block_bytes = 8,
    .key_bits = key_bits,
    .ks_bytes = CL_DES_SP64_ROUNDS * sizeof(uint64_t),
    .table_bytes = CL_DES_SP64_TABLE_BYTES + CL_DES_CORE_TABLE_BYTES,
    .available = NULL,
    .set_encrypt_key = set_encrypt_key,
    .set_decrypt_key = set_decrypt_key,
    .encrypt = crypt_blocks,
    .decrypt = crypt_blocks,
    .init_hook = NULL,
};

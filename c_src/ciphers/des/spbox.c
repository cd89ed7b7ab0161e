/*
 * spbox.c -- DES (FIPS PUB 46-3) with eight 64-word tables that merge each
 * S-box with the permutation P ("SP boxes"), IP/IP^-1 as bit-swap sequences.
 * The core (key schedule, rounds, tables) is des_core.c / des_core.h, shared
 * with 3des and deal.
 */
#include "cipherlab.h"
#include "des_core.h"

static const unsigned short key_bits[] = {64, 0};

static int set_encrypt_key(void *ks, const uint8_t *key, unsigned bits)
{
    if (bits != 64)
        return CL_BAD_KEY_LENGTH;
    cl_des_key_schedule((uint32_t *)ks, key); /* parity bits are ignored */
    return CL_OK;
}

static int set_decrypt_key(void *ks, const uint8_t *key, unsigned bits)
{
    if (bits != 64)
        return CL_BAD_KEY_LENGTH;
    cl_des_key_schedule((uint32_t *)ks, key);
    cl_des_reverse_schedule((uint32_t *)ks, (const uint32_t *)ks);
    return CL_OK;
}

/* Encryption and decryption differ only in the order of the round keys. */
static void crypt_blocks(const void *ks, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    const uint32_t *sk = (const uint32_t *)ks;
    for (size_t i = 0; i < nblocks; i++, in += 8, out += 8)
        cl_des_block(sk, in, out);
}

const cl_impl cl_impl_des_spbox = {
    .cipher = "des",
    .strategy = "spbox",
    .block_bytes = 8,
    .key_bits = key_bits,
    .ks_bytes = CL_DES_SCHEDULE_WORDS * sizeof(uint32_t),
    .table_bytes = CL_DES_CORE_TABLE_BYTES,
    .available = NULL,
    .set_encrypt_key = set_encrypt_key,
    .set_decrypt_key = set_decrypt_key,
    .encrypt = crypt_blocks,
    .decrypt = crypt_blocks,
    .init_hook = NULL,
};

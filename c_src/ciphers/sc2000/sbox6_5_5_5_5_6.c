/*
 * sbox6_5_5_5_5_6.c -- SC2000 with the smallest tables: M o S computed as six
 * lookups, one per S-box (S6, S5, S5, S5, S5, S6), each table holding M applied
 * to that S-box's output bits (1 KiB, shared with the key schedule).
 * The (6,5,5,5,5,6) implementation of the FSE 2001 paper, p6 (printed 317).
 */
#include "sc2000_core.h"

#define SC2000_MS(x) sc2000_ms_6_5_5_5_5_6(x)
#include "sc2000_rounds.h"

/* see cipherlab.h */
const cl_impl cl_impl_sc2000_sbox6_5_5_5_5_6 = {
    .cipher = "sc2000",
    .strategy = "sbox6_5_5_5_5_6",
    .block_bytes = 16,
    .key_bits = sc2000_key_bits,
    .ks_bytes = sizeof(sc2000_ks),
    .table_bytes = SC2000_MS_TAB_BYTES,
    .available = NULL,
    .set_encrypt_key = sc2000_set_encrypt_key,
    .set_decrypt_key = sc2000_set_decrypt_key,
    .encrypt = sc2000_ecb_encrypt,
    .decrypt = sc2000_ecb_decrypt,
    .init_hook = NULL,
};

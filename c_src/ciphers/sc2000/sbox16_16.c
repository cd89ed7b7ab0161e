/*
 * sbox16_16.c -- SC2000 with M o S as two lookups: M o (S6||S5||S5) on the top
 * 16 bits and M o (S5||S5||S6) on the bottom 16 bits; 2 x 65536 words =
 * 512 KiB, plus the 1 KiB table they are built from (also the key schedule's).
 * The (16,16) strategy of Lipmaa, "Fast Software Implementations of SC2000"
 * (shared/papers/lipmaa-2002-fast-sc2000.txt, Section 3.1, Fig. 1).
 *
 * The 512 KiB are not stored in the program: like Lipmaa's implementation
 * they are built from the small M o S tables, once, by the first key setup
 * (so the first set_encrypt_key/set_decrypt_key call of a process is slower;
 * not thread-safe on that first call).
 */
#include "sc2000_core.h"

static _Alignas(64) uint32_t ms16[2][65536];
static int ms16_ready;

static void ms16_init(void)
{
    const uint32_t *t = sc2000_ms_tab;
    for (uint32_t v = 0; v < 65536; v++) {
        ms16[0][v] = t[v >> 10] ^ t[64 + ((v >> 5) & 31)] ^ t[96 + (v & 31)];
        ms16[1][v] = t[128 + (v >> 11)] ^ t[160 + ((v >> 6) & 31)] ^ t[192 + (v & 63)];
    }
    ms16_ready = 1;
}

static inline uint32_t ms_lookup(uint32_t x)
{
    return ms16[0][x >> 16] ^ ms16[1][x & 0xffff];
}

#define SC2000_MS(x) ms_lookup(x)
#include "sc2000_rounds.h"

static int set_encrypt_key(void *ks, const uint8_t *key, unsigned key_bits)
{
    if (!ms16_ready)
        ms16_init();
    return sc2000_set_encrypt_key(ks, key, key_bits);
}

static int set_decrypt_key(void *ks, const uint8_t *key, unsigned key_bits)
{
    if (!ms16_ready)
        ms16_init();
    return sc2000_set_decrypt_key(ks, key, key_bits);
}

/* see cipherlab.h */
const cl_impl cl_impl_sc2000_sbox16_16 = {
    .cipher = "sc2000",
    .strategy = "sbox16_16",
    .block_bytes = 16,
    .key_bits = sc2000_key_bits,
    .ks_bytes = sizeof(sc2000_ks),
    .table_bytes = sizeof ms16 + SC2000_MS_TAB_BYTES,
    .available = NULL,
    .set_encrypt_key = set_encrypt_key,
    .set_decrypt_key = set_decrypt_key,
    .encrypt = sc2000_ecb_encrypt,
    .decrypt = sc2000_ecb_decrypt,
    .init_hook = NULL,
};

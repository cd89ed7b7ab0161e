/*
 * ede.c -- Triple DES (TDEA, FIPS PUB 46-3 PDF p19-p20, Appendix 2 p26; ANSI X9.52), three-key
 * EDE: CT = E_K3(D_K2(E_K1(PT))), key = K1 || K2 || K3 (8 bytes each).
 *
 * Built on the DES core of ../des.  IP is applied once at the start and IP^-1
 * once at the end: between the passes IP^-1 followed by IP cancels, so the
 * preoutput halves of one pass go straight, exchanged, into the next.
 * Decryption D_K1(E_K2(D_K3(CT))) is the same chain with the schedule built
 * in the mirrored order, so one block function serves both directions.
 */
#include "cipherlab.h"
#include "../des/des_core.h"

#define KS_WORDS (3 * CL_DES_SCHEDULE_WORDS)

static const unsigned short key_bits[] = {192, 0};

static int set_encrypt_key(void *ks, const uint8_t *key, unsigned bits)
{
    uint32_t *sk = (uint32_t *)ks;
    if (bits != 192)
        return CL_BAD_KEY_LENGTH;
    cl_des_key_schedule(sk, key);                             /* E_K1 */
    cl_des_key_schedule(sk + CL_DES_SCHEDULE_WORDS, key + 8); /* D_K2 */
    cl_des_reverse_schedule(sk + CL_DES_SCHEDULE_WORDS, sk + CL_DES_SCHEDULE_WORDS);
    cl_des_key_schedule(sk + 2 * CL_DES_SCHEDULE_WORDS, key + 16); /* E_K3 */
    return CL_OK;
}

static int set_decrypt_key(void *ks, const uint8_t *key, unsigned bits)
{
    uint32_t *sk = (uint32_t *)ks;
    if (bits != 192)
        return CL_BAD_KEY_LENGTH;
    cl_des_key_schedule(sk, key + 16); /* D_K3 */
    cl_des_reverse_schedule(sk, sk);
    cl_des_key_schedule(sk + CL_DES_SCHEDULE_WORDS, key + 8); /* E_K2 */
    cl_des_key_schedule(sk + 2 * CL_DES_SCHEDULE_WORDS, key); /* D_K1 */
    cl_des_reverse_schedule(sk + 2 * CL_DES_SCHEDULE_WORDS, sk + 2 * CL_DES_SCHEDULE_WORDS);
    return CL_OK;
}

static void crypt_blocks(const void *ks, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    const uint32_t *sk = (const uint32_t *)ks;
    for (size_t i = 0; i < nblocks; i++, in += 8, out += 8) {
        uint32_t l = cl_load32_be(in), r = cl_load32_be(in + 4);
        cl_des_ip(&l, &r);
        cl_des_rounds(&l, &r, sk);                             /* preoutput (r, l) */
        cl_des_rounds(&r, &l, sk + CL_DES_SCHEDULE_WORDS);     /* preoutput (l, r) */
        cl_des_rounds(&l, &r, sk + 2 * CL_DES_SCHEDULE_WORDS); /* preoutput (r, l) */
        cl_des_fp(&r, &l);
        cl_store32_be(out, r);
        cl_store32_be(out + 4, l);
    }
}

const cl_impl cl_impl_3des_ede = {
    .cipher = "3des",
    .strategy = "ede",
    .block_bytes = 8,
    .key_bits = key_bits,
    .ks_bytes = KS_WORDS * sizeof(uint32_t),
    .table_bytes = CL_DES_CORE_TABLE_BYTES,
    .available = NULL,
    .set_encrypt_key = set_encrypt_key,
    .set_decrypt_key = set_decrypt_key,
    .encrypt = crypt_blocks,
    .decrypt = crypt_blocks,
    .init_hook = NULL,
};

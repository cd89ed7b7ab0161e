/*
 * ref.c -- IDEA (X. Lai, "On the Design and Security of Block Ciphers", ETH
 * thesis 1992, chapter 3; shared/specs/idea-lai-thesis-ch3.pdf, PDF pages):
 * 8 rounds + output transformation on four 16-bit subblocks (encryption p1-p3,
 * Fig. 3.1 p2), key schedule by 25-bit rotations of the 128-bit key (p3, p5),
 * decryption subkeys by inverses (p3, Table 3.1 p4).
 *
 * Blocks and keys are big-endian 16-bit words (X1 = bytes 0..1).  The
 * multiplication modulo 2^16+1 uses the low/high split of the 32-bit product
 * (a*b = hi*2^16 + lo == lo - hi mod 2^16+1), no division.
 */
#include "idea_core.h"

static const unsigned short key_bits[] = {128, 0};

const cl_impl cl_impl_idea_ref = {
    .cipher = "idea",
    .strategy = "ref",
    .block_bytes = 8,
    .key_bits = key_bits,
    .ks_bytes = IDEA_SUBKEYS * sizeof(uint16_t),
    .table_bytes = 0,
    .available = NULL,
    .set_encrypt_key = idea_set_encrypt_key,
    .set_decrypt_key = idea_set_decrypt_key,
    .encrypt = idea_crypt_blocks,
    .decrypt = idea_crypt_blocks,
    .init_hook = NULL,
};

/*
 * 3des/bitslice_avx512.c -- bitsliced 3DES (EDE: E_K1 D_K2 E_K3, IP once, IP^-1 once) on 512-bit avx512 words: 512 blocks per group (one
 * 64 x 64 bit transpose per 64 of them), the S-boxes as the boolean circuits of
 * des/gen_bitslice.py (des/des_bitslice_sboxes.h), core in des/des_bitslice.h, strategy in
 * des/des_bitslice_body.h.  The functions carry __attribute__((target("avx2,avx512f"))), so no build
 * flag is needed; available() checks CPUID and XGETBV.  A rest of at least 26 blocks runs as
 * one zero-padded group, smaller rests and 1-block calls the scalar SP-box path.  Other
 * architectures compile to a stub whose available() returns 0.
 */

#define BS_PASSES 3
#define BS_NEED 512
#define BS_PAD_MIN 26 /* a padded group costs less than this many scalar blocks (measured, see README) */
#define BS_IMPL cl_impl_3des_bitslice_avx512
#define BS_CIPHER "3des"
#define BS_STRATEGY "bitslice_avx512"
#include "../des/des_bitslice_body.h"

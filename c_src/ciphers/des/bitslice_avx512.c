/*
 * des/bitslice_avx512.c -- bitsliced DES on 512-bit avx512 words: 512 blocks per group (one
 * 64 x 64 bit transpose per 64 of them), the S-boxes as the boolean circuits of
 * des/gen_bitslice.py (des/des_bitslice_sboxes.h), core in des/des_bitslice.h, strategy in
 * des/des_bitslice_body.h.  The functions carry __attribute__((target("avx2,avx512f"))), so no build
 * flag is needed; available() checks CPUID and XGETBV.  A rest of at least 44 blocks runs as
 * one zero-padded group, smaller rests and 1-block calls the scalar SP-box path.  Other
 * architectures compile to a stub whose available() returns 0.
 */

#define BS_PASSES 1
#define BS_NEED 512
#define BS_PAD_MIN 44 /* a padded group costs less than this many scalar blocks (measured, see README) */
#define BS_IMPL cl_impl_des_bitslice_avx512
#define BS_CIPHER "des"
#define BS_STRATEGY "bitslice_avx512"
#include "des_bitslice_body.h"

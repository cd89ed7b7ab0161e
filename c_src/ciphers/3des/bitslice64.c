/*
 * 3des/bitslice64.c -- bitsliced 3DES (EDE) on 64-bit words (portable C): 64 blocks per group, the
 * S-boxes as the boolean circuits of des/gen_bitslice.py, core in
 * des/des_bitslice.h, strategy around it in des/des_bitslice_body.h.  Rests under 16 blocks and 1-block
 * calls take the SP-box path of des_core.
 */

#define BS_PASSES 3
#define BS_NEED 0
#define BS_PAD_MIN 16 /* a padded group costs less than this many scalar blocks (measured, see README) */
#define BS_IMPL cl_impl_3des_bitslice64
#define BS_CIPHER "3des"
#define BS_STRATEGY "bitslice64"
#include "../des/des_bitslice_body.h"

/*
 * des/bitslice64.c -- bitsliced DES on 64-bit words (portable C): 64 blocks per group, the
 * S-boxes as the boolean circuits of gen_bitslice.py (des_bitslice_sboxes.h), core in
 * des_bitslice.h, strategy around it in des_bitslice_body.h.  Rests under 24 blocks and 1-block
 * calls take the SP-box path of des_core.
 */

#define BS_PASSES 1
#define BS_NEED 0
#define BS_PAD_MIN 24 /* a padded group costs less than this many scalar blocks (measured, see README) */
#define BS_IMPL cl_impl_des_bitslice64
#define BS_CIPHER "des"
#define BS_STRATEGY "bitslice64"
#include "des_bitslice_body.h"

/*
 * Serpent (Anderson, Biham, Knudsen; AES submission 1998, unchanged in round
 * 2), the standard bitsliced implementation: the state is four 32-bit words,
 * each S-box is a branch-free boolean circuit on whole words (32 S-boxes in
 * parallel), the linear transformation works on words, and the key schedule
 * produces the 33 subkeys with the same S-box circuits.  No tables.
 *
 * Source: shared/specs/serpent-aes-submission.pdf -- key padding p2; cipher
 * p3; bitslice description and linear transformation p5-p6; key schedule
 * p6-p7; S-boxes and inverses Appendix A.5 p21.
 *
 * Byte order: NESSIE / Crypto++ / Botan convention, as in
 * shared/vectors/serpent.kat: block word X_k = bytes 4k..4k+3 little-endian
 * (bit 0 of the spec's 128-bit block = bit 0 of byte 0), key word w_(i-8) =
 * bytes 4i..4i+3 little-endian.  (The AES-submission KAT files print each
 * value as one big number, i.e. these byte strings reversed.)
 */
#include "cipherlab.h"
#include "cl_bytes.h"

/* BEGIN GENERATED S-BOXES (gen/emit_sboxes.py) */
/* Bitsliced S-boxes: circuits found by gen/sbox_cgp.c (listed in
 * gen/circuits.txt), checked against the S-box tables of the spec (Appendix
 * A.5, PDF p21) by gen/emit_sboxes.py, which wrote these macros.  Each maps
 * the words x0..x3 (x0 = bit 0 of every nibble) to the S-box outputs. */

/* SB0: 21 gates (2 NOT) */
#define SB0(x0, x1, x2, x3) \
    do { \
        const uint32_t sb0_4 = x2 & x0; \
        const uint32_t sb0_5 = x0 | x3; \
        const uint32_t sb0_6 = x2 ^ x1; \
        const uint32_t sb0_7 = x1 ^ x0; \
        const uint32_t sb0_8 = x3 & x2; \
        const uint32_t sb0_9 = x3 ^ x1; \
        const uint32_t sb0_10 = sb0_6 ^ sb0_4; \
        const uint32_t sb0_11 = sb0_4 ^ sb0_9; \
        const uint32_t sb0_12 = ~sb0_9; \
        const uint32_t sb0_13 = sb0_8 ^ sb0_7; \
        const uint32_t sb0_14 = sb0_13 | sb0_10; \
        const uint32_t sb0_15 = sb0_14 ^ sb0_12; \
        const uint32_t sb0_16 = sb0_6 | sb0_11; \
        const uint32_t sb0_17 = sb0_6 ^ sb0_16; \
        const uint32_t sb0_18 = ~sb0_7; \
        const uint32_t sb0_19 = sb0_6 ^ sb0_5; \
        const uint32_t sb0_20 = sb0_6 ^ sb0_8; \
        const uint32_t sb0_21 = sb0_16 & sb0_13; \
        const uint32_t sb0_22 = sb0_11 & sb0_20; \
        const uint32_t sb0_23 = sb0_22 ^ sb0_18; \
        const uint32_t sb0_24 = sb0_21 | sb0_17; \
        x0 = sb0_15; x1 = sb0_23; x2 = sb0_24; x3 = sb0_19; \
    } while (0)

/* SB1: 23 gates (2 NOT) */
#define SB1(x0, x1, x2, x3) \
    do { \
        const uint32_t sb1_4 = x3 ^ x1; \
        const uint32_t sb1_5 = ~sb1_4; \
        const uint32_t sb1_6 = x3 & x0; \
        const uint32_t sb1_7 = x0 & sb1_5; \
        const uint32_t sb1_8 = sb1_7 | x1; \
        const uint32_t sb1_9 = sb1_5 | x0; \
        const uint32_t sb1_10 = sb1_4 | x3; \
        const uint32_t sb1_11 = x2 & sb1_8; \
        const uint32_t sb1_12 = sb1_5 | sb1_6; \
        const uint32_t sb1_13 = ~x0; \
        const uint32_t sb1_14 = sb1_11 & sb1_9; \
        const uint32_t sb1_15 = x2 & sb1_10; \
        const uint32_t sb1_16 = sb1_6 ^ sb1_9; \
        const uint32_t sb1_17 = sb1_14 ^ sb1_12; \
        const uint32_t sb1_18 = x2 ^ sb1_16; \
        const uint32_t sb1_19 = x1 & sb1_4; \
        const uint32_t sb1_20 = sb1_13 ^ x1; \
        const uint32_t sb1_21 = x0 ^ sb1_19; \
        const uint32_t sb1_22 = sb1_11 | sb1_21; \
        const uint32_t sb1_23 = sb1_15 | sb1_6; \
        const uint32_t sb1_24 = sb1_20 ^ sb1_23; \
        const uint32_t sb1_25 = sb1_18 | sb1_7; \
        const uint32_t sb1_26 = sb1_22 ^ sb1_25; \
        x0 = sb1_24; x1 = sb1_26; x2 = sb1_18; x3 = sb1_17; \
    } while (0)

/* SB2: 18 gates (1 NOT) */
#define SB2(x0, x1, x2, x3) \
    do { \
        const uint32_t sb2_4 = x0 | x3; \
        const uint32_t sb2_5 = x2 | x0; \
        const uint32_t sb2_6 = ~x0; \
        const uint32_t sb2_7 = x3 ^ sb2_6; \
        const uint32_t sb2_8 = x3 ^ x1; \
        const uint32_t sb2_9 = x2 ^ sb2_6; \
        const uint32_t sb2_10 = sb2_5 ^ sb2_8; \
        const uint32_t sb2_11 = sb2_10 ^ x0; \
        const uint32_t sb2_12 = sb2_9 & x1; \
        const uint32_t sb2_13 = x2 | sb2_10; \
        const uint32_t sb2_14 = x2 ^ sb2_5; \
        const uint32_t sb2_15 = sb2_14 ^ sb2_7; \
        const uint32_t sb2_16 = sb2_13 & sb2_15; \
        const uint32_t sb2_17 = sb2_10 & sb2_4; \
        const uint32_t sb2_18 = sb2_12 ^ sb2_17; \
        const uint32_t sb2_19 = sb2_16 | sb2_12; \
        const uint32_t sb2_20 = x1 & sb2_15; \
        const uint32_t sb2_21 = sb2_20 ^ sb2_9; \
        x0 = sb2_11; x1 = sb2_19; x2 = sb2_18; x3 = sb2_21; \
    } while (0)

/* SB3: 20 gates (0 NOT) */
#define SB3(x0, x1, x2, x3) \
    do { \
        const uint32_t sb3_4 = x1 & x2; \
        const uint32_t sb3_5 = x1 ^ x0; \
        const uint32_t sb3_6 = x0 & x3; \
        const uint32_t sb3_7 = sb3_5 ^ sb3_6; \
        const uint32_t sb3_8 = sb3_5 & x1; \
        const uint32_t sb3_9 = sb3_6 ^ x3; \
        const uint32_t sb3_10 = x3 ^ sb3_4; \
        const uint32_t sb3_11 = x2 & sb3_10; \
        const uint32_t sb3_12 = sb3_9 | x1; \
        const uint32_t sb3_13 = sb3_8 | sb3_10; \
        const uint32_t sb3_14 = sb3_5 ^ x2; \
        const uint32_t sb3_15 = sb3_7 & sb3_14; \
        const uint32_t sb3_16 = x2 | x0; \
        const uint32_t sb3_17 = sb3_13 ^ sb3_14; \
        const uint32_t sb3_18 = sb3_16 ^ x3; \
        const uint32_t sb3_19 = sb3_15 | sb3_11; \
        const uint32_t sb3_20 = sb3_10 & sb3_18; \
        const uint32_t sb3_21 = sb3_12 & sb3_19; \
        const uint32_t sb3_22 = sb3_20 ^ sb3_5; \
        const uint32_t sb3_23 = sb3_18 ^ sb3_21; \
        x0 = sb3_22; x1 = sb3_19; x2 = sb3_17; x3 = sb3_23; \
    } while (0)

/* SB4: 19 gates (1 NOT) */
#define SB4(x0, x1, x2, x3) \
    do { \
        const uint32_t sb4_4 = x2 & x0; \
        const uint32_t sb4_5 = x1 ^ x2; \
        const uint32_t sb4_6 = x0 ^ x1; \
        const uint32_t sb4_7 = x2 | sb4_6; \
        const uint32_t sb4_8 = x0 & x3; \
        const uint32_t sb4_9 = x3 | sb4_7; \
        const uint32_t sb4_10 = sb4_5 ^ sb4_8; \
        const uint32_t sb4_11 = ~x1; \
        const uint32_t sb4_12 = sb4_11 ^ x3; \
        const uint32_t sb4_13 = x3 & x1; \
        const uint32_t sb4_14 = sb4_12 ^ sb4_4; \
        const uint32_t sb4_15 = sb4_12 | sb4_6; \
        const uint32_t sb4_16 = sb4_11 & sb4_10; \
        const uint32_t sb4_17 = sb4_14 | sb4_8; \
        const uint32_t sb4_18 = sb4_16 ^ sb4_6; \
        const uint32_t sb4_19 = sb4_15 ^ sb4_5; \
        const uint32_t sb4_20 = sb4_7 & sb4_17; \
        const uint32_t sb4_21 = sb4_13 ^ sb4_18; \
        const uint32_t sb4_22 = sb4_10 ^ sb4_9; \
        x0 = sb4_19; x1 = sb4_22; x2 = sb4_20; x3 = sb4_21; \
    } while (0)

/* SB5: 17 gates (1 NOT) */
#define SB5(x0, x1, x2, x3) \
    do { \
        const uint32_t sb5_4 = x0 ^ x1; \
        const uint32_t sb5_5 = ~x3; \
        const uint32_t sb5_6 = sb5_5 ^ x2; \
        const uint32_t sb5_7 = x1 ^ sb5_6; \
        const uint32_t sb5_8 = sb5_4 ^ sb5_5; \
        const uint32_t sb5_9 = x3 & sb5_8; \
        const uint32_t sb5_10 = sb5_7 | x2; \
        const uint32_t sb5_11 = sb5_8 & sb5_10; \
        const uint32_t sb5_12 = x0 & x1; \
        const uint32_t sb5_13 = sb5_7 ^ sb5_12; \
        const uint32_t sb5_14 = sb5_7 & sb5_6; \
        const uint32_t sb5_15 = sb5_12 ^ x2; \
        const uint32_t sb5_16 = sb5_13 & sb5_5; \
        const uint32_t sb5_17 = sb5_15 ^ sb5_11; \
        const uint32_t sb5_18 = sb5_11 | sb5_14; \
        const uint32_t sb5_19 = sb5_13 ^ sb5_9; \
        const uint32_t sb5_20 = sb5_4 ^ sb5_16; \
        x0 = sb5_19; x1 = sb5_20; x2 = sb5_18; x3 = sb5_17; \
    } while (0)

/* SB6: 21 gates (2 NOT) */
#define SB6(x0, x1, x2, x3) \
    do { \
        const uint32_t sb6_4 = x0 ^ x2; \
        const uint32_t sb6_5 = x3 & x0; \
        const uint32_t sb6_6 = x1 ^ sb6_4; \
        const uint32_t sb6_7 = x2 ^ x3; \
        const uint32_t sb6_8 = ~sb6_4; \
        const uint32_t sb6_9 = x3 ^ x0; \
        const uint32_t sb6_10 = ~sb6_6; \
        const uint32_t sb6_11 = x1 ^ sb6_9; \
        const uint32_t sb6_12 = sb6_7 | x1; \
        const uint32_t sb6_13 = x1 ^ x3; \
        const uint32_t sb6_14 = sb6_12 & sb6_11; \
        const uint32_t sb6_15 = sb6_13 | sb6_8; \
        const uint32_t sb6_16 = sb6_10 | sb6_14; \
        const uint32_t sb6_17 = x0 ^ sb6_5; \
        const uint32_t sb6_18 = x2 & x3; \
        const uint32_t sb6_19 = sb6_14 ^ sb6_15; \
        const uint32_t sb6_20 = sb6_16 ^ sb6_18; \
        const uint32_t sb6_21 = sb6_13 & sb6_5; \
        const uint32_t sb6_22 = sb6_10 ^ sb6_17; \
        const uint32_t sb6_23 = x2 ^ sb6_21; \
        const uint32_t sb6_24 = sb6_23 ^ sb6_14; \
        x0 = sb6_19; x1 = sb6_22; x2 = sb6_20; x3 = sb6_24; \
    } while (0)

/* SB7: 21 gates (1 NOT) */
#define SB7(x0, x1, x2, x3) \
    do { \
        const uint32_t sb7_4 = x3 ^ x0; \
        const uint32_t sb7_5 = x0 & x2; \
        const uint32_t sb7_6 = sb7_5 ^ x1; \
        const uint32_t sb7_7 = sb7_4 & x1; \
        const uint32_t sb7_8 = x3 | x0; \
        const uint32_t sb7_9 = sb7_8 ^ x2; \
        const uint32_t sb7_10 = sb7_9 ^ x1; \
        const uint32_t sb7_11 = sb7_9 ^ x3; \
        const uint32_t sb7_12 = ~x1; \
        const uint32_t sb7_13 = x0 ^ sb7_9; \
        const uint32_t sb7_14 = sb7_11 | sb7_6; \
        const uint32_t sb7_15 = sb7_10 | sb7_5; \
        const uint32_t sb7_16 = sb7_15 ^ x3; \
        const uint32_t sb7_17 = x2 | x1; \
        const uint32_t sb7_18 = sb7_14 ^ sb7_4; \
        const uint32_t sb7_19 = sb7_12 ^ sb7_4; \
        const uint32_t sb7_20 = sb7_5 ^ sb7_17; \
        const uint32_t sb7_21 = sb7_13 & sb7_7; \
        const uint32_t sb7_22 = sb7_19 | sb7_20; \
        const uint32_t sb7_23 = sb7_22 ^ sb7_9; \
        const uint32_t sb7_24 = sb7_10 ^ sb7_21; \
        x0 = sb7_23; x1 = sb7_18; x2 = sb7_24; x3 = sb7_16; \
    } while (0)

/* SI0: 22 gates (1 NOT) */
#define SI0(x0, x1, x2, x3) \
    do { \
        const uint32_t si0_4 = x0 ^ x2; \
        const uint32_t si0_5 = x0 ^ x1; \
        const uint32_t si0_6 = ~x2; \
        const uint32_t si0_7 = x1 | si0_4; \
        const uint32_t si0_8 = si0_7 ^ x2; \
        const uint32_t si0_9 = si0_6 ^ si0_8; \
        const uint32_t si0_10 = x1 | si0_6; \
        const uint32_t si0_11 = x1 ^ x2; \
        const uint32_t si0_12 = si0_5 ^ x3; \
        const uint32_t si0_13 = si0_4 & si0_12; \
        const uint32_t si0_14 = si0_11 & si0_12; \
        const uint32_t si0_15 = x0 | si0_11; \
        const uint32_t si0_16 = si0_7 ^ x1; \
        const uint32_t si0_17 = si0_10 ^ x3; \
        const uint32_t si0_18 = x3 & si0_13; \
        const uint32_t si0_19 = si0_12 & si0_15; \
        const uint32_t si0_20 = si0_14 | si0_13; \
        const uint32_t si0_21 = si0_8 ^ si0_17; \
        const uint32_t si0_22 = si0_17 ^ si0_18; \
        const uint32_t si0_23 = si0_16 | si0_19; \
        const uint32_t si0_24 = si0_4 ^ si0_22; \
        const uint32_t si0_25 = si0_9 ^ si0_20; \
        x0 = si0_25; x1 = si0_23; x2 = si0_21; x3 = si0_24; \
    } while (0)

/* SI1: 20 gates (2 NOT) */
#define SI1(x0, x1, x2, x3) \
    do { \
        const uint32_t si1_4 = x1 ^ x0; \
        const uint32_t si1_5 = x1 & x2; \
        const uint32_t si1_6 = si1_5 ^ si1_4; \
        const uint32_t si1_7 = x2 ^ x3; \
        const uint32_t si1_8 = x1 ^ si1_7; \
        const uint32_t si1_9 = x1 | si1_8; \
        const uint32_t si1_10 = x3 & x0; \
        const uint32_t si1_11 = si1_4 & x2; \
        const uint32_t si1_12 = si1_5 ^ si1_11; \
        const uint32_t si1_13 = si1_9 ^ si1_6; \
        const uint32_t si1_14 = si1_8 & si1_12; \
        const uint32_t si1_15 = x1 ^ si1_11; \
        const uint32_t si1_16 = ~x3; \
        const uint32_t si1_17 = ~si1_4; \
        const uint32_t si1_18 = si1_8 | si1_15; \
        const uint32_t si1_19 = si1_16 ^ si1_6; \
        const uint32_t si1_20 = si1_15 & si1_19; \
        const uint32_t si1_21 = si1_19 ^ si1_14; \
        const uint32_t si1_22 = si1_18 ^ si1_10; \
        const uint32_t si1_23 = si1_17 ^ si1_20; \
        x0 = si1_23; x1 = si1_22; x2 = si1_21; x3 = si1_13; \
    } while (0)

/* SI2: 19 gates (1 NOT) */
#define SI2(x0, x1, x2, x3) \
    do { \
        const uint32_t si2_4 = x3 | x1; \
        const uint32_t si2_5 = x1 ^ x2; \
        const uint32_t si2_6 = x0 ^ x2; \
        const uint32_t si2_7 = ~si2_5; \
        const uint32_t si2_8 = x3 & si2_6; \
        const uint32_t si2_9 = x0 | si2_8; \
        const uint32_t si2_10 = si2_9 & si2_4; \
        const uint32_t si2_11 = x3 ^ si2_7; \
        const uint32_t si2_12 = si2_6 ^ si2_10; \
        const uint32_t si2_13 = si2_9 | si2_11; \
        const uint32_t si2_14 = si2_13 | si2_6; \
        const uint32_t si2_15 = si2_5 ^ x3; \
        const uint32_t si2_16 = si2_5 | si2_11; \
        const uint32_t si2_17 = si2_5 ^ si2_10; \
        const uint32_t si2_18 = x1 ^ si2_8; \
        const uint32_t si2_19 = si2_18 ^ si2_14; \
        const uint32_t si2_20 = si2_16 ^ si2_12; \
        const uint32_t si2_21 = x1 & si2_15; \
        const uint32_t si2_22 = si2_21 ^ si2_6; \
        x0 = si2_22; x1 = si2_17; x2 = si2_20; x3 = si2_19; \
    } while (0)

/* SI3: 21 gates (0 NOT) */
#define SI3(x0, x1, x2, x3) \
    do { \
        const uint32_t si3_4 = x0 | x3; \
        const uint32_t si3_5 = x1 ^ x0; \
        const uint32_t si3_6 = x1 ^ x2; \
        const uint32_t si3_7 = si3_6 ^ x3; \
        const uint32_t si3_8 = x2 | si3_6; \
        const uint32_t si3_9 = si3_5 & x2; \
        const uint32_t si3_10 = x3 & si3_7; \
        const uint32_t si3_11 = x3 ^ x0; \
        const uint32_t si3_12 = si3_5 | x3; \
        const uint32_t si3_13 = si3_11 | si3_6; \
        const uint32_t si3_14 = si3_9 | si3_7; \
        const uint32_t si3_15 = si3_12 ^ si3_8; \
        const uint32_t si3_16 = si3_13 & si3_5; \
        const uint32_t si3_17 = x3 & x0; \
        const uint32_t si3_18 = si3_15 & x2; \
        const uint32_t si3_19 = si3_4 | si3_9; \
        const uint32_t si3_20 = si3_19 & si3_8; \
        const uint32_t si3_21 = si3_14 ^ si3_17; \
        const uint32_t si3_22 = si3_16 | si3_18; \
        const uint32_t si3_23 = si3_20 ^ si3_17; \
        const uint32_t si3_24 = si3_10 | si3_15; \
        x0 = si3_24; x1 = si3_21; x2 = si3_23; x3 = si3_22; \
    } while (0)

/* SI4: 20 gates (2 NOT) */
#define SI4(x0, x1, x2, x3) \
    do { \
        const uint32_t si4_4 = x0 ^ x1; \
        const uint32_t si4_5 = x0 | x1; \
        const uint32_t si4_6 = x2 ^ x1; \
        const uint32_t si4_7 = ~x3; \
        const uint32_t si4_8 = si4_6 ^ si4_5; \
        const uint32_t si4_9 = si4_8 ^ x3; \
        const uint32_t si4_10 = si4_5 | si4_9; \
        const uint32_t si4_11 = ~x2; \
        const uint32_t si4_12 = si4_11 | si4_6; \
        const uint32_t si4_13 = x3 & x0; \
        const uint32_t si4_14 = si4_7 & si4_11; \
        const uint32_t si4_15 = si4_7 & si4_8; \
        const uint32_t si4_16 = si4_12 ^ si4_13; \
        const uint32_t si4_17 = si4_10 ^ si4_16; \
        const uint32_t si4_18 = si4_14 & x0; \
        const uint32_t si4_19 = si4_4 ^ si4_14; \
        const uint32_t si4_20 = si4_4 ^ si4_15; \
        const uint32_t si4_21 = si4_9 ^ si4_18; \
        const uint32_t si4_22 = si4_13 & si4_8; \
        const uint32_t si4_23 = si4_22 ^ si4_19; \
        x0 = si4_23; x1 = si4_21; x2 = si4_17; x3 = si4_20; \
    } while (0)

/* SI5: 19 gates (1 NOT) */
#define SI5(x0, x1, x2, x3) \
    do { \
        const uint32_t si5_4 = x0 ^ x1; \
        const uint32_t si5_5 = x1 ^ x2; \
        const uint32_t si5_6 = x2 & si5_5; \
        const uint32_t si5_7 = x0 & x3; \
        const uint32_t si5_8 = x0 | x3; \
        const uint32_t si5_9 = si5_4 | si5_6; \
        const uint32_t si5_10 = x0 ^ x3; \
        const uint32_t si5_11 = ~si5_7; \
        const uint32_t si5_12 = si5_9 | si5_7; \
        const uint32_t si5_13 = x2 ^ si5_7; \
        const uint32_t si5_14 = si5_11 & si5_13; \
        const uint32_t si5_15 = x1 & si5_13; \
        const uint32_t si5_16 = si5_13 ^ x3; \
        const uint32_t si5_17 = si5_5 & si5_9; \
        const uint32_t si5_18 = si5_10 ^ si5_15; \
        const uint32_t si5_19 = si5_4 & si5_8; \
        const uint32_t si5_20 = si5_16 ^ si5_12; \
        const uint32_t si5_21 = si5_14 ^ si5_19; \
        const uint32_t si5_22 = si5_17 ^ si5_11; \
        x0 = si5_18; x1 = si5_20; x2 = si5_21; x3 = si5_22; \
    } while (0)

/* SI6: 20 gates (2 NOT) */
#define SI6(x0, x1, x2, x3) \
    do { \
        const uint32_t si6_4 = x2 & x0; \
        const uint32_t si6_5 = x1 ^ x0; \
        const uint32_t si6_6 = ~x1; \
        const uint32_t si6_7 = si6_4 | si6_5; \
        const uint32_t si6_8 = si6_6 ^ x3; \
        const uint32_t si6_9 = x0 ^ x2; \
        const uint32_t si6_10 = x1 & si6_9; \
        const uint32_t si6_11 = si6_6 & si6_9; \
        const uint32_t si6_12 = si6_10 & si6_8; \
        const uint32_t si6_13 = si6_9 | si6_7; \
        const uint32_t si6_14 = si6_5 ^ si6_11; \
        const uint32_t si6_15 = x2 ^ si6_8; \
        const uint32_t si6_16 = si6_11 | x3; \
        const uint32_t si6_17 = si6_13 ^ si6_12; \
        const uint32_t si6_18 = si6_15 ^ si6_17; \
        const uint32_t si6_19 = si6_4 ^ si6_15; \
        const uint32_t si6_20 = si6_14 & si6_15; \
        const uint32_t si6_21 = ~si6_7; \
        const uint32_t si6_22 = si6_21 ^ si6_16; \
        const uint32_t si6_23 = si6_20 ^ si6_21; \
        x0 = si6_18; x1 = si6_19; x2 = si6_23; x3 = si6_22; \
    } while (0)

/* SI7: 23 gates (3 NOT) */
#define SI7(x0, x1, x2, x3) \
    do { \
        const uint32_t si7_4 = ~x0; \
        const uint32_t si7_5 = x1 | x3; \
        const uint32_t si7_6 = x0 & x2; \
        const uint32_t si7_7 = x3 ^ x2; \
        const uint32_t si7_8 = x3 ^ si7_4; \
        const uint32_t si7_9 = si7_7 ^ si7_6; \
        const uint32_t si7_10 = x2 ^ x1; \
        const uint32_t si7_11 = si7_4 ^ x1; \
        const uint32_t si7_12 = si7_4 ^ si7_10; \
        const uint32_t si7_13 = si7_8 | si7_12; \
        const uint32_t si7_14 = si7_5 ^ si7_6; \
        const uint32_t si7_15 = si7_11 & si7_12; \
        const uint32_t si7_16 = si7_11 | x2; \
        const uint32_t si7_17 = si7_14 & si7_11; \
        const uint32_t si7_18 = si7_15 | si7_9; \
        const uint32_t si7_19 = si7_13 & si7_14; \
        const uint32_t si7_20 = si7_12 | si7_4; \
        const uint32_t si7_21 = ~x1; \
        const uint32_t si7_22 = si7_17 ^ si7_7; \
        const uint32_t si7_23 = si7_20 & si7_18; \
        const uint32_t si7_24 = ~si7_16; \
        const uint32_t si7_25 = si7_9 | si7_24; \
        const uint32_t si7_26 = si7_21 ^ si7_25; \
        x0 = si7_23; x1 = si7_26; x2 = si7_19; x3 = si7_22; \
    } while (0)
/* END GENERATED S-BOXES */

typedef struct {
    uint32_t k[33][4]; /* subkeys K_0..K_32, bitslice form */
} serpent_ks;

static const unsigned short serpent_key_bits[] = {128, 192, 256, 0};

#define PHI 0x9e3779b9u /* fractional part of the golden ratio (p7) */

/* Key schedule (p6-p7).  The prekeys w_i = (w_(i-8) ^ w_(i-5) ^ w_(i-3) ^
 * w_(i-1) ^ phi ^ i) <<< 11 are kept in a ring of eight variables (r_(i mod 8)
 * holds w_i once computed), and every four prekeys go through the S-box
 * S_((3 - j) mod 8) to give subkey K_j. */
#define PREKEY(ri, r3, r5, r7, i) ri = cl_rotl32(ri ^ r3 ^ r5 ^ r7 ^ PHI ^ (uint32_t)(i), 11)
#define SUBKEY(j, SBOX, a, b, c, d)                                             \
    do {                                                                        \
        uint32_t x0 = a, x1 = b, x2 = c, x3 = d;                                \
        SBOX(x0, x1, x2, x3);                                                   \
        k[j][0] = x0; k[j][1] = x1; k[j][2] = x2; k[j][3] = x3;                 \
    } while (0)
/* Prekeys i..i+7 and the subkeys i/4 (S-box SA) and i/4 + 1 (S-box SB). */
#define EIGHT_PREKEYS(i, SA, SB)                                                \
    do {                                                                        \
        PREKEY(r0, r3, r5, r7, (i) + 0);                                        \
        PREKEY(r1, r4, r6, r0, (i) + 1);                                        \
        PREKEY(r2, r5, r7, r1, (i) + 2);                                        \
        PREKEY(r3, r6, r0, r2, (i) + 3);                                        \
        SUBKEY((i) / 4, SA, r0, r1, r2, r3);                                    \
        PREKEY(r4, r7, r1, r3, (i) + 4);                                        \
        PREKEY(r5, r0, r2, r4, (i) + 5);                                        \
        PREKEY(r6, r1, r3, r5, (i) + 6);                                        \
        PREKEY(r7, r2, r4, r6, (i) + 7);                                        \
        SUBKEY((i) / 4 + 1, SB, r4, r5, r6, r7);                                \
    } while (0)

static int serpent_set_key(void *ksv, const uint8_t *key, unsigned key_bits)
{
    if (key_bits != 128 && key_bits != 192 && key_bits != 256)
        return CL_BAD_KEY_LENGTH;
    uint32_t w[8]; /* w_(-8) .. w_(-1): the key padded to 256 bits */
    unsigned n = key_bits / 32;
    for (unsigned i = 0; i < 8; i++)
        w[i] = i < n ? cl_load32_le(key + 4 * i) : 0;
    if (n < 8)
        w[n] = 1; /* short keys: append a 1 bit at the MSB end, then zeros (p2) */
    uint32_t r0 = w[0], r1 = w[1], r2 = w[2], r3 = w[3], r4 = w[4], r5 = w[5], r6 = w[6], r7 = w[7];
    uint32_t(*k)[4] = ((serpent_ks *)ksv)->k;
    for (int i = 0; i < 128; i += 32) {
        EIGHT_PREKEYS(i, SB3, SB2);
        EIGHT_PREKEYS(i + 8, SB1, SB0);
        EIGHT_PREKEYS(i + 16, SB7, SB6);
        EIGHT_PREKEYS(i + 24, SB5, SB4);
    }
    PREKEY(r0, r3, r5, r7, 128);
    PREKEY(r1, r4, r6, r0, 129);
    PREKEY(r2, r5, r7, r1, 130);
    PREKEY(r3, r6, r0, r2, 131);
    SUBKEY(32, SB3, r0, r1, r2, r3);
    return CL_OK;
}

/* Linear transformation (p6) and its inverse. */
#define LT(x0, x1, x2, x3)                                                      \
    do {                                                                        \
        x0 = cl_rotl32(x0, 13);                                                 \
        x2 = cl_rotl32(x2, 3);                                                  \
        x1 ^= x0 ^ x2;                                                          \
        x3 ^= x2 ^ (x0 << 3);                                                   \
        x1 = cl_rotl32(x1, 1);                                                  \
        x3 = cl_rotl32(x3, 7);                                                  \
        x0 ^= x1 ^ x3;                                                          \
        x2 ^= x3 ^ (x1 << 7);                                                   \
        x0 = cl_rotl32(x0, 5);                                                  \
        x2 = cl_rotl32(x2, 22);                                                 \
    } while (0)
#define LT_INV(x0, x1, x2, x3)                                                  \
    do {                                                                        \
        x2 = cl_rotr32(x2, 22);                                                 \
        x0 = cl_rotr32(x0, 5);                                                  \
        x2 ^= x3 ^ (x1 << 7);                                                   \
        x0 ^= x1 ^ x3;                                                          \
        x3 = cl_rotr32(x3, 7);                                                  \
        x1 = cl_rotr32(x1, 1);                                                  \
        x3 ^= x2 ^ (x0 << 3);                                                   \
        x1 ^= x0 ^ x2;                                                          \
        x2 = cl_rotr32(x2, 3);                                                  \
        x0 = cl_rotr32(x0, 13);                                                 \
    } while (0)

#define KX(r)                                                                   \
    do {                                                                        \
        x0 ^= k[r][0]; x1 ^= k[r][1]; x2 ^= k[r][2]; x3 ^= k[r][3];             \
    } while (0)
/* Round r < 31: key mixing, S-box S_(r mod 8), linear transformation. */
#define ROUND(r, SBOX)                                                          \
    do {                                                                        \
        KX(r);                                                                  \
        SBOX(x0, x1, x2, x3);                                                   \
        LT(x0, x1, x2, x3);                                                     \
    } while (0)
/* Inverse of ROUND. */
#define ROUND_INV(r, SBOX_INV)                                                  \
    do {                                                                        \
        LT_INV(x0, x1, x2, x3);                                                 \
        SBOX_INV(x0, x1, x2, x3);                                               \
        KX(r);                                                                  \
    } while (0)

static void serpent_encrypt(const void *ksv, const uint8_t *in, uint8_t *out, size_t n)
{
    const uint32_t(*k)[4] = ((const serpent_ks *)ksv)->k;
    for (; n; n--, in += 16, out += 16) {
        uint32_t x0 = cl_load32_le(in), x1 = cl_load32_le(in + 4);
        uint32_t x2 = cl_load32_le(in + 8), x3 = cl_load32_le(in + 12);
        for (int r = 0; r < 24; r += 8) {
            ROUND(r + 0, SB0); ROUND(r + 1, SB1); ROUND(r + 2, SB2); ROUND(r + 3, SB3);
            ROUND(r + 4, SB4); ROUND(r + 5, SB5); ROUND(r + 6, SB6); ROUND(r + 7, SB7);
        }
        ROUND(24, SB0); ROUND(25, SB1); ROUND(26, SB2); ROUND(27, SB3);
        ROUND(28, SB4); ROUND(29, SB5); ROUND(30, SB6);
        /* last round: the linear transformation is replaced by K_32 */
        KX(31);
        SB7(x0, x1, x2, x3);
        KX(32);
        cl_store32_le(out, x0);
        cl_store32_le(out + 4, x1);
        cl_store32_le(out + 8, x2);
        cl_store32_le(out + 12, x3);
    }
}

static void serpent_decrypt(const void *ksv, const uint8_t *in, uint8_t *out, size_t n)
{
    const uint32_t(*k)[4] = ((const serpent_ks *)ksv)->k;
    for (; n; n--, in += 16, out += 16) {
        uint32_t x0 = cl_load32_le(in), x1 = cl_load32_le(in + 4);
        uint32_t x2 = cl_load32_le(in + 8), x3 = cl_load32_le(in + 12);
        KX(32);
        SI7(x0, x1, x2, x3);
        KX(31);
        ROUND_INV(30, SI6); ROUND_INV(29, SI5); ROUND_INV(28, SI4); ROUND_INV(27, SI3);
        ROUND_INV(26, SI2); ROUND_INV(25, SI1); ROUND_INV(24, SI0);
        for (int r = 16; r >= 0; r -= 8) {
            ROUND_INV(r + 7, SI7); ROUND_INV(r + 6, SI6); ROUND_INV(r + 5, SI5); ROUND_INV(r + 4, SI4);
            ROUND_INV(r + 3, SI3); ROUND_INV(r + 2, SI2); ROUND_INV(r + 1, SI1); ROUND_INV(r + 0, SI0);
        }
        cl_store32_le(out, x0);
        cl_store32_le(out + 4, x1);
        cl_store32_le(out + 8, x2);
        cl_store32_le(out + 12, x3);
    }
}

const cl_impl cl_impl_serpent_bitslice = {
    .cipher = "serpent",
    .strategy = "bitslice",
    .block_bytes = 16,
    .key_bits = serpent_key_bits,
    .ks_bytes = sizeof(serpent_ks),
    .table_bytes = 0,
    .available = NULL,
    .set_encrypt_key = serpent_set_key,
    .set_decrypt_key = serpent_set_key,
    .encrypt = serpent_encrypt,
    .decrypt = serpent_decrypt,
    .init_hook = NULL,
};

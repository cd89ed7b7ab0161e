/*
 * twofish_core.h -- fixed tables and key-schedule pieces shared by the
 * Twofish strategies (full.c, compact.c).  Page numbers refer to the Twofish
 * AES submission, shared/specs/twofish-aes-submission.pdf.
 */
#ifndef TWOFISH_CORE_H
#define TWOFISH_CORE_H

#include <stdint.h>

/* q0 = cl_twofish_q[0], q1 = cl_twofish_q[1] (Sec. 4.3.5, p10). */
extern const uint8_t cl_twofish_q[2][256];
/* MDS column j applied to the last q-box of byte lane j (q1, q0, q1, q0):
 * h() ends with  Z = mq[0][y0'] ^ mq[1][y1'] ^ mq[2][y2'] ^ mq[3][y3']
 * where yj' is lane j before its final q (see gen_tables.py). */
extern const uint32_t cl_twofish_mq[4][256];

#define CL_TWOFISH_TABLE_BYTES (sizeof cl_twofish_q + sizeof cl_twofish_mq)

/* What both strategies derive from the key (Sec. 4.3, p8-p10). */
typedef struct {
    unsigned k;      /* N/64: 2, 3 or 4 */
    uint32_t K[40];  /* expanded key words K0..K39 */
    uint8_t sbox_key[4][4]; /* S-box key list L = (S_{k-1}, ..., S_0): byte j of L_i */
} cl_twofish_keyinfo;

/* Fills *ki from a 128/192/256-bit key; returns 0, or -1 for another length. */
int cl_twofish_expand(cl_twofish_keyinfo *ki, const uint8_t *key, unsigned key_bits);

/* Lane j of h() before its final q-box (Sec. 4.3.2, p8-p10) for the input
 * byte x, with kb[i][j] = byte j of L_i (the list L of h).  K3 and K4 are
 * the constants (k >= 3) and (k == 4): the stage qa (k = 4 only) and the
 * stage qb (k >= 3) are compiled in only when they apply; then
 * qc[qd[.] ^ l1] ^ l0 for every k.  The final q-box of lane j is folded
 * into cl_twofish_mq[j]. */
#define CL_TWOFISH_STAGES(x, j, qa, qb, kb, K3, K4) \
    ((K3) ? qb[(K4) ? (qa[x] ^ (kb)[3][j]) : (x)] ^ (kb)[2][j] : (x))
#define CL_TWOFISH_LANE(x, j, qa, qb, qd, qc, kb, K3, K4) \
    (qc[qd[CL_TWOFISH_STAGES(x, j, qa, qb, kb, K3, K4)] ^ (kb)[1][j]] ^ (kb)[0][j])
#define CL_TWOFISH_Q0 cl_twofish_q[0]
#define CL_TWOFISH_Q1 cl_twofish_q[1]
#define CL_TWOFISH_LANE0(x, kb, K3, K4) \
    CL_TWOFISH_LANE(x, 0, CL_TWOFISH_Q1, CL_TWOFISH_Q1, CL_TWOFISH_Q0, CL_TWOFISH_Q0, kb, K3, K4)
#define CL_TWOFISH_LANE1(x, kb, K3, K4) \
    CL_TWOFISH_LANE(x, 1, CL_TWOFISH_Q0, CL_TWOFISH_Q1, CL_TWOFISH_Q1, CL_TWOFISH_Q0, kb, K3, K4)
#define CL_TWOFISH_LANE2(x, kb, K3, K4) \
    CL_TWOFISH_LANE(x, 2, CL_TWOFISH_Q0, CL_TWOFISH_Q0, CL_TWOFISH_Q0, CL_TWOFISH_Q1, kb, K3, K4)
#define CL_TWOFISH_LANE3(x, kb, K3, K4) \
    CL_TWOFISH_LANE(x, 3, CL_TWOFISH_Q1, CL_TWOFISH_Q0, CL_TWOFISH_Q1, CL_TWOFISH_Q1, kb, K3, K4)

/* h(X, L) for a word X given as bytes x0..x3 (Sec. 4.3.2). */
#define CL_TWOFISH_H(x0, x1, x2, x3, kb, K3, K4)                  \
    (cl_twofish_mq[0][CL_TWOFISH_LANE0(x0, kb, K3, K4)] ^         \
     cl_twofish_mq[1][CL_TWOFISH_LANE1(x1, kb, K3, K4)] ^         \
     cl_twofish_mq[2][CL_TWOFISH_LANE2(x2, kb, K3, K4)] ^         \
     cl_twofish_mq[3][CL_TWOFISH_LANE3(x3, kb, K3, K4)])

/* Rounds 2r and 2r+1 of the cipher (Sec. 4.1, p7) without the swap: round 2r
 * updates (x2, x3) from (x0, x1), round 2r+1 updates (x0, x1) from (x2, x3);
 * DEC2 undoes ENC2.  The strategy defines G0(x) = g(X) and G1(x) = g(ROL(X, 8))
 * (its S-box lookups); x0..x3, t0, t1 (uint32_t) and K (the 40 subkey words)
 * are in scope. */
#define CL_TWOFISH_ENC2(r)                                          \
    do {                                                            \
        t0 = G0(x0);                                                \
        t1 = G1(x1);                                                \
        x2 = cl_rotr32(x2 ^ (t0 + t1 + K[4 * (r) + 8]), 1);         \
        x3 = cl_rotl32(x3, 1) ^ (t0 + 2 * t1 + K[4 * (r) + 9]);     \
        t0 = G0(x2);                                                \
        t1 = G1(x3);                                                \
        x0 = cl_rotr32(x0 ^ (t0 + t1 + K[4 * (r) + 10]), 1);        \
        x1 = cl_rotl32(x1, 1) ^ (t0 + 2 * t1 + K[4 * (r) + 11]);    \
    } while (0)

#define CL_TWOFISH_DEC2(r)                                          \
    do {                                                            \
        t0 = G0(x2);                                                \
        t1 = G1(x3);                                                \
        x0 = cl_rotl32(x0, 1) ^ (t0 + t1 + K[4 * (r) + 10]);        \
        x1 = cl_rotr32(x1 ^ (t0 + 2 * t1 + K[4 * (r) + 11]), 1);    \
        t0 = G0(x0);                                                \
        t1 = G1(x1);                                                \
        x2 = cl_rotl32(x2, 1) ^ (t0 + t1 + K[4 * (r) + 8]);         \
        x3 = cl_rotr32(x3 ^ (t0 + 2 * t1 + K[4 * (r) + 9]), 1);     \
    } while (0)

#endif

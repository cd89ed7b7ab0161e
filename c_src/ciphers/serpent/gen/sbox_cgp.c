/*
 * sbox_cgp.c -- searches short boolean circuits (AND, OR, XOR, NOT on whole
 * words) for the Serpent S-boxes and their inverses, for the bitsliced code in
 * ../bitslice.c.  A build tool, not part of the cipher.
 *
 *   cc -O2 -o /tmp/sbox_cgp sbox_cgp.c
 *   /tmp/sbox_cgp SECONDS_PER_SBOX [SEED [FIRST LAST [STALE [COST_MODE]]]] > out.txt
 *
 * FIRST..LAST: S-boxes 0..7 (S0..S7) and 8..15 (InvS0..InvS7); STALE: restart
 * after that many generations without improvement (300000 worked best);
 * COST_MODE: 0 = fewest gates, 1 = gates + 4 x latency (see below).  The
 * circuits in circuits.txt came from mode-1 runs (seeds in its header).
 *
 * S-box tables: Serpent AES submission, Appendix A.5 (PDF p21).  A value is a
 * 16-bit truth table over the 16 input nibbles; input word k holds bit k of
 * each nibble (the bitslice view of the spec, p5-p6).
 *
 * Method: Cartesian genetic programming, (1+4) evolution strategy with neutral
 * drift (a child that is no worse replaces the parent), restarted repeatedly.
 * Phase 1 minimizes the number of wrong output bits; once a circuit is
 * correct, phase 2 keeps it correct and minimizes its cost (ties: fewer
 * gates, fewer NOTs, lower depth).  The best circuit over all restarts
 * is re-evaluated on all inputs and printed in the gate-list form read by
 * emit_sboxes.py.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const uint8_t SBOX[16][16] = {
    {3, 8, 15, 1, 10, 6, 5, 11, 14, 13, 4, 2, 7, 0, 9, 12},  /* S0 */
    {15, 12, 2, 7, 9, 0, 5, 10, 1, 11, 14, 8, 6, 13, 3, 4},  /* S1 */
    {8, 6, 7, 9, 3, 12, 10, 15, 13, 1, 14, 4, 0, 11, 5, 2},  /* S2 */
    {0, 15, 11, 8, 12, 9, 6, 3, 13, 1, 2, 4, 10, 7, 5, 14},  /* S3 */
    {1, 15, 8, 3, 12, 0, 11, 6, 2, 5, 4, 10, 9, 14, 7, 13},  /* S4 */
    {15, 5, 2, 11, 4, 10, 9, 12, 0, 3, 14, 8, 13, 6, 7, 1},  /* S5 */
    {7, 2, 12, 5, 8, 4, 6, 11, 14, 9, 1, 15, 13, 3, 10, 0},  /* S6 */
    {1, 13, 15, 0, 14, 8, 2, 11, 7, 4, 12, 10, 9, 3, 5, 6},  /* S7 */
    {13, 3, 11, 0, 10, 6, 5, 12, 1, 14, 4, 7, 15, 9, 8, 2},  /* InvS0 */
    {5, 8, 2, 14, 15, 6, 12, 3, 11, 4, 7, 9, 1, 13, 10, 0},  /* InvS1 */
    {12, 9, 15, 4, 11, 14, 1, 2, 0, 3, 6, 13, 5, 8, 10, 7},  /* InvS2 */
    {0, 9, 10, 7, 11, 14, 6, 13, 3, 5, 12, 2, 4, 8, 15, 1},  /* InvS3 */
    {5, 0, 8, 3, 10, 9, 7, 14, 2, 12, 11, 6, 4, 15, 13, 1},  /* InvS4 */
    {8, 15, 2, 9, 4, 1, 13, 14, 11, 6, 5, 3, 7, 12, 10, 0},  /* InvS5 */
    {15, 10, 1, 13, 5, 3, 6, 0, 4, 9, 14, 7, 2, 12, 8, 11},  /* InvS6 */
    {3, 0, 6, 13, 9, 14, 15, 8, 5, 12, 11, 7, 10, 1, 4, 2},  /* InvS7 */
};

enum { OP_AND, OP_OR, OP_XOR, OP_NOT, NOPS };
#define NIN 4
#define G 30 /* gate slots in a genome; active gates are fewer */
#define NN (NIN + G)

typedef struct {
    uint8_t op[NN], a[NN], b[NN];
    uint8_t out[4];
} genome;

typedef struct { int wrong, cost, gates, nots, depth; } score;

/* Cost of a correct circuit: mode 0 = gate count; mode 1 = gate count + 4 x
 * the latency of the circuit in its place in the cipher (one cycle of latency
 * per round weighs as much as ~4 instructions on a 4-wide core).  That latency
 * is max_k(arrival of output k + LAT_OUT[k]) with input word j arriving at
 * LAT_IN[j]: the arrival offsets of the words coming out of the linear
 * transformation (+ key xor) and the longest path from each S-box output
 * through the next key xor and linear transformation, for a unit-latency
 * model of LT (encryption S-boxes) and of LT^-1 (inverse S-boxes). */
static int cost_mode = 0;
static const int LAT_IN[2][4] = {{3, 0, 3, 0}, {0, 1, 1, 2}};
static const int LAT_OUT[2][4] = {{7, 5, 6, 4}, {4, 4, 3, 3}};
static int lat_profile = 0; /* 0: S-boxes (before LT), 1: inverses (before LT^-1) */

static uint64_t rs;
static uint32_t rnd(void)
{
    rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
    return (uint32_t)(rs >> 16);
}
static unsigned rndn(unsigned n) { return rnd() % n; }

static void random_gene(genome *g, int i)
{
    g->op[i] = (uint8_t)rndn(NOPS);
    g->a[i] = (uint8_t)rndn((unsigned)i);
    g->b[i] = (uint8_t)rndn((unsigned)i);
}

static void random_genome(genome *g)
{
    for (int i = NIN; i < NN; i++) random_gene(g, i);
    for (int k = 0; k < 4; k++) g->out[k] = (uint8_t)(NIN + rndn(G));
}

static void mark_active(const genome *g, uint8_t *act)
{
    memset(act, 0, NN);
    for (int k = 0; k < 4; k++) act[g->out[k]] = 1;
    for (int i = NN - 1; i >= NIN; i--)
        if (act[i]) { act[g->a[i]] = 1; if (g->op[i] != OP_NOT) act[g->b[i]] = 1; }
}

static score evaluate(const genome *g, const uint16_t *target)
{
    uint8_t act[NN], dep[NN];
    uint16_t v[NN] = {0xaaaa, 0xcccc, 0xf0f0, 0xff00};
    mark_active(g, act);
    score s = {0, 0, 0, 0, 0};
    int arr[NN];
    for (int i = 0; i < NIN; i++) { dep[i] = 0; arr[i] = LAT_IN[lat_profile][i]; }
    for (int i = NIN; i < NN; i++) {
        if (!act[i]) continue;
        uint16_t x = v[g->a[i]], y = v[g->b[i]];
        int d = dep[g->a[i]];
        switch (g->op[i]) {
        case OP_AND: v[i] = x & y; break;
        case OP_OR: v[i] = x | y; break;
        case OP_XOR: v[i] = x ^ y; break;
        default: v[i] = (uint16_t)(x ^ 0xffff); break;
        }
        if (g->op[i] != OP_NOT && dep[g->b[i]] > d) d = dep[g->b[i]];
        dep[i] = (uint8_t)(d + 1);
        int at = arr[g->a[i]];
        if (g->op[i] != OP_NOT && arr[g->b[i]] > at) at = arr[g->b[i]];
        arr[i] = at + 1;
        s.gates++;
        s.nots += g->op[i] == OP_NOT;
    }
    int lat = 0;
    for (int k = 0; k < 4; k++) {
        s.wrong += __builtin_popcount((unsigned)(v[g->out[k]] ^ target[k]));
        if (dep[g->out[k]] > s.depth) s.depth = dep[g->out[k]];
        if (arr[g->out[k]] + LAT_OUT[lat_profile][k] > lat) lat = arr[g->out[k]] + LAT_OUT[lat_profile][k];
    }
    s.cost = s.gates + (cost_mode ? 4 * lat : 0);
    return s;
}

/* a <= b in the order of phase 2 (correct first, then fewer gates, ...) */
static int no_worse(score a, score b, int phase)
{
    if (phase == 1) return a.wrong <= b.wrong;
    if (a.wrong != b.wrong) return a.wrong < b.wrong;
    if (a.cost != b.cost) return a.cost < b.cost;
    if (a.gates != b.gates) return a.gates < b.gates;
    if (a.nots != b.nots) return a.nots < b.nots;
    return a.depth <= b.depth;
}
static int better(score a, score b)
{
    if (a.wrong != b.wrong) return a.wrong < b.wrong;
    if (a.cost != b.cost) return a.cost < b.cost;
    if (a.gates != b.gates) return a.gates < b.gates;
    if (a.nots != b.nots) return a.nots < b.nots;
    return a.depth < b.depth;
}

/* Mutates random genes until one active gene changed. */
static void mutate(genome *g)
{
    uint8_t act[NN];
    mark_active(g, act);
    for (;;) {
        unsigned r = rndn((unsigned)(3 * G + 4));
        if (r >= 3 * G) {
            int k = (int)(r - 3 * G);
            uint8_t o = (uint8_t)(NIN + rndn(G));
            if (o == g->out[k]) continue;
            g->out[k] = o;
            return;
        }
        int i = NIN + (int)(r / 3), f = (int)(r % 3);
        if (f == 0) {
            uint8_t op = (uint8_t)rndn(NOPS);
            if (op == g->op[i]) continue;
            g->op[i] = op;
        } else {
            uint8_t x = (uint8_t)rndn((unsigned)i);
            uint8_t *p = f == 1 ? &g->a[i] : &g->b[i];
            if (x == *p) continue;
            *p = x;
            if (f == 2 && g->op[i] == OP_NOT) continue;
        }
        if (act[i]) return;
    }
}

static void print_circuit(const genome *g, const char *name, score s, const uint8_t *sbox)
{
    uint8_t act[NN];
    int id[NN];
    mark_active(g, act);
    for (int i = 0; i < NIN; i++) id[i] = i;
    int n = NIN;
    uint16_t v[NN] = {0xaaaa, 0xcccc, 0xf0f0, 0xff00};
    printf("%s gates=%d nots=%d depth=%d cost=%d mode=%d\n", name, s.gates, s.nots, s.depth, s.cost,
           cost_mode);
    const char *opn[] = {"and", "or", "xor", "not"};
    for (int i = NIN; i < NN; i++) {
        if (!act[i]) continue;
        id[i] = n++;
        uint16_t x = v[g->a[i]], y = v[g->b[i]];
        v[i] = g->op[i] == OP_AND ? x & y : g->op[i] == OP_OR ? x | y : g->op[i] == OP_XOR ? x ^ y : (uint16_t)~x;
        if (g->op[i] == OP_NOT)
            printf("  %d = not %d\n", id[i], id[g->a[i]]);
        else
            printf("  %d = %s %d %d\n", id[i], opn[g->op[i]], id[g->a[i]], id[g->b[i]]);
    }
    printf("  out %d %d %d %d\n", id[g->out[0]], id[g->out[1]], id[g->out[2]], id[g->out[3]]);
    for (int t = 0; t < 16; t++) {
        int y = 0;
        for (int k = 0; k < 4; k++) y |= ((v[g->out[k]] >> t) & 1) << k;
        if (y != sbox[t]) { fprintf(stderr, "%s: VERIFY FAILED\n", name); exit(1); }
    }
    fflush(stdout);
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 30;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
    int first = argc > 3 ? atoi(argv[3]) : 0, last = argc > 4 ? atoi(argv[4]) : 15;
    long stale_limit = argc > 5 ? atol(argv[5]) : 400000;
    cost_mode = argc > 6 ? atoi(argv[6]) : 0;
    for (int sb = first; sb <= last; sb++) {
        char name[8];
        snprintf(name, sizeof name, sb < 8 ? "SB%d" : "SI%d", sb & 7);
        uint16_t target[4] = {0};
        for (int k = 0; k < 4; k++)
            for (int t = 0; t < 16; t++) target[k] |= (uint16_t)(((SBOX[sb][t] >> k) & 1) << t);
        lat_profile = sb >= 8;
        rs = seed * 0x9e3779b97f4a7c15ULL + (uint64_t)(sb + 1) * 0xd1b54a32d192ed03ULL;
        genome best;
        score bs = {1 << 20, 0, 0, 0, 0};
        clock_t t0 = clock();
        long restarts = 0;
        while ((double)(clock() - t0) / CLOCKS_PER_SEC < secs) {
            genome par;
            random_genome(&par);
            score ps = evaluate(&par, target);
            restarts++;
            int phase = 1;
            long stale = 0;
            for (long gen = 0; gen < 40000000 && stale < stale_limit; gen++) {
                genome bestc = par;
                score bcs = {1 << 20, 0, 0, 0, 0};
                for (int c = 0; c < 4; c++) {
                    genome ch = par;
                    mutate(&ch);
                    score cs = evaluate(&ch, target);
                    if (c == 0 || no_worse(cs, bcs, phase)) { bestc = ch; bcs = cs; }
                }
                if (no_worse(bcs, ps, phase)) {
                    if (phase == 1 ? bcs.wrong < ps.wrong : better(bcs, ps)) stale = 0; else stale++;
                    par = bestc; ps = bcs;
                } else stale++;
                if (phase == 1 && ps.wrong == 0) { phase = 2; stale = 0; }
            }
            if (ps.wrong == 0 && better(ps, bs)) {
                best = par; bs = ps;
                fprintf(stderr, "%s: cost %d, %d gates (%d not, depth %d), restart %ld, %.0fs\n",
                        name, bs.cost, bs.gates, bs.nots, bs.depth, restarts,
                        (double)(clock() - t0) / CLOCKS_PER_SEC);
            }
        }
        if (bs.wrong != 0) { fprintf(stderr, "%s: nothing found\n", name); return 1; }
        print_circuit(&best, name, bs, SBOX[sb]);
    }
    return 0;
}

/*
 * timing.c -- NIST's timing program (section 3.1 of the 1999 report), as
 * many short interleaved samples.
 *
 *   timing --impl CIPHER[/STRATEGY] [--key-bits 128,192,256] [--blocks-per-call C]
 *          [--samples R] [--warmup W] [--sample-us U] [--seed S]
 *
 * NIST timed three things per key size: encrypting B blocks through the
 * NIST-style API (blockEncrypt in calls of C blocks, ECB), decrypting B
 * blocks, and setting up K key pairs (one encryption and one decryption key
 * each).  This program times the same three operations, but as short samples
 * of about U microseconds each (B and K are sized per operation so that one
 * sample lasts about U; the sizes are printed), and it interleaves them: every
 * round takes one sample of every operation of every key size, so a period
 * when the machine is busy spoils one sample of each rather than a whole
 * series.  The first W rounds warm caches and branch predictors and are not
 * printed.  One JSON line per key size with the raw sample times in ns;
 * statistics are the lab's (lab/stats.py), over processes as well as samples.
 * Every round also takes one sample of the machine-speed gauge (util.h),
 * sized like the others and printed as one "gauge" line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cipherlab.h"
#include "util.h"

#define PROG "timing"
#define NKEYS 64          /* distinct keys cycled through by key-setup samples */
#define SPAN_BLOCKS 256u  /* blocks in the work buffer (NIST: 4 KiB-ish of random blocks) */
#define MAX_PER_SAMPLE (1ul << 24)

enum { ENC, DEC, KEY };
static const char *const OP_NAME[] = {"encrypt", "decrypt", "key_setup"};

typedef struct {
    const cl_impl *impl;
    unsigned kb;
    void *eks, *dks;   /* schedules the block operations use */
    void *kks, *kdks;  /* schedules the key-setup samples overwrite */
    uint8_t *keys;     /* NKEYS keys */
    unsigned long next_key;
} key_state;

typedef struct {
    key_state *k;
    int op;
    unsigned long per_sample; /* blocks (ENC, DEC) or key pairs (KEY) per sample */
    uint64_t *ns;
} quantity;

static uint8_t *in_buf, *out_buf;
static unsigned long per_call = 1;

static uint64_t sample(quantity *q)
{
    key_state *k = q->k;
    const cl_impl *impl = k->impl;
    const unsigned bs = impl->block_bytes;
    uint64_t t0, t1;
    if (q->op == KEY) {
        t0 = cl_now_ns();
        for (unsigned long i = 0; i < q->per_sample; i++) {
            const uint8_t *key = k->keys + (k->next_key++ % NKEYS) * CL_MAX_KEY_BYTES;
            impl->set_encrypt_key(k->kks, key, k->kb);
            impl->set_decrypt_key(k->kdks, key, k->kb);
        }
        t1 = cl_now_ns();
        return t1 - t0;
    }
    cl_cipher c;
    cl_cipher_init(&c, impl, CL_MODE_ECB, NULL, q->op == ENC ? k->eks : k->dks);
    unsigned long off = 0;
    t0 = cl_now_ns();
    for (unsigned long b = 0; b < q->per_sample; b += per_call) {
        if (q->op == ENC)
            cl_block_encrypt(&c, k->eks, in_buf + off * bs, out_buf + off * bs, per_call);
        else
            cl_block_decrypt(&c, k->dks, in_buf + off * bs, out_buf + off * bs, per_call);
        off = (off + per_call) % SPAN_BLOCKS;
    }
    t1 = cl_now_ns();
    return t1 - t0;
}

/* Doubles the work of one sample until it lasts at least target_ns. */
static void calibrate(quantity *q, uint64_t target_ns)
{
    q->per_sample = q->op == KEY ? 1 : per_call;
    while (q->per_sample < MAX_PER_SAMPLE) {
        uint64_t a = sample(q), b = sample(q);
        if ((a < b ? a : b) >= target_ns)
            break;
        q->per_sample *= 2;
    }
}

int main(int argc, char **argv)
{
    const char *impl_name = NULL;
    cl_list key_bits = {{0}, 0};
    unsigned long samples = 10, warmup = 2, sample_us = 100;
    uint64_t seed = 1999;
    const cl_option opts[] = {
        {"--impl", CL_OPT_STR, &impl_name},
        {"--key-bits", CL_OPT_LIST, &key_bits},
        {"--blocks-per-call", CL_OPT_ULONG, &per_call},
        {"--samples", CL_OPT_ULONG, &samples},
        {"--warmup", CL_OPT_ULONG, &warmup},
        {"--sample-us", CL_OPT_ULONG, &sample_us},
        {"--seed", CL_OPT_U64, &seed},
        {NULL, CL_OPT_FLAG, NULL},
    };
    cl_parse_options(PROG, argc, argv, opts);
    const cl_impl *impl = cl_require_impl(PROG, impl_name);
    if (!samples || !per_call || !sample_us || per_call > SPAN_BLOCKS)
        cl_die(PROG, "need --samples, --sample-us > 0 and 0 < --blocks-per-call <= 256", NULL);
    if (!key_bits.n)
        for (const unsigned short *kb = impl->key_bits; *kb && key_bits.n < CL_LIST_MAX; kb++)
            key_bits.v[key_bits.n++] = *kb;

    const unsigned bs = impl->block_bytes;
    in_buf = cl_alloc_aligned(SPAN_BLOCKS * bs);
    out_buf = cl_alloc_aligned(SPAN_BLOCKS * bs);
    cl_rand_fill(&seed, in_buf, SPAN_BLOCKS * bs);

    const size_t nq = 3 * key_bits.n;
    key_state *ks = calloc(key_bits.n, sizeof *ks);
    quantity *qs = calloc(nq, sizeof *qs);
    if (!ks || !qs)
        cl_die(PROG, "out of memory", NULL);
    for (size_t i = 0; i < key_bits.n; i++) {
        key_state *k = &ks[i];
        k->impl = impl;
        k->kb = (unsigned)key_bits.v[i];
        if (!cl_supports_key_bits(impl, k->kb))
            cl_die(PROG, "key size not supported by this implementation", impl_name);
        k->eks = cl_alloc_aligned(impl->ks_bytes);
        k->dks = cl_alloc_aligned(impl->ks_bytes);
        k->kks = cl_alloc_aligned(impl->ks_bytes);
        k->kdks = cl_alloc_aligned(impl->ks_bytes);
        k->keys = cl_alloc_aligned(NKEYS * CL_MAX_KEY_BYTES);
        cl_rand_fill(&seed, k->keys, NKEYS * CL_MAX_KEY_BYTES);
        if (impl->set_encrypt_key(k->eks, k->keys, k->kb) != CL_OK ||
            impl->set_decrypt_key(k->dks, k->keys, k->kb) != CL_OK)
            cl_die(PROG, "key setup failed", impl_name);
        for (int op = ENC; op <= KEY; op++) {
            quantity *q = &qs[3 * i + (size_t)op];
            q->k = k;
            q->op = op;
            q->ns = calloc(samples, sizeof *q->ns);
            if (!q->ns)
                cl_die(PROG, "out of memory", NULL);
        }
    }
    for (size_t i = 0; i < nq; i++)
        calibrate(&qs[i], (uint64_t)sample_us * 1000u);
    const unsigned long gauge_iters = cl_gauge_size((uint64_t)sample_us * 1000u, MAX_PER_SAMPLE);
    uint64_t *gauge_ns = calloc(samples, sizeof *gauge_ns);
    if (!gauge_ns)
        cl_die(PROG, "out of memory", NULL);

    volatile uint8_t sink = 0;
    for (unsigned long r = 0; r < warmup + samples; r++) {
        for (size_t i = 0; i < nq; i++) {
            uint64_t t = sample(&qs[i]);
            if (r >= warmup)
                qs[i].ns[r - warmup] = t;
        }
        uint64_t g = cl_gauge_ns(gauge_iters);
        if (r >= warmup)
            gauge_ns[r - warmup] = g;
        sink ^= out_buf[0];
    }
    (void)sink;

    for (size_t i = 0; i < key_bits.n; i++) {
        printf("{\"type\":\"timing\",");
        cl_json_impl_fields(stdout, impl);
        printf(",\"key_size\":%u,\"samples\":%lu,\"warmup\":%lu,\"blocks_per_call\":%lu,"
               "\"timer\":\"clock-monotonic\",\"unit\":\"ns\"",
               ks[i].kb, samples, warmup, per_call);
        for (int op = ENC; op <= KEY; op++) {
            quantity *q = &qs[3 * i + (size_t)op];
            printf(",\"%s\":{\"per_sample\":%lu", OP_NAME[op], q->per_sample);
            cl_json_u64_array(stdout, "ns", q->ns, samples);
            printf("}");
        }
        printf("}\n");
    }
    cl_json_gauge(stdout, gauge_iters, "ns", gauge_ns, samples);
    fflush(stdout);
    free(gauge_ns);
    for (size_t i = 0; i < key_bits.n; i++) { /* release peers' objects: a sanitizer build reports none */
        cl_free_ks(impl, ks[i].eks);
        cl_free_ks(impl, ks[i].dks);
        cl_free_ks(impl, ks[i].kks);
        cl_free_ks(impl, ks[i].kdks);
        free(ks[i].keys);
    }
    for (size_t i = 0; i < nq; i++)
        free(qs[i].ns);
    free(ks);
    free(qs);
    free(in_buf);
    free(out_buf);
    return 0;
}

/*
 * cycles.c -- NIST's cycle-counting program (section 3.2 of the 1999
 * report), with Lipmaa's "null function" overhead alongside, as many short
 * interleaved samples.
 *
 *   cycles --impl CIPHER[/STRATEGY] [--key-bits 128] [--sizes 1,16,128,1024,32768]
 *          [--samples R] [--warmup W] [--sample-us U] [--long-samples L] [--calls M] [--seed S]
 *
 * Per key size it counts (counter.h) the cost of one call of
 *   ekey/dkey  set_encrypt_key / set_decrypt_key,
 *   init       cl_cipher_init (NIST's cipherInit),
 *   encrypt/decrypt of n blocks in one call (blockEncrypt/blockDecrypt, ECB),
 *              for every n in --sizes,
 * and `null`: one call of an empty function through a pointer between the two
 * counter reads (the overhead the lab subtracts once per sample).
 *
 * A sample is M back-to-back calls of one operation between two counter
 * reads; M is doubled until a sample lasts about U microseconds (unless
 * --calls fixes it), so the counter's step (26 TSC ticks on the lab's VM) is
 * well below 1 % of a reading.  Encryptions work in place on one buffer, so
 * each call depends on the previous one, as a single call would be measured.
 * Every round takes one sample of every operation (operations whose sample
 * lasts much longer than U take fewer samples, at least L, in the first rounds), so a busy period
 * of the machine spoils one sample of each rather than a series.  W warm-up
 * rounds run the operations without reading the counter.  Raw deltas only:
 * the lab subtracts the overhead and divides by M and n.  Every round also
 * counts one sample of the machine-speed gauge (util.h), printed as one
 * "gauge" line; not under the instruction counter, whose counts are exact
 * and whose regions the lab pairs with the operations' deltas.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cipherlab.h"
#include "counter.h"
#include "util.h"

#define PROG "cycles"
#define MAX_CALLS (1ul << 20)
/* The fewest samples, by default, of an operation whose single call lasts much longer than a sample
 * (Encrypt-32768: 1 to 25 ms on the lab's VM; --long-samples L): the lab pairs each with the gauge sample of
 * its round and takes their median per process, which three samples left to one noisy one
 * (docs/measurement.md). */
#define LONG_SAMPLES 8
/* A call is long when it lasts more than LONG_CALL sample lengths; a long operation's samples then fill up to
 * LONG_FILL sample lengths a round (R rounds: R * LONG_FILL * U in all, 25.6 ms per operation and process in the
 * quick profile), at least L of them and at most R.  Each long sample's own spread within a process is about
 * 1.3 % (it lasts milliseconds, across the machine's speed modes), so eight of them left the process's median
 * of Encrypt-32768 about 1 % from the next process's; filling 25.6 ms instead of 6.4 gives the calls of 1-3 ms
 * 8-25 samples, the gauge-relative difference between two quick runs of those quantities p50 0.37 -> 0.26 %
 * (docs/measurement.md), and leaves slower calls, which would cost most, at L. */
#define LONG_CALL 4
#define LONG_FILL 16

typedef void (*null_fn)(void);
static void null_function(void) { __asm__ __volatile__("" ::: "memory"); }
static volatile null_fn null_ptr = null_function;

enum { NUL, EKEY, DKEY, INIT, ENC, DEC };
static const char *const OP_NAME[] = {"null", "ekey", "dkey", "init", "encrypt", "decrypt"};

typedef struct {
    const cl_impl *impl;
    unsigned kb;
    void *eks, *dks;
    uint8_t key[CL_MAX_KEY_BYTES];
    cl_cipher enc_c, dec_c;
} key_state;

typedef struct {
    key_state *k;
    int op;
    unsigned long n;       /* blocks per call (ENC, DEC); 1 otherwise */
    unsigned long calls;   /* calls per sample */
    unsigned long samples; /* samples this operation takes */
    unsigned long taken;
    uint64_t *d;
} quantity;

static uint8_t *buf;
static volatile uint32_t gauge_sink; /* keeps the gauge's work */

static void work(quantity *q)
{
    key_state *k = q->k;
    const cl_impl *impl = k->impl;
    cl_cipher scratch;
    switch (q->op) {
    case NUL:
        for (unsigned long i = 0; i < q->calls; i++)
            null_ptr();
        break;
    case EKEY:
        for (unsigned long i = 0; i < q->calls; i++)
            impl->set_encrypt_key(k->eks, k->key, k->kb);
        break;
    case DKEY:
        for (unsigned long i = 0; i < q->calls; i++)
            impl->set_decrypt_key(k->dks, k->key, k->kb);
        break;
    case INIT:
        for (unsigned long i = 0; i < q->calls; i++)
            cl_cipher_init(&scratch, impl, CL_MODE_ECB, NULL, k->eks);
        break;
    case ENC:
        for (unsigned long i = 0; i < q->calls; i++)
            cl_block_encrypt(&k->enc_c, k->eks, buf, buf, q->n);
        break;
    case DEC:
        for (unsigned long i = 0; i < q->calls; i++)
            cl_block_decrypt(&k->dec_c, k->dks, buf, buf, q->n);
        break;
    }
}

static uint64_t timed_ns(quantity *q)
{
    uint64_t t0 = cl_now_ns();
    work(q);
    return cl_now_ns() - t0;
}

/* The smaller of two timed samples: what sizes a sample.  From one reading, a slow first call (a page fault,
 * an interrupt) left M at 1, and that process timed single short calls in steps of the counter. */
static uint64_t best_ns(quantity *q)
{
    uint64_t a = timed_ns(q), b = timed_ns(q);
    return a < b ? a : b;
}

/* Key schedules stay valid for the block operations: key-setup samples
 * rewrite the same key; the key changes between rounds. */
static void next_key(key_state *k, unsigned long r)
{
    k->key[r % (k->kb / 8)] ^= (uint8_t)(r | 1);
}

int main(int argc, char **argv)
{
    const char *impl_name = NULL;
    cl_list key_bits = {{128}, 1}, sizes = {{1, 16, 128, 1024, 32768}, 5};
    unsigned long samples = 10, warmup = 2, sample_us = 100, fixed_calls = 0, long_samples = LONG_SAMPLES;
    uint64_t seed = 1999;
    const cl_option opts[] = {
        {"--impl", CL_OPT_STR, &impl_name},
        {"--key-bits", CL_OPT_LIST, &key_bits},
        {"--sizes", CL_OPT_LIST, &sizes},
        {"--samples", CL_OPT_ULONG, &samples},
        {"--warmup", CL_OPT_ULONG, &warmup},
        {"--sample-us", CL_OPT_ULONG, &sample_us},
        {"--long-samples", CL_OPT_ULONG, &long_samples},
        {"--calls", CL_OPT_ULONG, &fixed_calls},
        {"--seed", CL_OPT_U64, &seed},
        {NULL, CL_OPT_FLAG, NULL},
    };
    cl_parse_options(PROG, argc, argv, opts);
    const cl_impl *impl = cl_require_impl(PROG, impl_name);
    if (!samples || !sample_us || !long_samples)
        cl_die(PROG, "need --samples > 0, --sample-us > 0 and --long-samples > 0", NULL);
    unsigned long maxn = 1;
    for (size_t i = 0; i < sizes.n; i++) {
        if (!sizes.v[i])
            cl_die(PROG, "--sizes must be positive", NULL);
        if (sizes.v[i] > maxn)
            maxn = sizes.v[i];
    }

    /* Counter rate against CLOCK_MONOTONIC over ~5 ms: the first counted
     * region of the program (the instruction counter drops it). */
    uint64_t w0 = cl_now_ns(), c0 = cl_counter_start(), w1;
    do
        w1 = cl_now_ns();
    while (w1 - w0 < 5000000u);
    uint64_t c1 = cl_counter_stop();
    printf("{\"type\":\"counter\",\"counter\":\"%s\",\"unit\":\"%s\",\"ticks_per_second\":%.0f}\n",
           cl_counter_name(), cl_counter_unit(), (double)(c1 - c0) * 1e9 / (double)(w1 - w0));

    buf = cl_alloc_aligned(maxn * impl->block_bytes);
    cl_rand_fill(&seed, buf, maxn * impl->block_bytes);
    const size_t per_key = 4 + 2 * sizes.n, nq = per_key * key_bits.n;
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
        cl_rand_fill(&seed, k->key, sizeof k->key);
        if (impl->set_encrypt_key(k->eks, k->key, k->kb) != CL_OK ||
            impl->set_decrypt_key(k->dks, k->key, k->kb) != CL_OK)
            cl_die(PROG, "key setup failed", impl_name);
        cl_cipher_init(&k->enc_c, impl, CL_MODE_ECB, NULL, k->eks);
        cl_cipher_init(&k->dec_c, impl, CL_MODE_ECB, NULL, k->dks);
        quantity *q = &qs[i * per_key];
        int ops[] = {NUL, EKEY, DKEY, INIT};
        for (int j = 0; j < 4; j++, q++)
            q->k = k, q->op = ops[j], q->n = 1;
        for (int dir = 0; dir < 2; dir++)
            for (size_t s = 0; s < sizes.n; s++, q++)
                q->k = k, q->op = dir ? DEC : ENC, q->n = sizes.v[s];
    }

    /* Size every sample, and give long ones fewer samples. */
    const uint64_t target = (uint64_t)sample_us * 1000u;
    for (size_t i = 0; i < nq; i++) {
        quantity *q = &qs[i];
        q->calls = fixed_calls ? fixed_calls : 1;
        uint64_t t = best_ns(q);
        while (!fixed_calls && q->op != NUL && t < target && q->calls < MAX_CALLS) {
            q->calls *= 2;
            t = best_ns(q);
        }
        q->samples = samples;
        /* A single call that lasts much longer than a sample: a sample of many short calls that measured slow
         * was disturbed (a preemption in both readings) and keeps every round. */
        if (samples > long_samples && t / q->calls > LONG_CALL * target) {
            uint64_t fit = (uint64_t)samples * LONG_FILL * target / t;
            q->samples = fit < long_samples ? long_samples : (unsigned long)fit;
        }
        q->d = calloc(q->samples, sizeof *q->d);
        if (!q->d)
            cl_die(PROG, "out of memory", NULL);
    }

    const int gauged = strcmp(cl_counter_name(), "qemu-insn-region") != 0;
    const unsigned long gauge_iters = gauged ? cl_gauge_size(target, MAX_CALLS * 64) : 64;
    uint64_t *gauge_d = calloc(samples, sizeof *gauge_d);
    if (!gauge_d)
        cl_die(PROG, "out of memory", NULL);

    for (unsigned long r = 0; r < warmup + samples; r++) {
        if (gauged && r >= warmup) {
            uint64_t t0 = cl_counter_start();
            gauge_sink = cl_gauge_work(gauge_iters);
            gauge_d[r - warmup] = cl_counter_stop() - t0;
        }
        for (size_t i = 0; i < key_bits.n; i++)
            next_key(&ks[i], r);
        for (size_t i = 0; i < nq; i++) {
            quantity *q = &qs[i];
            if (r < warmup) {
                work(q);
                continue;
            }
            if (q->taken == q->samples)
                continue;
            uint64_t t0 = cl_counter_start();
            work(q);
            q->d[q->taken++] = cl_counter_stop() - t0;
        }
    }

    for (size_t i = 0; i < nq; i++) {
        quantity *q = &qs[i];
        printf("{\"type\":\"cycles\",\"impl\":\"%s/%s\",\"key_size\":%u,\"op\":\"%s\",\"n\":%lu,"
               "\"calls\":%lu,\"counter\":\"%s\",\"unit\":\"%s\"",
               impl->cipher, impl->strategy, q->k->kb, OP_NAME[q->op], q->n, q->calls, cl_counter_name(),
               cl_counter_unit());
        cl_json_u64_array(stdout, "deltas", q->d, q->taken);
        printf("}\n");
    }
    if (gauged)
        cl_json_gauge(stdout, gauge_iters, cl_counter_unit(), gauge_d, samples);
    fflush(stdout);
    free(gauge_d);
    for (size_t i = 0; i < key_bits.n; i++) { /* release peers' objects: a sanitizer build reports none */
        cl_free_ks(impl, ks[i].eks);
        cl_free_ks(impl, ks[i].dks);
    }
    for (size_t i = 0; i < nq; i++)
        free(qs[i].d);
    free(ks);
    free(qs);
    free(buf);
    return 0;
}

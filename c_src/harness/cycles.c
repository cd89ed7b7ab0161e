/*
 * cycles.c -- the NIST cycle-counting program (section 3.2 of the 1999
 * report), with Lipmaa's "null function" overhead measured alongside.
 *
 *   cycles --impl CIPHER[/STRATEGY] [--key-bits 128] [--reps R]
 *          [--sizes 1,16,128,1024,32768] [--max-blocks M] [--seed S]
 *
 * Per key size it records counter deltas (see counter.h) around single calls:
 *   null      an empty function called through a pointer (the overhead),
 *   ekey/dkey set_encrypt_key / set_decrypt_key,
 *   init      cl_cipher_init (NIST's cipherInit),
 *   encrypt/decrypt of n blocks for every n in --sizes (one ECB call each).
 * Each measured call is preceded by one untimed call of the same operation,
 * as NIST called twice to warm the caches.  For large n the repetitions are
 * capped so that reps * n <= M (at least 5).  Raw deltas only; the lab
 * subtracts the overhead and divides by n.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cipherlab.h"
#include "counter.h"
#include "util.h"

#define PROG "cycles"

typedef void (*null_fn)(void);
static void null_function(void) { __asm__ __volatile__("" ::: "memory"); }
static volatile null_fn null_ptr = null_function;

static void print_op(const cl_impl *impl, unsigned kb, const char *op, unsigned long n,
                     const uint64_t *d, unsigned long reps)
{
    printf("{\"type\":\"cycles\",\"impl\":\"%s/%s\",\"key_size\":%u,\"op\":\"%s\",\"n\":%lu,"
           "\"counter\":\"%s\",\"unit\":\"%s\",\"deltas\":[",
           impl->cipher, impl->strategy, kb, op, n, cl_counter_name(), cl_counter_unit());
    for (unsigned long i = 0; i < reps; i++)
        printf("%s%llu", i ? "," : "", (unsigned long long)d[i]);
    printf("]}\n");
}

/* Ticks of the counter per second, measured against CLOCK_MONOTONIC. */
static double calibrate(void)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    uint64_t c0 = cl_counter_start();
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec) < 50e6);
    uint64_t c1 = cl_counter_stop();
    double secs = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
    return (double)(c1 - c0) / secs;
}

int main(int argc, char **argv)
{
    const char *impl_name = NULL;
    unsigned long key_bits[8] = {128}, nks = 1, sizes[16] = {1, 16, 128, 1024, 32768}, nsizes = 5;
    unsigned long reps = 100, max_blocks = 1u << 20;
    uint64_t seed = 1999;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            cl_die(PROG, "option needs a value", a);
        if (strcmp(a, "--impl") == 0)
            impl_name = v;
        else if (strcmp(a, "--key-bits") == 0)
            nks = cl_parse_list(v, key_bits, 8);
        else if (strcmp(a, "--sizes") == 0)
            nsizes = cl_parse_list(v, sizes, 16);
        else if (strcmp(a, "--reps") == 0)
            reps = strtoul(v, NULL, 10);
        else if (strcmp(a, "--max-blocks") == 0)
            max_blocks = strtoul(v, NULL, 10);
        else if (strcmp(a, "--seed") == 0)
            seed = strtoull(v, NULL, 10);
        else
            cl_die(PROG, "unknown option", a);
        i++;
    }
    const cl_impl *impl = cl_require_impl(PROG, impl_name);
    if (!reps || !nsizes || !nks)
        cl_die(PROG, "need --reps > 0, --sizes and --key-bits", NULL);
    unsigned long maxn = 0;
    for (unsigned long i = 0; i < nsizes; i++)
        if (sizes[i] > maxn)
            maxn = sizes[i];

    const unsigned bs = impl->block_bytes;
    uint8_t *in = cl_alloc_aligned(maxn * bs), *out = cl_alloc_aligned(maxn * bs);
    void *eks = cl_alloc_aligned(impl->ks_bytes), *dks = cl_alloc_aligned(impl->ks_bytes);
    uint64_t *d = calloc(reps, sizeof *d);
    if (!d)
        cl_die(PROG, "out of memory", NULL);
    cl_rand_fill(&seed, in, maxn * bs);

    printf("{\"type\":\"counter\",\"counter\":\"%s\",\"unit\":\"%s\",\"ticks_per_second\":%.0f}\n",
           cl_counter_name(), cl_counter_unit(), calibrate());

    for (unsigned long ki = 0; ki < nks; ki++) {
        unsigned kb = (unsigned)key_bits[ki];
        if (!cl_supports_key_bits(impl, kb))
            cl_die(PROG, "key size not supported by this implementation", impl_name);
        uint8_t key[CL_MAX_KEY_BYTES];
        cl_rand_fill(&seed, key, sizeof key);
        uint64_t t0;

        for (unsigned long r = 0; r < reps; r++) {
            null_ptr();
            t0 = cl_counter_start();
            null_ptr();
            d[r] = cl_counter_stop() - t0;
        }
        print_op(impl, kb, "null", 1, d, reps);

        for (unsigned long r = 0; r < reps; r++) {
            key[r % kb / 8] ^= (uint8_t)r;
            impl->set_encrypt_key(eks, key, kb);
            t0 = cl_counter_start();
            impl->set_encrypt_key(eks, key, kb);
            d[r] = cl_counter_stop() - t0;
        }
        print_op(impl, kb, "ekey", 1, d, reps);

        for (unsigned long r = 0; r < reps; r++) {
            key[r % kb / 8] ^= (uint8_t)r;
            impl->set_decrypt_key(dks, key, kb);
            t0 = cl_counter_start();
            impl->set_decrypt_key(dks, key, kb);
            d[r] = cl_counter_stop() - t0;
        }
        print_op(impl, kb, "dkey", 1, d, reps);

        impl->set_encrypt_key(eks, key, kb);
        impl->set_decrypt_key(dks, key, kb);
        cl_cipher c;
        for (unsigned long r = 0; r < reps; r++) {
            cl_cipher_init(&c, impl, CL_MODE_ECB, NULL, eks);
            t0 = cl_counter_start();
            cl_cipher_init(&c, impl, CL_MODE_ECB, NULL, eks);
            d[r] = cl_counter_stop() - t0;
        }
        print_op(impl, kb, "init", 1, d, reps);

        for (int dir = 0; dir < 2; dir++) {
            const void *ks = dir ? dks : eks;
            cl_cipher_init(&c, impl, CL_MODE_ECB, NULL, ks);
            for (unsigned long si = 0; si < nsizes; si++) {
                unsigned long n = sizes[si];
                unsigned long rn = max_blocks / n < reps ? max_blocks / n : reps;
                if (rn < 5)
                    rn = reps < 5 ? reps : 5;
                for (unsigned long r = 0; r < rn; r++) {
                    if (dir) {
                        cl_block_decrypt(&c, ks, in, out, n);
                        t0 = cl_counter_start();
                        cl_block_decrypt(&c, ks, in, out, n);
                    } else {
                        cl_block_encrypt(&c, ks, in, out, n);
                        t0 = cl_counter_start();
                        cl_block_encrypt(&c, ks, in, out, n);
                    }
                    d[r] = cl_counter_stop() - t0;
                }
                print_op(impl, kb, dir ? "decrypt" : "encrypt", n, d, rn);
            }
        }
        fflush(stdout);
    }
    free(d), free(in), free(out), free(eks), free(dks);
    return 0;
}

/*
 * timing.c -- the NIST timing program (section 3.1 of the 1999 report).
 *
 *   timing --impl CIPHER[/STRATEGY] [--key-bits 128,192,256] [--samples N]
 *          [--blocks B] [--keys K] [--blocks-per-call C] [--seed S]
 *
 * For each key size it takes N samples; a sample is the triple
 *   { time to encrypt B blocks, time to decrypt B blocks, time to set up K
 *     key pairs (one encryption key + one decryption key each) }.
 * Blocks go through the NIST-style API (cl_block_encrypt, ECB) in calls of C
 * blocks each (NIST: C = 1, B = 65536, K = 1000, N = 1000), on a 4 KiB-ish
 * buffer of independent random blocks.  Only raw samples are printed (one
 * JSON line per key size, times in ns); statistics are done by the lab.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cipherlab.h"
#include "util.h"

#define PROG "timing"

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void print_array(const char *name, const uint64_t *v, unsigned long n)
{
    printf(",\"%s\":[", name);
    for (unsigned long i = 0; i < n; i++)
        printf("%s%llu", i ? "," : "", (unsigned long long)v[i]);
    printf("]");
}

int main(int argc, char **argv)
{
    const char *impl_name = NULL;
    unsigned long key_bits[8] = {0}, nkeys_sizes = 0;
    unsigned long samples = 10, blocks = 4096, keys = 100, per_call = 1;
    uint64_t seed = 1999;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            cl_die(PROG, "option needs a value", a);
        if (strcmp(a, "--impl") == 0)
            impl_name = v;
        else if (strcmp(a, "--key-bits") == 0)
            nkeys_sizes = cl_parse_list(v, key_bits, 8);
        else if (strcmp(a, "--samples") == 0)
            samples = strtoul(v, NULL, 10);
        else if (strcmp(a, "--blocks") == 0)
            blocks = strtoul(v, NULL, 10);
        else if (strcmp(a, "--keys") == 0)
            keys = strtoul(v, NULL, 10);
        else if (strcmp(a, "--blocks-per-call") == 0)
            per_call = strtoul(v, NULL, 10);
        else if (strcmp(a, "--seed") == 0)
            seed = strtoull(v, NULL, 10);
        else
            cl_die(PROG, "unknown option", a);
        i++;
    }
    const cl_impl *impl = cl_require_impl(PROG, impl_name);
    if (!samples || !blocks || !keys || !per_call || blocks % per_call)
        cl_die(PROG, "need samples, blocks, keys, blocks-per-call > 0 and blocks a multiple of blocks-per-call", NULL);
    if (!nkeys_sizes) {
        for (const unsigned short *k = impl->key_bits; *k && nkeys_sizes < 8; k++)
            key_bits[nkeys_sizes++] = *k;
    }

    const unsigned bs = impl->block_bytes;
    const unsigned long span = per_call > 256 ? per_call : 256; /* blocks in the work buffer */
    uint8_t *in = cl_alloc_aligned(span * bs), *out = cl_alloc_aligned(span * bs);
    uint8_t *keybuf = cl_alloc_aligned(keys * CL_MAX_KEY_BYTES);
    void *eks = cl_alloc_aligned(impl->ks_bytes), *dks = cl_alloc_aligned(impl->ks_bytes);
    uint64_t *t_enc = calloc(samples, sizeof *t_enc), *t_dec = calloc(samples, sizeof *t_dec),
             *t_key = calloc(samples, sizeof *t_key);
    if (!t_enc || !t_dec || !t_key)
        cl_die(PROG, "out of memory", NULL);
    cl_rand_fill(&seed, in, span * bs);
    volatile uint8_t sink = 0;

    for (unsigned long ks_i = 0; ks_i < nkeys_sizes; ks_i++) {
        unsigned kb = (unsigned)key_bits[ks_i];
        if (!cl_supports_key_bits(impl, kb))
            cl_die(PROG, "key size not supported by this implementation", impl_name);
        cl_rand_fill(&seed, keybuf, keys * CL_MAX_KEY_BYTES);
        for (unsigned long r = 0; r < samples; r++) {
            /* key setup: K pairs */
            uint64_t t0 = now_ns();
            for (unsigned long k = 0; k < keys; k++) {
                impl->set_encrypt_key(eks, keybuf + k * CL_MAX_KEY_BYTES, kb);
                impl->set_decrypt_key(dks, keybuf + k * CL_MAX_KEY_BYTES, kb);
            }
            t_key[r] = now_ns() - t0;

            /* makeKey + cipherInit, then B blocks of encryption */
            const uint8_t *key = keybuf + (r % keys) * CL_MAX_KEY_BYTES;
            if (impl->set_encrypt_key(eks, key, kb) != CL_OK || impl->set_decrypt_key(dks, key, kb) != CL_OK)
                cl_die(PROG, "key setup failed", impl_name);
            cl_cipher c;
            cl_cipher_init(&c, impl, CL_MODE_ECB, NULL, eks);
            unsigned long off = 0;
            t0 = now_ns();
            for (unsigned long b = 0; b < blocks; b += per_call) {
                cl_block_encrypt(&c, eks, in + off * bs, out + off * bs, per_call);
                off = (off + per_call) % span;
            }
            t_enc[r] = now_ns() - t0;
            sink ^= out[0];

            cl_cipher_init(&c, impl, CL_MODE_ECB, NULL, dks);
            off = 0;
            t0 = now_ns();
            for (unsigned long b = 0; b < blocks; b += per_call) {
                cl_block_decrypt(&c, dks, in + off * bs, out + off * bs, per_call);
                off = (off + per_call) % span;
            }
            t_dec[r] = now_ns() - t0;
            sink ^= out[0];
        }
        printf("{\"type\":\"timing\",");
        cl_json_impl_fields(stdout, impl);
        printf(",\"key_size\":%u,\"samples\":%lu,\"blocks\":%lu,\"blocks_per_call\":%lu,"
               "\"key_pairs\":%lu,\"timer\":\"clock-monotonic\",\"unit\":\"ns\"",
               kb, samples, blocks, per_call, keys);
        print_array("encrypt", t_enc, samples);
        print_array("decrypt", t_dec, samples);
        print_array("key_setup", t_key, samples);
        printf("}\n");
        fflush(stdout);
    }
    (void)sink;
    free(t_enc), free(t_dec), free(t_key), free(in), free(out), free(keybuf), free(eks), free(dks);
    return 0;
}

/*
 * ct.c -- constant-time checks of one implementation (lab/ct.py).
 *
 *   ct --impl CIPHER[/STRATEGY] [--key-bits 128,...] [--inputs 8] [--seed S]
 *   ct --impl ... --dudect N [--key-bits 128,...] [--seed S]   (the first supported size)
 *
 * Trace mode (the default; built as the `ct` program with the marker counter,
 * statically and with -g): per key size, one marked region (counter.h) per
 * secret input, each op from the same call site on the same buffers, so that
 * only the secret differs between the regions of one op:
 *   ekey/dkey   set_encrypt_key / set_decrypt_key of --inputs random keys;
 *   encrypt     one block of each of --inputs random plaintexts under one key;
 *   decrypt     one block of each of --inputs random ciphertexts under it.
 * Before the regions it prints one {"type":"ct_region",...} record per region,
 * in region order; QEMU's plugin (mode=ct) hashes each region's instruction
 * addresses and memory accesses, and the lab compares the hashes of an op.
 *
 * dudect mode (built as the `dudect` program with the target's real counter):
 * per op, N measurements of one call each, the class of each (fixed input or
 * random input) drawn at random, interleaved; prints the raw deltas and
 * classes; the lab runs Welch's t-test with percentile cropping (lab/ct.py).
 * Key setup takes N/10 measurements (some key schedules are slow).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cipherlab.h"
#include "counter.h"
#include "util.h"

#define PROG "ct"
#define MAX_INPUTS 64

enum { EKEY, DKEY, ENC, DEC, N_OPS };
static const char *const OP_NAME[] = {"ekey", "dkey", "encrypt", "decrypt"};

/* The one call site of every op: a region differs from another of its op only by the secret's value. */
static void run_op(const cl_impl *impl, int op, void *ks, const uint8_t *key, unsigned kb, const uint8_t *in,
                   uint8_t *out)
{
    switch (op) {
    case EKEY:
        impl->set_encrypt_key(ks, key, kb);
        break;
    case DKEY:
        impl->set_decrypt_key(ks, key, kb);
        break;
    case ENC:
        impl->encrypt(ks, in, out, 1);
        break;
    default:
        impl->decrypt(ks, in, out, 1);
        break;
    }
}

/* Not inlined: a region opens and closes inside this one body, so a caller's loop that the compiler unrolls
 * (clang does) cannot give two inputs' regions different instruction addresses. */
#if defined(__clang__)
__attribute__((noinline))
#else
__attribute__((noinline, noipa))
#endif
static void marked(const cl_impl *impl, int op, void *ks, const uint8_t *key, unsigned kb, const uint8_t *in,
                   uint8_t *out)
{
    cl_counter_start();
    run_op(impl, op, ks, key, kb, in, out);
    cl_counter_stop();
}

static void trace_mode(const cl_impl *impl, const cl_list *key_bits, unsigned long inputs, uint64_t seed)
{
    uint8_t key[CL_MAX_KEY_BYTES], block[CL_MAX_BLOCK_BYTES], out[CL_MAX_BLOCK_BYTES];
    uint8_t (*secret)[CL_MAX_KEY_BYTES] = calloc(N_OPS * inputs, sizeof *secret);
    void *ks = cl_alloc_aligned(impl->ks_bytes), *eks = cl_alloc_aligned(impl->ks_bytes),
         *dks = cl_alloc_aligned(impl->ks_bytes);
    if (!secret)
        cl_die(PROG, "out of memory", NULL);
    unsigned long region = 0;
    /* Every record first, then every region: printing between regions would differ between them. */
    for (size_t k = 0; k < key_bits->n; k++)
        for (int op = 0; op < N_OPS; op++)
            for (unsigned long i = 0; i < inputs; i++, region++)
                printf("{\"type\":\"ct_region\",\"region\":%lu,\"key_size\":%lu,\"op\":\"%s\",\"input\":%lu}\n",
                       region, key_bits->v[k], OP_NAME[op], i);
    fflush(stdout);
    for (size_t k = 0; k < key_bits->n; k++) {
        unsigned kb = (unsigned)key_bits->v[k];
        for (unsigned long i = 0; i < N_OPS * inputs; i++)
            cl_rand_fill(&seed, secret[i], sizeof secret[i]);
        cl_rand_fill(&seed, key, sizeof key);
        if (impl->set_encrypt_key(eks, key, kb) != CL_OK || impl->set_decrypt_key(dks, key, kb) != CL_OK)
            cl_die(PROG, "key setup failed", impl->strategy);
        for (int op = 0; op < N_OPS; op++) {
            void *where = op == ENC ? eks : op == DEC ? dks : ks;
            /* one unmarked call first: a peer's first key setup in a buffer allocates, the next ones do not */
            cl_rand_fill(&seed, op <= DKEY ? key : block, op <= DKEY ? sizeof key : sizeof block);
            run_op(impl, op, where, key, kb, block, out);
            for (unsigned long i = 0; i < inputs; i++) {
                const uint8_t *s = secret[op * inputs + i];
                memcpy(op <= DKEY ? key : block, s, op <= DKEY ? sizeof key : sizeof block);
                marked(impl, op, where, key, kb, block, out);
            }
        }
    }
    cl_free_ks(impl, ks);
    cl_free_ks(impl, eks);
    cl_free_ks(impl, dks);
    free(secret);
}

static void dudect_mode(const cl_impl *impl, unsigned kb, unsigned long n, uint64_t seed)
{
    uint8_t key[CL_MAX_KEY_BYTES], fixed[CL_MAX_KEY_BYTES] = {0}, block[CL_MAX_BLOCK_BYTES],
        out[CL_MAX_BLOCK_BYTES];
    void *ks = cl_alloc_aligned(impl->ks_bytes), *eks = cl_alloc_aligned(impl->ks_bytes),
         *dks = cl_alloc_aligned(impl->ks_bytes);
    uint64_t *d = calloc(n, sizeof *d);
    char *cls = calloc(n + 1, 1);
    uint8_t (*inputs)[CL_MAX_KEY_BYTES] = calloc(n, sizeof *inputs);
    if (!d || !cls || !inputs)
        cl_die(PROG, "out of memory", NULL);
    cl_rand_fill(&seed, key, sizeof key);
    if (impl->set_encrypt_key(eks, key, kb) != CL_OK || impl->set_decrypt_key(dks, key, kb) != CL_OK)
        cl_die(PROG, "key setup failed", impl->strategy);
    for (int op = 0; op < N_OPS; op++) {
        unsigned long m = op <= DKEY ? (n / 10 ? n / 10 : 1) : n;
        void *where = op == ENC ? eks : op == DEC ? dks : ks;
        /* classes and inputs drawn before measuring, so drawing costs nothing inside a measurement */
        for (unsigned long i = 0; i < m; i++) {
            cls[i] = (char)('0' + (cl_rand_next(&seed) & 1));
            if (cls[i] == '0')
                memcpy(inputs[i], fixed, sizeof fixed);
            else
                cl_rand_fill(&seed, inputs[i], sizeof inputs[i]);
        }
        cls[m] = '\0';
        for (unsigned long i = 0; i < m; i++) {
            memcpy(op <= DKEY ? key : block, inputs[i], op <= DKEY ? sizeof key : sizeof block);
            uint64_t t0 = cl_counter_start();
            run_op(impl, op, where, key, kb, block, out);
            d[i] = cl_counter_stop() - t0;
        }
        printf("{\"type\":\"dudect\",\"impl\":\"%s/%s\",\"key_size\":%u,\"op\":\"%s\",\"counter\":\"%s\","
               "\"unit\":\"%s\",\"classes\":\"%s\"", impl->cipher, impl->strategy, kb, OP_NAME[op],
               cl_counter_name(), cl_counter_unit(), cls);
        cl_json_u64_array(stdout, "deltas", d, m);
        printf("}\n");
    }
    cl_free_ks(impl, ks);
    cl_free_ks(impl, eks);
    cl_free_ks(impl, dks);
    free(d), free(cls), free(inputs);
}

int main(int argc, char **argv)
{
    const char *impl_name = NULL;
    cl_list key_bits = {{0}, 0};
    unsigned long inputs = 8, dudect = 0;
    uint64_t seed = 0x5eed0c7u;
    const cl_option opts[] = {
        {"--impl", CL_OPT_STR, &impl_name},   {"--key-bits", CL_OPT_LIST, &key_bits},
        {"--inputs", CL_OPT_ULONG, &inputs},  {"--dudect", CL_OPT_ULONG, &dudect},
        {"--seed", CL_OPT_U64, &seed},        {NULL, 0, NULL},
    };
    cl_parse_options(PROG, argc, argv, opts);
    if (!impl_name)
        cl_die(PROG, "missing --impl", NULL);
    const cl_impl *impl = cl_require_impl(PROG, impl_name);
    if (!key_bits.n)
        for (const unsigned short *k = impl->key_bits; *k && key_bits.n < CL_LIST_MAX; k++)
            key_bits.v[key_bits.n++] = *k;
    /* Sizes the implementation lacks are left out (a peer may take fewer than its cipher: libmcrypt's
     * LOKI97 is 256-bit only), as kat skips their records; none left is an error. */
    size_t kept = 0;
    for (size_t k = 0; k < key_bits.n; k++)
        if (cl_supports_key_bits(impl, (unsigned)key_bits.v[k]))
            key_bits.v[kept++] = key_bits.v[k];
    key_bits.n = kept;
    if (!kept)
        cl_die(PROG, "key size not supported by this implementation", impl_name);
    if (inputs < 2 || inputs > MAX_INPUTS)
        cl_die(PROG, "--inputs must be 2..64", NULL);
    if (dudect)
        dudect_mode(impl, (unsigned)key_bits.v[0], dudect, seed);
    else
        trace_mode(impl, &key_bits, inputs, seed);
    fflush(stdout);
    return 0;
}

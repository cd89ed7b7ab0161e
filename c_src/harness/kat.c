/*
 * kat.c -- known-answer check of one implementation against a .kat file.
 *
 *   kat --impl CIPHER[/STRATEGY] --file VECTORS.kat [--max-report N] [--long-every N]
 *   kat --list
 *
 * Format and semantics of .kat files: shared/vectors/README.md (records of
 * FIELD=hex lines; ECB with optional ITER, CBC-MCT-ENC, CBC-MCT-DEC).  ECB
 * records are checked in both directions.  After the vectors it prints a
 * checksum over a deterministic chain of key setups and encryptions per key
 * size, so builds of one cipher can be compared across toolchains and targets.
 *
 * It also checks that one call over many blocks (unaligned, in place and
 * out of place) equals as many single-block calls, since the vectors only
 * exercise single blocks while the timing programs use both.
 *
 * --long-every N (a quick gate, default 1 = every record): of the long
 * records (more than LONG_ITER iterations: the Monte-Carlo tests and the
 * 1000-fold iterations, over 95 % of a full check's work), only every Nth is
 * checked; the others count as "sampled_out".  Every short record, the
 * n-block check and the checksum chain run as always.
 *
 * Output: JSON lines only ("kat_fail" records, one "kat_checksum" per key
 * size, then one "kat_summary").  Runs on foreign targets, so it has no
 * dependency beyond libc.  Exit status: 0 all passed, 1 a mismatch,
 * 2 usage/input error, 3 implementation unavailable on this CPU.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cipherlab.h"
#include "util.h"

#define PROG "kat"
#define MAX_FIELD 64 /* bytes; the longest field is a 256-bit key */
#define LONG_ITER 100 /* records iterated more often than this are "long" (--long-every) */

typedef struct {
    int line; /* line of the record's first field */
    uint8_t key[MAX_FIELD], pt[MAX_FIELD], ct[MAX_FIELD], iv[MAX_FIELD];
    size_t key_len, pt_len, ct_len, iv_len;
    unsigned long iter;
    char mode[32];
    int has_key, has_pt, has_ct;
} kat_record;

typedef struct {
    unsigned long records, passed, failed, skipped_key_size, reported;
    unsigned long max_report;
    unsigned long long_every, long_seen, sampled_out;
} kat_tally;

static int parse_hex(const char *s, uint8_t *out, size_t *len)
{
    size_t n = strlen(s);
    if (n % 2 || n / 2 > MAX_FIELD)
        return -1;
    for (size_t i = 0; i < n / 2; i++) {
        int hi = s[2 * i], lo = s[2 * i + 1];
        if (!isxdigit(hi) || !isxdigit(lo))
            return -1;
        char tmp[3] = {(char)hi, (char)lo, 0};
        out[i] = (uint8_t)strtoul(tmp, NULL, 16);
    }
    *len = n / 2;
    return 0;
}

static void xor_into(uint8_t *dst, const uint8_t *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] ^= src[i];
}

static void report_fail(kat_tally *t, const cl_impl *impl, const kat_record *r,
                        const char *direction, const char *reason, const uint8_t *expected,
                        const uint8_t *got)
{
    if (t->reported++ >= t->max_report)
        return;
    printf("{\"type\":\"kat_fail\",\"impl\":\"%s/%s\",\"line\":%d,\"key_bits\":%zu,\"mode\":",
           impl->cipher, impl->strategy, r->line, r->key_len * 8);
    cl_json_str(stdout, r->mode[0] ? r->mode : "ECB");
    printf(",\"iter\":%lu,\"direction\":\"%s\",\"reason\":", r->iter, direction);
    cl_json_str(stdout, reason);
    if (expected) {
        printf(",\"expected\":");
        cl_json_hex(stdout, expected, impl->block_bytes);
        printf(",\"got\":");
        cl_json_hex(stdout, got, impl->block_bytes);
    }
    printf("}\n");
}

/* Returns 1 when the record passed, 0 when it failed (already reported). */
static int check_record(const cl_impl *impl, void *eks, void *dks, const kat_record *r,
                        kat_tally *t)
{
    unsigned bs = impl->block_bytes;
    unsigned kbits = (unsigned)(r->key_len * 8);
    uint8_t a[CL_MAX_BLOCK_BYTES], b[CL_MAX_BLOCK_BYTES], cv[CL_MAX_BLOCK_BYTES];
    int ok = 1;

    if (impl->set_encrypt_key(eks, r->key, kbits) != CL_OK ||
        impl->set_decrypt_key(dks, r->key, kbits) != CL_OK) {
        report_fail(t, impl, r, "key", "key setup refused the key", NULL, NULL);
        return 0;
    }
    if (r->mode[0] == 0 || strcmp(r->mode, "ECB") == 0) {
        memcpy(a, r->pt, bs);
        for (unsigned long i = 0; i < r->iter; i++)
            impl->encrypt(eks, a, a, 1);
        if (memcmp(a, r->ct, bs) != 0) {
            report_fail(t, impl, r, "encrypt", "ciphertext mismatch", r->ct, a);
            ok = 0;
        }
        memcpy(a, r->ct, bs);
        for (unsigned long i = 0; i < r->iter; i++)
            impl->decrypt(dks, a, a, 1);
        if (memcmp(a, r->pt, bs) != 0) {
            report_fail(t, impl, r, "decrypt", "plaintext mismatch", r->pt, a);
            ok = 0;
        }
        return ok;
    }
    if (strcmp(r->mode, "CBC-MCT-ENC") == 0) {
        /* CV = IV; P = PT; C_j = E(P ^ CV); P = (j == 0 ? IV : C_{j-1}); CV = C_j */
        uint8_t p[CL_MAX_BLOCK_BYTES], prev[CL_MAX_BLOCK_BYTES];
        memcpy(cv, r->iv, bs);
        memcpy(p, r->pt, bs);
        for (unsigned long j = 0; j < r->iter; j++) {
            memcpy(b, p, bs);
            xor_into(b, cv, bs);
            impl->encrypt(eks, b, a, 1);
            memcpy(p, j == 0 ? r->iv : prev, bs);
            memcpy(prev, a, bs);
            memcpy(cv, a, bs);
        }
        if (memcmp(a, r->ct, bs) != 0) {
            report_fail(t, impl, r, "encrypt", "CBC Monte-Carlo ciphertext mismatch", r->ct, a);
            return 0;
        }
        return 1;
    }
    if (strcmp(r->mode, "CBC-MCT-DEC") == 0) {
        /* CV = IV; C = CT; P_j = D(C) ^ CV; CV = C; C = P_j */
        uint8_t c[CL_MAX_BLOCK_BYTES];
        memcpy(cv, r->iv, bs);
        memcpy(c, r->ct, bs);
        for (unsigned long j = 0; j < r->iter; j++) {
            impl->decrypt(dks, c, a, 1);
            xor_into(a, cv, bs);
            memcpy(cv, c, bs);
            memcpy(c, a, bs);
        }
        if (memcmp(a, r->pt, bs) != 0) {
            report_fail(t, impl, r, "decrypt", "CBC Monte-Carlo plaintext mismatch", r->pt, a);
            return 0;
        }
        return 1;
    }
    report_fail(t, impl, r, "none", "unknown MODE", NULL, NULL);
    return 0;
}

static void finish_record(const cl_impl *impl, void *eks, void *dks, kat_record *r,
                          kat_tally *t, const char *file)
{
    if (!r->has_key && !r->has_pt && !r->has_ct)
        return;
    t->records++;
    if (!r->has_key || !r->has_pt || !r->has_ct) {
        char msg[1200];
        snprintf(msg, sizeof msg, "%s:%d: record lacks KEY, PT or CT", file, r->line);
        cl_die(PROG, "malformed vectors file", msg);
    }
    if (!cl_supports_key_bits(impl, (unsigned)(r->key_len * 8))) {
        t->skipped_key_size++;
        return;
    }
    if (r->pt_len != impl->block_bytes || r->ct_len != impl->block_bytes ||
        (r->mode[0] && strncmp(r->mode, "CBC", 3) == 0 && r->iv_len != impl->block_bytes)) {
        report_fail(t, impl, r, "none", "block length in file differs from the cipher's", NULL,
                    NULL);
        t->failed++;
        return;
    }
    if (r->iter > LONG_ITER && t->long_every > 1 && t->long_seen++ % t->long_every != 0) {
        t->sampled_out++; /* a quick gate checks every Nth long record only */
        return;
    }
    if (check_record(impl, eks, dks, r, t)) /* a record fails once, however many of its checks did */
        t->passed++;
    else
        t->failed++;
}

/* The n-block paths: one call over 37 blocks (odd count, unaligned, out of
 * place and in place) must equal 37 single-block calls, both directions.
 * Returns the number of mismatches (each reported). */
static unsigned long check_multiblock(const cl_impl *impl, void *eks, void *dks)
{
    enum { N = 37 };
    const unsigned bs = impl->block_bytes;
    uint8_t src[N * CL_MAX_BLOCK_BYTES + 1], one[N * CL_MAX_BLOCK_BYTES], buf[N * CL_MAX_BLOCK_BYTES + 3];
    unsigned long bad = 0;
    for (const unsigned short *k = impl->key_bits; *k; k++) {
        uint8_t key[CL_MAX_KEY_BYTES];
        uint64_t seed = 0x6d756c7469ULL + *k;
        cl_rand_fill(&seed, key, *k / 8);
        cl_rand_fill(&seed, src + 1, N * bs);
        if (impl->set_encrypt_key(eks, key, *k) != CL_OK || impl->set_decrypt_key(dks, key, *k) != CL_OK)
            continue;
        for (int dir = 0; dir < 2; dir++) {
            void (*fn)(const void *, const uint8_t *, uint8_t *, size_t) = dir ? impl->decrypt : impl->encrypt;
            const void *ks = dir ? dks : eks;
            for (unsigned i = 0; i < N; i++)
                fn(ks, src + 1 + i * bs, one + i * bs, 1);
            fn(ks, src + 1, buf + 3, N); /* unaligned, out of place */
            int out_ok = memcmp(buf + 3, one, N * bs) == 0;
            memcpy(buf + 1, src + 1, N * bs);
            fn(ks, buf + 1, buf + 1, N); /* unaligned, in place */
            int in_ok = memcmp(buf + 1, one, N * bs) == 0;
            if (!out_ok || !in_ok) {
                bad++;
                printf("{\"type\":\"kat_fail\",\"impl\":\"%s/%s\",\"line\":0,\"key_bits\":%u,\"mode\":\"ECB\","
                       "\"iter\":1,\"direction\":\"%s\",\"reason\":\"one %d-block call differs from %d single-block calls (%s)\"}\n",
                       impl->cipher, impl->strategy, *k, dir ? "decrypt" : "encrypt", N, N,
                       out_ok ? "in place" : "out of place");
            }
        }
    }
    return bad;
}

/* The checksum (SUPERCOP-style): per key size a fixed chain of 64 rounds of
 * { set up encryption and decryption keys from the state's key; encrypt four
 * blocks of the state in one call, in place; decrypt them into a copy and
 * compare with the blocks before; fold the ciphertext into the key }, from a
 * seed fixed per key size.  The final four blocks are the checksum: every
 * build of a cipher, on every target, must print the same one. */
#define CHECKSUM_BLOCKS 4
#define CHECKSUM_ROUNDS 64
static void print_checksums(const cl_impl *impl, void *eks, void *dks)
{
    const unsigned bs = impl->block_bytes;
    for (const unsigned short *k = impl->key_bits; *k; k++) {
        uint8_t key[CL_MAX_KEY_BYTES], state[CHECKSUM_BLOCKS * CL_MAX_BLOCK_BYTES],
            before[sizeof state], back[sizeof state];
        uint64_t seed = 0x636970686572ULL + *k;
        cl_rand_fill(&seed, key, sizeof key);
        cl_rand_fill(&seed, state, sizeof state);
        int roundtrip_ok = 1, refused = 0;
        for (int r = 0; r < CHECKSUM_ROUNDS; r++) {
            while (impl->set_encrypt_key(eks, key, *k) != CL_OK || impl->set_decrypt_key(dks, key, *k) != CL_OK) {
                key[refused++ % (*k / 8)] ^= 0x5a; /* a key the cipher refuses (weak): change it, deterministically */
                if (refused > 64)
                    cl_die(PROG, "key setup refuses every checksum key", impl->cipher);
            }
            memcpy(before, state, CHECKSUM_BLOCKS * bs);
            impl->encrypt(eks, state, state, CHECKSUM_BLOCKS);
            impl->decrypt(dks, state, back, CHECKSUM_BLOCKS);
            roundtrip_ok &= memcmp(back, before, CHECKSUM_BLOCKS * bs) == 0;
            for (unsigned j = 0; j < *k / 8u; j++)
                key[j] ^= state[j % (CHECKSUM_BLOCKS * bs)];
        }
        printf("{\"type\":\"kat_checksum\",\"impl\":\"%s/%s\",\"key_bits\":%u,\"checksum\":",
               impl->cipher, impl->strategy, *k);
        cl_json_hex(stdout, state, CHECKSUM_BLOCKS * bs);
        printf(",\"roundtrip_ok\":%s}\n", roundtrip_ok ? "true" : "false");
    }
}

static void list_impls(void)
{
    for (const cl_impl *const *p = cl_registry; *p; p++) {
        printf("{\"type\":\"impl\",");
        cl_json_impl_fields(stdout, *p);
        printf("}\n");
    }
}

int main(int argc, char **argv)
{
    const char *impl_name = NULL, *file = NULL;
    unsigned long max_report = 20, long_every = 1;
    int list = 0;
    const cl_option opts[] = {
        {"--impl", CL_OPT_STR, &impl_name},
        {"--file", CL_OPT_STR, &file},
        {"--max-report", CL_OPT_ULONG, &max_report},
        {"--long-every", CL_OPT_ULONG, &long_every},
        {"--list", CL_OPT_FLAG, &list},
        {NULL, CL_OPT_FLAG, NULL},
    };
    cl_parse_options(PROG, argc, argv, opts);
    if (list) {
        list_impls();
        return 0;
    }
    const cl_impl *impl = cl_require_impl(PROG, impl_name);
    if (!file)
        cl_die(PROG, "missing --file VECTORS.kat", NULL);
    FILE *f = fopen(file, "r");
    if (!f)
        cl_die(PROG, "cannot open vectors file", file);

    void *eks = cl_alloc_aligned(impl->ks_bytes), *dks = cl_alloc_aligned(impl->ks_bytes);
    kat_tally t = {0};
    t.max_report = max_report;
    t.long_every = long_every ? long_every : 1;
    kat_record r;
    memset(&r, 0, sizeof r);
    r.iter = 1;
    char line[1024];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t n = strlen(line);
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' '))
            line[--n] = 0;
        if (line[0] == '#')
            continue;
        if (n == 0) {
            finish_record(impl, eks, dks, &r, &t, file);
            memset(&r, 0, sizeof r);
            r.iter = 1;
            continue;
        }
        char *eq = strchr(line, '=');
        if (!eq) {
            char msg[1200];
            snprintf(msg, sizeof msg, "%s:%d: expected FIELD=value", file, lineno);
            cl_die(PROG, "malformed vectors file", msg);
        }
        *eq = 0;
        const char *field = line, *value = eq + 1;
        if (!r.has_key && !r.has_pt && !r.has_ct && r.line == 0)
            r.line = lineno;
        int bad = 0;
        if (strcmp(field, "KEY") == 0)
            bad = parse_hex(value, r.key, &r.key_len), r.has_key = 1;
        else if (strcmp(field, "PT") == 0)
            bad = parse_hex(value, r.pt, &r.pt_len), r.has_pt = 1;
        else if (strcmp(field, "CT") == 0)
            bad = parse_hex(value, r.ct, &r.ct_len), r.has_ct = 1;
        else if (strcmp(field, "IV") == 0)
            bad = parse_hex(value, r.iv, &r.iv_len);
        else if (strcmp(field, "ITER") == 0)
            r.iter = strtoul(value, NULL, 10);
        else if (strcmp(field, "MODE") == 0)
            snprintf(r.mode, sizeof r.mode, "%s", value);
        /* unknown fields are ignored, as the format says */
        if (bad) {
            char msg[1200];
            snprintf(msg, sizeof msg, "%s:%d: field %s is not hex of at most %d bytes", file,
                     lineno, field, MAX_FIELD);
            cl_die(PROG, "malformed vectors file", msg);
        }
    }
    finish_record(impl, eks, dks, &r, &t, file);
    fclose(f);

    unsigned long multi_bad = check_multiblock(impl, eks, dks);
    t.failed += multi_bad;
    print_checksums(impl, eks, dks);
    printf("{\"type\":\"kat_summary\",");
    cl_json_impl_fields(stdout, impl);
    printf(",\"file\":");
    cl_json_str(stdout, file);
    printf(",\"records\":%lu,\"passed\":%lu,\"failed\":%lu,\"skipped_key_size\":%lu,\"multiblock_failed\":%lu,"
           "\"sampled_out\":%lu}\n",
           t.records, t.passed, t.failed, t.skipped_key_size, multi_bad, t.sampled_out);
    cl_free_ks(impl, eks);
    cl_free_ks(impl, dks);
    return t.failed ? 1 : (t.passed ? 0 : 1);
}

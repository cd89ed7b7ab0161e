/* util.c -- see util.h */
#define _POSIX_C_SOURCE 200809L
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void cl_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

void cl_json_hex(FILE *f, const uint8_t *b, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%02x", b[i]);
    fputc('"', f);
}

void cl_die(const char *prog, const char *msg, const char *detail)
{
    printf("{\"type\":\"error\",\"program\":");
    cl_json_str(stdout, prog);
    printf(",\"message\":");
    cl_json_str(stdout, msg);
    if (detail) {
        printf(",\"detail\":");
        cl_json_str(stdout, detail);
    }
    printf("}\n");
    fflush(stdout);
    exit(2);
}

void cl_json_impl_fields(FILE *f, const cl_impl *impl)
{
    fprintf(f, "\"impl\":\"%s/%s\",\"cipher\":", impl->cipher, impl->strategy);
    cl_json_str(f, impl->cipher);
    fprintf(f, ",\"strategy\":");
    cl_json_str(f, impl->strategy);
    fprintf(f, ",\"block_bytes\":%u,\"key_bits\":[", impl->block_bytes);
    for (const unsigned short *k = impl->key_bits; *k; k++)
        fprintf(f, "%s%u", k == impl->key_bits ? "" : ",", *k);
    fprintf(f, "],\"ks_bytes\":%zu,\"table_bytes\":%zu,\"available\":%s", impl->ks_bytes,
            impl->table_bytes, cl_impl_available(impl) ? "true" : "false");
}

const cl_impl *cl_require_impl(const char *prog, const char *name)
{
    if (!name)
        cl_die(prog, "missing --impl CIPHER/STRATEGY", NULL);
    const cl_impl *impl = cl_find_impl(name);
    if (!impl)
        cl_die(prog, "implementation not linked into this program", name);
    if (!cl_impl_available(impl)) {
        printf("{\"type\":\"unavailable\",");
        cl_json_impl_fields(stdout, impl);
        printf("}\n");
        fflush(stdout);
        exit(3);
    }
    return impl;
}

void *cl_alloc_aligned(size_t bytes)
{
    size_t rounded = (bytes + 63) / 64 * 64;
    void *p = aligned_alloc(64, rounded ? rounded : 64);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        abort();
    }
    memset(p, 0, rounded ? rounded : 64);
    return p;
}

void cl_free_ks(const cl_impl *impl, void *ks)
{
    if (!ks)
        return;
    if (impl->release)
        impl->release(ks);
    free(ks);
}

uint64_t cl_rand_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void cl_rand_fill(uint64_t *state, uint8_t *buf, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i % 8 == 0) {
            uint64_t r = cl_rand_next(state);
            for (size_t j = 0; j < 8 && i + j < n; j++)
                buf[i + j] = (uint8_t)(r >> (8 * j));
        }
    }
}

uint64_t cl_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void cl_json_u64_array(FILE *f, const char *name, const uint64_t *v, size_t n)
{
    fprintf(f, ",\"%s\":[", name);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)v[i]);
    fputc(']', f);
}

static uint32_t gauge_table[256];

__attribute__((noinline)) uint32_t cl_gauge_work(unsigned long iters)
{
    if (!gauge_table[1]) { /* a fixed table: the same work in every process */
        uint64_t st = 24;
        for (unsigned i = 0; i < 256; i++)
            gauge_table[i] = (uint32_t)cl_rand_next(&st) | 1u;
    }
    uint32_t x = 0x9e3779b9u;
    for (unsigned long i = 0; i < iters; i++) {
        x = ((x << 5) | (x >> 27)) ^ gauge_table[x & 255u];
        x += gauge_table[(x >> 8) & 255u] + (uint32_t)i;
    }
    return x;
}

static volatile uint32_t gauge_sink; /* keeps the gauge's work */

uint64_t cl_gauge_ns(unsigned long iters)
{
    uint64_t t0 = cl_now_ns();
    gauge_sink = cl_gauge_work(iters);
    return cl_now_ns() - t0;
}

unsigned long cl_gauge_size(uint64_t target_ns, unsigned long max_iters)
{
    unsigned long iters = 64;
    while (iters < max_iters) {
        uint64_t a = cl_gauge_ns(iters), b = cl_gauge_ns(iters);
        if ((a < b ? a : b) >= target_ns)
            break;
        iters *= 2;
    }
    return iters;
}

void cl_json_gauge(FILE *f, unsigned long per_sample, const char *unit, const uint64_t *v, size_t n)
{
    fprintf(f, "{\"type\":\"gauge\",\"workload\":\"%s\",\"per_sample\":%lu,\"unit\":\"%s\"",
            CL_GAUGE_WORKLOAD, per_sample, unit);
    cl_json_u64_array(f, "samples", v, n);
    fputs("}\n", f);
}

static int parse_number(const char *s, unsigned long long *out)
{
    char *end;
    if (!*s || *s == '-')
        return -1;
    errno = 0;
    *out = strtoull(s, &end, 10);
    return (errno || *end) ? -1 : 0;
}

static int parse_list(const char *s, cl_list *out)
{
    out->n = 0;
    while (*s) {
        char *end;
        if (*s < '0' || *s > '9' || out->n == CL_LIST_MAX)
            return -1;
        out->v[out->n++] = strtoul(s, &end, 10);
        if (*end == ',' && end[1])
            s = end + 1;
        else if (*end == 0)
            s = end;
        else
            return -1;
    }
    return out->n ? 0 : -1;
}

void cl_parse_options(const char *prog, int argc, char **argv, const cl_option *opts)
{
    for (int i = 1; i < argc; i++) {
        const cl_option *o = opts;
        while (o->name && strcmp(o->name, argv[i]) != 0)
            o++;
        if (!o->name)
            cl_die(prog, "unknown option", argv[i]);
        if (o->kind == CL_OPT_FLAG) {
            *(int *)o->dest = 1;
            continue;
        }
        if (i + 1 >= argc)
            cl_die(prog, "option needs a value", argv[i]);
        const char *v = argv[++i];
        unsigned long long num = 0;
        int bad = 0;
        switch (o->kind) {
        case CL_OPT_STR:
            *(const char **)o->dest = v;
            break;
        case CL_OPT_ULONG:
            bad = parse_number(v, &num);
            *(unsigned long *)o->dest = (unsigned long)num;
            break;
        case CL_OPT_U64:
            bad = parse_number(v, &num);
            *(uint64_t *)o->dest = (uint64_t)num;
            break;
        case CL_OPT_LIST:
            bad = parse_list(v, (cl_list *)o->dest);
            break;
        case CL_OPT_FLAG:
            break;
        }
        if (bad)
            cl_die(prog, o->kind == CL_OPT_LIST ? "expected a comma list of numbers" : "expected a number",
                   argv[i - 1]);
    }
}

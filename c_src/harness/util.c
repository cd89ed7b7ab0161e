/* util.c -- see util.h */
#include "util.h"

#include <stdlib.h>
#include <string.h>

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

size_t cl_parse_list(const char *s, unsigned long *out, size_t n)
{
    size_t count = 0;
    while (*s && count < n) {
        char *end;
        unsigned long v = strtoul(s, &end, 10);
        if (end == s)
            break;
        out[count++] = v;
        s = (*end == ',') ? end + 1 : end;
    }
    return count;
}

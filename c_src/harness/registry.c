/*
 * registry.c -- the table of implementations linked into a program.
 *
 * The build defines CL_IMPL_LIST as a sequence of X(cipher_strategy) entries,
 * e.g. -DCL_IMPL_LIST="X(rijndael_ttable) X(rc6_ref)", generated from the
 * cipher.yaml files, so adding an implementation never edits this file.
 */
#include <string.h>

#include "cipherlab.h"

#ifndef CL_IMPL_LIST
#error "define CL_IMPL_LIST, e.g. -DCL_IMPL_LIST='X(rijndael_ttable)'"
#endif

#define X(sym) extern const cl_impl cl_impl_##sym;
CL_IMPL_LIST
#undef X

const cl_impl *const cl_registry[] = {
#define X(sym) &cl_impl_##sym,
    CL_IMPL_LIST
#undef X
    NULL};

const cl_impl *cl_find_impl(const char *name)
{
    const char *slash = strchr(name, '/');
    size_t clen = slash ? (size_t)(slash - name) : strlen(name);
    for (const cl_impl *const *p = cl_registry; *p; p++) {
        const cl_impl *impl = *p;
        if (strlen(impl->cipher) != clen || strncmp(impl->cipher, name, clen) != 0)
            continue;
        if (!slash || strcmp(impl->strategy, slash + 1) == 0)
            return impl;
    }
    return NULL;
}

int cl_supports_key_bits(const cl_impl *impl, unsigned key_bits)
{
    for (const unsigned short *k = impl->key_bits; *k; k++)
        if (*k == key_bits)
            return 1;
    return 0;
}

int cl_impl_available(const cl_impl *impl)
{
    return impl->available == NULL || impl->available();
}

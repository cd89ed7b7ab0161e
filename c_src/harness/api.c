/*
 * api.c -- the NIST-style cipher instance (cipherInit, blockEncrypt,
 * blockDecrypt) on top of an implementation's ECB functions.  Shared by every
 * implementation so that mode handling costs the same for all of them.
 */
#include <string.h>

#include "cipherlab.h"

int cl_cipher_init(cl_cipher *c, const cl_impl *impl, int mode, const uint8_t *iv,
                   const void *ks)
{
    if (mode != CL_MODE_ECB && mode != CL_MODE_CBC)
        return CL_BAD_MODE;
    c->impl = impl;
    c->mode = mode;
    if (iv)
        memcpy(c->iv, iv, impl->block_bytes);
    else
        memset(c->iv, 0, sizeof c->iv);
    if (impl->init_hook)
        impl->init_hook(ks);
    return CL_OK;
}

void cl_block_encrypt(cl_cipher *c, const void *ks, const uint8_t *in, uint8_t *out,
                      size_t nblocks)
{
    const cl_impl *impl = c->impl;
    if (c->mode == CL_MODE_ECB) {
        impl->encrypt(ks, in, out, nblocks);
        return;
    }
    unsigned bs = impl->block_bytes;
    uint8_t x[CL_MAX_BLOCK_BYTES];
    for (size_t i = 0; i < nblocks; i++, in += bs, out += bs) {
        for (unsigned j = 0; j < bs; j++)
            x[j] = in[j] ^ c->iv[j];
        impl->encrypt(ks, x, out, 1);
        memcpy(c->iv, out, bs);
    }
}

void cl_block_decrypt(cl_cipher *c, const void *ks, const uint8_t *in, uint8_t *out,
                      size_t nblocks)
{
    const cl_impl *impl = c->impl;
    if (c->mode == CL_MODE_ECB) {
        impl->decrypt(ks, in, out, nblocks);
        return;
    }
    unsigned bs = impl->block_bytes;
    uint8_t saved[CL_MAX_BLOCK_BYTES];
    for (size_t i = 0; i < nblocks; i++, in += bs, out += bs) {
        memcpy(saved, in, bs);
        impl->decrypt(ks, in, out, 1);
        for (unsigned j = 0; j < bs; j++)
            out[j] ^= c->iv[j];
        memcpy(c->iv, saved, bs);
    }
}

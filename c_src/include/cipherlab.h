/*
 * cipherlab.h -- the one API every block-cipher implementation provides.
 *
 * Modelled on the NIST AES-candidate API (makeKey / cipherInit / blockEncrypt /
 * blockDecrypt) but with explicit key schedules owned by the caller, so that the
 * harness can measure key setup for encryption and for decryption separately.
 *
 * An implementation is one `cl_impl` descriptor named `cl_impl_<cipher>_<strategy>`
 * (see CL_IMPL_SYMBOL).  It lives in c_src/ciphers/<cipher>/<strategy>.c and is
 * listed in c_src/ciphers/<cipher>/cipher.yaml; the build passes the list of
 * descriptors to harness/registry.c, so a new implementation is one file plus
 * one entry in that YAML file.  Definitions in implementations say
 * "see cipherlab.h" rather than repeating these comments.
 */
#ifndef CIPHERLAB_H
#define CIPHERLAB_H

#include <stddef.h>
#include <stdint.h>

#define CL_API_VERSION 1

/* Return codes of key setup and of cl_cipher_init. */
#define CL_OK 0
#define CL_BAD_KEY_LENGTH (-1)
#define CL_BAD_KEY (-2)      /* e.g. a weak key the cipher refuses */
#define CL_BAD_MODE (-3)
#define CL_UNAVAILABLE (-4)  /* implementation cannot run here (CPU feature) */

/* Largest block and key schedule any implementation may use (the harness
 * allocates schedules dynamically with ks_bytes; these bound stack buffers). */
#define CL_MAX_BLOCK_BYTES 16
#define CL_MAX_KEY_BYTES 32

typedef struct cl_impl {
    const char *cipher;   /* folder name under c_src/ciphers, e.g. "rijndael" */
    const char *strategy; /* file name without .c, e.g. "ttable" */
    unsigned block_bytes; /* 8 or 16 */
    /* Supported key lengths in bits, terminated by 0. */
    const unsigned short *key_bits;
    /* Bytes of one key schedule (what set_*_key fills); the caller allocates
     * it 64-byte aligned.  Encryption and decryption use the same size. */
    size_t ks_bytes;
    /* Bytes of static read-only tables the implementation uses (for the
     * memory table of the report); 0 if it computes everything. */
    size_t table_bytes;
    /* Returns nonzero when this implementation can run on this CPU (e.g. an
     * AES-NI build on a machine without AES-NI returns 0).  NULL = always. */
    int (*available)(void);
    /* Key setup.  key has key_bits/8 bytes.  Return CL_OK or an error. */
    int (*set_encrypt_key)(void *ks, const uint8_t *key, unsigned key_bits);
    int (*set_decrypt_key)(void *ks, const uint8_t *key, unsigned key_bits);
    /* ECB over nblocks whole blocks; in and out may be equal (in place) and
     * need no alignment.  ks was filled by the matching set_*_key. */
    void (*encrypt)(const void *ks, const uint8_t *in, uint8_t *out, size_t nblocks);
    void (*decrypt)(const void *ks, const uint8_t *in, uint8_t *out, size_t nblocks);
    /* Optional per-instance precomputation done by the NIST cipherInit
     * (LOKI97 and MAGENTA did some); NULL for none. */
    void (*init_hook)(const void *ks);
    /* Releases what set_*_key allocated outside ks (a peer library's heap
     * object); the caller calls it once before freeing the buffer, whether or
     * not a key was ever set in it.  NULL when ks owns nothing: every
     * implementation of ours, whose schedules live in ks itself. */
    void (*release)(void *ks);
} cl_impl;

#define CL_IMPL_SYMBOL(cipher, strategy) cl_impl_##cipher##_##strategy

/* ---- NIST-style cipher instance: mode + IV (see harness/api.c) ---- */
enum { CL_MODE_ECB = 1, CL_MODE_CBC = 2 };

typedef struct cl_cipher {
    const cl_impl *impl;
    int mode;
    uint8_t iv[CL_MAX_BLOCK_BYTES];
} cl_cipher;

/* cipherInit: binds impl, mode and IV (iv may be NULL for ECB). */
int cl_cipher_init(cl_cipher *c, const cl_impl *impl, int mode, const uint8_t *iv,
                   const void *ks);
/* blockEncrypt / blockDecrypt in the instance's mode; CBC updates c->iv. */
void cl_block_encrypt(cl_cipher *c, const void *ks, const uint8_t *in, uint8_t *out,
                      size_t nblocks);
void cl_block_decrypt(cl_cipher *c, const void *ks, const uint8_t *in, uint8_t *out,
                      size_t nblocks);

/* ---- registry (harness/registry.c) ---- */
extern const cl_impl *const cl_registry[]; /* NULL-terminated */
/* Finds "cipher/strategy" (or "cipher" = first implementation of it). */
const cl_impl *cl_find_impl(const char *name);
/* Nonzero when impl supports a key of key_bits. */
int cl_supports_key_bits(const cl_impl *impl, unsigned key_bits);
/* Nonzero when impl->available is NULL or returns nonzero. */
int cl_impl_available(const cl_impl *impl);

#endif

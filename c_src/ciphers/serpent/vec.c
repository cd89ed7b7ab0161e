/*
 * serpent/vec.c -- Serpent bitsliced across blocks with GCC/Clang vector
 * extensions (see cipherlab.h and simd_body.h): written once, no intrinsics,
 * for every target.
 *
 * Source: shared/specs/serpent-aes-submission.pdf (cipher p3, bitslice
 * description and linear transformation p5-p6, S-boxes p21).
 *
 * The word type is a vector of four uint32_t lanes
 * (__attribute__((vector_size(16)))), 4 blocks per vector, two groups of 4
 * interleaved: the compiler maps it to the target's 128-bit vectors (SSE2 on
 * x86-64, NEON on aarch64, AltiVec/VSX on ppc64, the vector facility on
 * s390x) or, where there are none (sparc64, mips64, armhf without NEON),
 * splits it into scalar operations -- still correct, and then the
 * guest-instruction count shows what the vectors buy.  The transpose uses
 * __builtin_shufflevector (Clang; GCC since 12); blocks are read and written
 * with memcpy, and on big-endian targets each lane's bytes are reversed (the
 * block words are little-endian, as in bitslice.c).  The last 0..3 blocks and
 * single blocks go through the scalar code.  No CPU check is needed (the
 * compiler emits only what the target's baseline has): available for every
 * arch.  Branch-free and table-free.
 */
#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "cipherlab.h"

static const unsigned short vec_key_bits[] = {128, 192, 256, 0};

typedef uint32_t v4u32 __attribute__((vector_size(16)));
typedef uint8_t v16u8 __attribute__((vector_size(16)));

#define SV_T v4u32
#define SV_LANES 4
#ifndef SV_GROUPS
#define SV_GROUPS 2
#endif
#define SV_ATTR
#define SV_ROTL(x, n) (((x) << (n)) | ((x) >> (32 - (n))))
#define SV_SHL(x, n) ((x) << (n))
#define SV_KEY(w) ((v4u32){(w), (w), (w), (w)})
#define SV_SHUF(a, b, i, j, k, l) __builtin_shufflevector((a), (b), i, j, k, l)
/* Four blocks (one per vector) to x_j = (w_j of block 0, 1, 2, 3); its own
 * inverse. */
#define SV_TRANSPOSE(x0, x1, x2, x3)                                            \
    do {                                                                        \
        const v4u32 t0 = SV_SHUF(x0, x1, 0, 4, 1, 5), t1 = SV_SHUF(x0, x1, 2, 6, 3, 7); \
        const v4u32 t2 = SV_SHUF(x2, x3, 0, 4, 1, 5), t3 = SV_SHUF(x2, x3, 2, 6, 3, 7); \
        x0 = SV_SHUF(t0, t2, 0, 1, 4, 5);                                       \
        x1 = SV_SHUF(t0, t2, 2, 3, 6, 7);                                       \
        x2 = SV_SHUF(t1, t3, 0, 1, 4, 5);                                       \
        x3 = SV_SHUF(t1, t3, 2, 3, 6, 7);                                       \
    } while (0)

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
/* Little-endian words on a big-endian machine: reverse the bytes of each lane. */
static inline v4u32 vec_bswap(v4u32 x)
{
    const v16u8 b = (v16u8)x;
    return (v4u32)__builtin_shufflevector(b, b, 3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
}
#else
#define vec_bswap(x) (x)
#endif

static inline v4u32 vec_load(const uint8_t *p)
{
    v4u32 x;
    memcpy(&x, p, sizeof x);
    return vec_bswap(x);
}

static inline void vec_store(uint8_t *p, v4u32 x)
{
    x = vec_bswap(x);
    memcpy(p, &x, sizeof x);
}

#define SV_LOAD(p, x0, x1, x2, x3)                                              \
    do {                                                                        \
        x0 = vec_load(p);                                                       \
        x1 = vec_load((p) + 16);                                                \
        x2 = vec_load((p) + 32);                                                \
        x3 = vec_load((p) + 48);                                                \
        SV_TRANSPOSE(x0, x1, x2, x3);                                           \
    } while (0)
#define SV_STORE(p, x0, x1, x2, x3)                                             \
    do {                                                                        \
        SV_TRANSPOSE(x0, x1, x2, x3);                                           \
        vec_store(p, x0);                                                       \
        vec_store((p) + 16, x1);                                                \
        vec_store((p) + 32, x2);                                                \
        vec_store((p) + 48, x3);                                                \
    } while (0)

#include "simd_body.h"

const cl_impl cl_impl_serpent_vec = {
    .cipher = "serpent",
    .strategy = "vec",
    .block_bytes = 16,
    .key_bits = vec_key_bits,
    .ks_bytes = 33 * 4 * sizeof(uint32_t),
    .table_bytes = 0,
    .available = NULL,
    .set_encrypt_key = sv_set_key,
    .set_decrypt_key = sv_set_key,
    .encrypt = sv_encrypt,
    .decrypt = sv_decrypt,
    .init_hook = NULL,
};

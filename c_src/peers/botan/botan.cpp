// botan.cpp -- Botan 2 (Debian libbotan-2-dev) block ciphers behind the
// cipherlab API (see c_src/include/cipherlab.h and c_src/peers/README.md).
//
// Key schedule buffer: a small header holding a pointer to one Botan
// BlockCipher object, made by Botan::BlockCipher::create_or_throw(name) on the
// first set_*_key into that buffer and reused by every later one (only
// set_key is called again).  The buffer is zero-filled when allocated, so a
// zero magic means "no object yet".  AES has one class per key size, so a
// key of another size replaces the object (delete + create: still one object
// per buffer, nothing accumulates).  release (the descriptor's release hook)
// deletes the object before the caller frees the buffer.
//
// encrypt/decrypt: one BlockCipher::encrypt_n / decrypt_n call over all n
// blocks (Botan's ECB is exactly that loop; its SIMD code takes 4 or 8
// blocks at a time when n allows).
//
// Byte order: every cipher here uses the same byte strings as our vectors
// (shared/vectors/README.md), no conversion.
//
// AES dispatch: Botan picks AES-NI, else SSSE3 "vperm", else its portable
// (bitsliced) code, from Botan::CPUID at each key setup and each call.  The
// variants rijndael/botan_vperm and rijndael/botan_portable clear CPUID bits
// (Botan 2's CPUID::clear_cpuid_bit, "exposed for testing") before their
// calls and every other descriptor here restores the detected bits
// (CPUID::initialize) before its calls, so variants linked into one program
// do not disturb each other.  Nothing changes unless the wanted dispatch
// differs from the current one.  Single-threaded use only, like every
// cipherlab harness program.  Botan 3 (Debian 13) no longer installs
// cpuid.h: there the variants' processes clear the bits when the library
// starts, from the environment peer.yaml gives them (BOTAN_CLEAR_CPUID).
// Either way a variant is available only where Botan's AES really
// dispatches to the code it names (provider()).
#define BOTAN_NO_DEPRECATED_WARNINGS 1 /* cpuid.h is marked "future internal" */

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <botan/block_cipher.h>
#include <botan/version.h>
#if BOTAN_VERSION_MAJOR < 3
#include <botan/cpuid.h>
#endif

extern "C" {
#include "cipherlab.h"
}

namespace {

constexpr uint64_t MAGIC = 0x626f74616e322e30ULL; // "botan2.0"

struct Header {
    uint64_t magic;
    Botan::BlockCipher *obj;
    unsigned key_bits; // what obj was made for (AES only: one class per size)
};
constexpr size_t KS_BYTES = 64;
static_assert(sizeof(Header) <= KS_BYTES, "header fits");

enum Dispatch { FULL = 0, NO_AESNI = 1, NO_AESNI_NO_SSSE3 = 2 };

void want(Dispatch d)
{
#if BOTAN_VERSION_MAJOR < 3
    static Dispatch current = FULL;
    if (d == current)
        return;
    Botan::CPUID::initialize();
    if (d != FULL)
        Botan::CPUID::clear_cpuid_bit(Botan::CPUID::CPUID_AESNI_BIT);
    if (d == NO_AESNI_NO_SSSE3)
        Botan::CPUID::clear_cpuid_bit(Botan::CPUID::CPUID_SSSE3_BIT);
    current = d;
#else
    (void)d; // the process's environment chose (BOTAN_CLEAR_CPUID)
#endif
}

// available(): Botan's AES dispatches to the code the variant names (Botan 2 calls
// the vector-permute code "vperm", Botan 3 "ssse3"; the full dispatch is AES-NI,
// or on Botan 3 its VAES code where the CPU has it).
template <Dispatch D> int dispatches(void)
{
    want(D);
    try {
        auto c = Botan::BlockCipher::create("AES-128");
        if (!c)
            return 0;
        const std::string p = c->provider();
        const bool vperm = p == "vperm" || p == "ssse3", base = p == "base";
        return D == FULL ? !vperm && !base : D == NO_AESNI ? vperm : base;
    } catch (...) {
        return 0;
    }
}

bool key_ok(const unsigned short *list, unsigned bits)
{
    for (; *list; list++)
        if (*list == bits)
            return true;
    return false;
}

// NAME: Botan algorithm name; for AES (PER_SIZE) the key size is appended.
template <const char *NAME, bool PER_SIZE, const unsigned short *KB, Dispatch D>
int set_key(void *ks, const uint8_t *key, unsigned bits)
{
    if (!key_ok(KB, bits))
        return CL_BAD_KEY_LENGTH;
    want(D);
    Header *h = static_cast<Header *>(ks);
    try {
        if (h->magic != MAGIC || (PER_SIZE && h->key_bits != bits)) {
            if (h->magic == MAGIC)
                delete h->obj;
            h->magic = 0;
            std::string name(NAME);
            if (PER_SIZE)
                name += "-" + std::to_string(bits);
            h->obj = Botan::BlockCipher::create_or_throw(name).release();
            h->key_bits = bits;
            h->magic = MAGIC;
        }
        h->obj->set_key(key, bits / 8);
    } catch (...) {
        return CL_BAD_KEY;
    }
    return CL_OK;
}

void release(void *ks)
{
    Header *h = static_cast<Header *>(ks);
    if (h->magic == MAGIC)
        delete h->obj;
    h->magic = 0;
    h->obj = nullptr;
}

template <Dispatch D> void enc(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    want(D);
    static_cast<const Header *>(ks)->obj->encrypt_n(in, out, n);
}

template <Dispatch D> void dec(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    want(D);
    static_cast<const Header *>(ks)->obj->decrypt_n(in, out, n);
}

const unsigned short kb_128_256[] = {128, 192, 256, 0};
const unsigned short kb_des[] = {64, 0};
const unsigned short kb_3des[] = {192, 0};
const unsigned short kb_idea[] = {128, 0};

const char n_aes[] = "AES";
const char n_serpent[] = "Serpent";
const char n_twofish[] = "Twofish";
const char n_cast256[] = "CAST-256";
const char n_des[] = "DES";
const char n_3des[] = "TripleDES";
const char n_idea[] = "IDEA";

} // namespace

#define BOTAN_IMPL(cipher, impl, bs, kb, name, per_size, disp, avail)                                        \
    extern "C" const cl_impl cl_impl_##cipher##_##impl;                                                      \
    const cl_impl cl_impl_##cipher##_##impl = {#cipher,                                                      \
                                               #impl,                                                        \
                                               bs,                                                           \
                                               kb,                                                           \
                                               KS_BYTES,                                                     \
                                               0,                                                            \
                                               avail,                                                        \
                                               set_key<name, per_size, kb, disp>,                            \
                                               set_key<name, per_size, kb, disp>,                            \
                                               enc<disp>,                                                    \
                                               dec<disp>,                                                    \
                                               nullptr,                                                      \
                                               release};

// rijndael/botan is "hardware" (AES-NI): unavailable on a CPU without it.
BOTAN_IMPL(rijndael, botan, 16, kb_128_256, n_aes, true, FULL, dispatches<FULL>)
BOTAN_IMPL(rijndael, botan_vperm, 16, kb_128_256, n_aes, true, NO_AESNI, dispatches<NO_AESNI>)
BOTAN_IMPL(rijndael, botan_portable, 16, kb_128_256, n_aes, true, NO_AESNI_NO_SSSE3, dispatches<NO_AESNI_NO_SSSE3>)
BOTAN_IMPL(serpent, botan, 16, kb_128_256, n_serpent, false, FULL, nullptr)
BOTAN_IMPL(twofish, botan, 16, kb_128_256, n_twofish, false, FULL, nullptr)
BOTAN_IMPL(cast256, botan, 16, kb_128_256, n_cast256, false, FULL, nullptr)
BOTAN_IMPL(des, botan, 8, kb_des, n_des, false, FULL, nullptr)
BOTAN_IMPL(3des, botan, 8, kb_3des, n_3des, false, FULL, nullptr)
BOTAN_IMPL(idea, botan, 8, kb_idea, n_idea, false, FULL, nullptr)

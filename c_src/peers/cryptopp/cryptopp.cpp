// cryptopp.cpp -- Crypto++ (Debian libcrypto++-dev) block ciphers behind the
// cipherlab API (see c_src/include/cipherlab.h and c_src/peers/README.md).
//
// Each descriptor holds one Crypto++ block-cipher object (X::Encryption or
// X::Decryption) placement-new'd into the caller's key-schedule buffer, after
// a 64-byte header:
//
//   [ header: magic, destroy function, BlockTransformation* ][ object ]
//
// The buffer is zero-filled when allocated, so a zero magic means "no object
// yet".  The first set_*_key constructs the object; later calls reuse it and
// only call SetKey (no allocation per key setup beyond what Crypto++ itself
// does).  If the buffer held the other direction's object, that one is
// destroyed first.  release (the descriptor's release hook) destroys the
// object before the caller frees the buffer, so the heap memory it holds
// (Rijndael's SecBlock schedule and alias workspace; most other ciphers keep
// their schedules inline) is freed too.
//
// encrypt/decrypt: one AdvancedProcessBlocks call over all n blocks with
// BT_AllowParallel, which is exactly what ECB_Mode<X>::ProcessData does.
//
// Byte order: every cipher here uses the same byte strings as our vectors
// (shared/vectors/README.md), no conversion.
//
// AES dispatch: Crypto++ picks AES-NI at run time when HasAESNI() is true.
// rijndael/cryptopp_noaesni switches that off through Crypto++'s public
// global CryptoPP::g_hasAESNI (cpu.h) around each of its calls (key setup
// and encryption: the AES-NI and table key schedules differ) and restores the
// detected value afterwards, so rijndael/cryptopp in the same program is not
// affected.  Single-threaded use only, like every cipherlab harness program.
#include <cstddef>
#include <cstdint>
#include <new>

#include <cryptopp/aes.h>
#include <cryptopp/cast.h>
#include <cryptopp/config_ver.h>
#include <cryptopp/cpu.h>
#include <cryptopp/cryptlib.h>
#include <cryptopp/des.h>
#include <cryptopp/idea.h>
#include <cryptopp/mars.h>
#include <cryptopp/rc6.h>
#include <cryptopp/rijndael.h>
#include <cryptopp/serpent.h>
#include <cryptopp/twofish.h>

extern "C" {
#include "cipherlab.h"
}

namespace {

using CryptoPP::BlockTransformation;

constexpr uint64_t MAGIC = 0x63727970746f7070ULL; // "cryptopp"
constexpr size_t HEADER = 64;

struct Header {
    uint64_t magic;
    void (*destroy)(void *obj);
    BlockTransformation *obj;
};
static_assert(sizeof(Header) <= HEADER, "header fits its 64 bytes");

template <class T> void destroy_obj(void *p) { static_cast<T *>(p)->~T(); }

// The object of type T in ks, constructed on first use.
template <class T> T *obtain(void *ks)
{
    static_assert(alignof(T) <= HEADER, "object alignment within the 64-byte aligned buffer");
    Header *h = static_cast<Header *>(ks);
    void *place = static_cast<unsigned char *>(ks) + HEADER;
    if (h->magic == MAGIC && h->destroy == &destroy_obj<T>)
        return static_cast<T *>(place);
    if (h->magic == MAGIC && h->destroy)
        h->destroy(place);
    h->magic = 0;
    T *t = new (place) T();
    h->magic = MAGIC;
    h->destroy = &destroy_obj<T>;
    h->obj = t;
    return t;
}

void release(void *ks)
{
    Header *h = static_cast<Header *>(ks);
    if (h->magic == MAGIC && h->destroy)
        h->destroy(static_cast<unsigned char *>(ks) + HEADER);
    h->magic = 0;
    h->destroy = nullptr;
    h->obj = nullptr;
}

// Dispatch: -1 = Crypto++'s own (leave g_hasAESNI as detected), 0 = no AES-NI.
#if CRYPTOPP_AESNI_AVAILABLE
bool detected_aesni()
{
    static const bool d = CryptoPP::HasAESNI(); // runs CPU detection once
    return d;
}
struct AesniOff {
    AesniOff()
    {
        (void)detected_aesni();
        CryptoPP::g_hasAESNI = false;
    }
    ~AesniOff() { CryptoPP::g_hasAESNI = detected_aesni(); }
};
#else
struct AesniOff {
};
#endif

bool key_ok(const unsigned short *list, unsigned bits)
{
    for (; *list; list++)
        if (*list == bits)
            return true;
    return false;
}

template <class T, const unsigned short *KB> int set_key_plain(void *ks, const uint8_t *key, unsigned bits)
{
    if (!key_ok(KB, bits))
        return CL_BAD_KEY_LENGTH;
    try {
        obtain<T>(ks)->SetKey(key, bits / 8);
    } catch (...) {
        return CL_BAD_KEY;
    }
    return CL_OK;
}

template <class T, const unsigned short *KB> int set_key_noaesni(void *ks, const uint8_t *key, unsigned bits)
{
    AesniOff off;
    return set_key_plain<T, KB>(ks, key, bits);
}

template <unsigned BS> void process_plain(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    const Header *h = static_cast<const Header *>(ks);
    h->obj->AdvancedProcessBlocks(in, nullptr, out, n * BS, BlockTransformation::BT_AllowParallel);
}

template <unsigned BS> void process_noaesni(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    AesniOff off;
    process_plain<BS>(ks, in, out, n);
}

int have_aesni(void)
{
#if CRYPTOPP_AESNI_AVAILABLE
    return detected_aesni() ? 1 : 0;
#else
    return 0;
#endif
}

constexpr size_t max_size(size_t a, size_t b) { return a > b ? a : b; }
template <class C> constexpr size_t ks_size()
{
    return HEADER + (max_size(sizeof(typename C::Encryption), sizeof(typename C::Decryption)) + 63) / 64 * 64;
}

const unsigned short kb_128_256[] = {128, 192, 256, 0};
const unsigned short kb_des[] = {64, 0};
const unsigned short kb_3des[] = {192, 0};
const unsigned short kb_idea[] = {128, 0};

} // namespace

#define CRYPTOPP_IMPL(cipher, name, C, bs, kb)                                                               \
    extern "C" const cl_impl cl_impl_##cipher##_##name;                                                      \
    const cl_impl cl_impl_##cipher##_##name = {#cipher,                                                      \
                                               #name,                                                        \
                                               bs,                                                           \
                                               kb,                                                           \
                                               ks_size<C>(),                                                 \
                                               0,                                                            \
                                               nullptr,                                                      \
                                               set_key_plain<C::Encryption, kb>,                             \
                                               set_key_plain<C::Decryption, kb>,                             \
                                               process_plain<bs>,                                            \
                                               process_plain<bs>,                                            \
                                               nullptr,                                                      \
                                               release};

// rijndael/cryptopp: Crypto++'s own dispatch; "hardware" only where the CPU
// has AES-NI, so it reports unavailable elsewhere (its table code is
// rijndael/cryptopp_noaesni).
extern "C" const cl_impl cl_impl_rijndael_cryptopp;
const cl_impl cl_impl_rijndael_cryptopp = {"rijndael",
                                           "cryptopp",
                                           16,
                                           kb_128_256,
                                           ks_size<CryptoPP::AES>(),
                                           0,
                                           have_aesni,
                                           set_key_plain<CryptoPP::AES::Encryption, kb_128_256>,
                                           set_key_plain<CryptoPP::AES::Decryption, kb_128_256>,
                                           process_plain<16>,
                                           process_plain<16>,
                                           nullptr,
                                           release};

extern "C" const cl_impl cl_impl_rijndael_cryptopp_noaesni;
const cl_impl cl_impl_rijndael_cryptopp_noaesni = {"rijndael",
                                                   "cryptopp_noaesni",
                                                   16,
                                                   kb_128_256,
                                                   ks_size<CryptoPP::AES>(),
                                                   0,
                                                   nullptr,
                                                   set_key_noaesni<CryptoPP::AES::Encryption, kb_128_256>,
                                                   set_key_noaesni<CryptoPP::AES::Decryption, kb_128_256>,
                                                   process_noaesni<16>,
                                                   process_noaesni<16>,
                                                   nullptr,
                                                   release};

CRYPTOPP_IMPL(rc6, cryptopp, CryptoPP::RC6, 16, kb_128_256)
CRYPTOPP_IMPL(mars, cryptopp, CryptoPP::MARS, 16, kb_128_256)
CRYPTOPP_IMPL(serpent, cryptopp, CryptoPP::Serpent, 16, kb_128_256)
CRYPTOPP_IMPL(twofish, cryptopp, CryptoPP::Twofish, 16, kb_128_256)
CRYPTOPP_IMPL(cast256, cryptopp, CryptoPP::CAST256, 16, kb_128_256)
CRYPTOPP_IMPL(des, cryptopp, CryptoPP::DES, 8, kb_des)
CRYPTOPP_IMPL(3des, cryptopp, CryptoPP::DES_EDE3, 8, kb_3des)
CRYPTOPP_IMPL(idea, cryptopp, CryptoPP::IDEA, 8, kb_idea)

// peers.cpp -- one of our implementations against peer libraries, same process.
//
// Linked with ONE cipherlab implementation (its cl_impl descriptor through
// c_src/harness/registry.c built with -DCL_IMPL_LIST=X(<cipher>_<strategy>))
// and with the peer libraries the build found (PEERS_CRYPTOPP, PEERS_TOMCRYPT,
// PEERS_OPENSSL, PEERS_NETTLE).  For each requested peer that has the cipher it
//
//   1. sets up the same key in our implementation and in the peer,
//   2. encrypts the same buffer (default 4 KiB) in ECB with both and checks the
//      ciphertexts are byte-for-byte equal (byte conventions: see
//      shared/vectors/README.md; every peer here uses the same byte strings as
//      the vectors, so no conversion is applied -- a mismatch is reported as
//      "same_ciphertext": false and makes the program exit 1),
//   3. times ECB encryption of the whole buffer in ONE call each, interleaved
//      (ours, peer, peer, ours, ours, peer ... so neither side always goes
//      first), with the TSC counter of c_src/harness/counter_x86_tsc.c, and
//      takes the median of each side minus the median of an empty measurement,
//
// and prints one JSON line per comparison on stdout.  Usage:
//
//   peers [--peers cryptopp,tomcrypt,...] [--rounds 200] [--warmup 20]
//         [--bytes 4096] [--key-bits N] [--toolchain NAME] [--list]
//
// The lab (lab/bench.py, `invoke bench.peers`) builds and runs it.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

extern "C" {
#include "cipherlab.h"
#include "counter.h"
#include "util.h"
}

#ifdef PEERS_CRYPTOPP
#include <cryptopp/aes.h>
#include <cryptopp/cast.h>
#include <cryptopp/config_ver.h>
#include <cryptopp/cpu.h>
#include <cryptopp/cryptlib.h>
#include <cryptopp/des.h>
#include <cryptopp/idea.h>
#include <cryptopp/mars.h>
#include <cryptopp/modes.h>
#include <cryptopp/rc6.h>
#include <cryptopp/rijndael.h>
#include <cryptopp/serpent.h>
#include <cryptopp/twofish.h>
#endif
#ifdef PEERS_TOMCRYPT
#include <tomcrypt.h>
#endif
#ifdef PEERS_OPENSSL
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#endif
#ifdef PEERS_NETTLE
#include <nettle/aes.h>
#include <nettle/des.h>
#include <nettle/serpent.h>
#include <nettle/twofish.h>
#include <nettle/version.h>
#endif

namespace {

// ------------------------------------------------------------------ peers
struct Peer {
    virtual ~Peer() = default;
    std::string id;       // what --peers names, e.g. "cryptopp-noaesni"
    std::string library;  // e.g. "Crypto++"
    std::string version;  // library version at run time
    std::string api;      // the call that is timed
    std::string note;     // how the peer is configured (dispatch, ...)
    std::string code;     // what kind of code runs: portable C, C++, assembly, AES-NI
    // Returns an empty string on success, else the reason.
    virtual std::string setup(const uint8_t *key, size_t key_bytes) = 0;
    virtual void encrypt(const uint8_t *in, uint8_t *out, size_t len) = 0;
};

#ifdef PEERS_CRYPTOPP
std::string cryptopp_version()
{
    int v = CryptoPP::LibraryVersion();
    return std::to_string(v / 100) + "." + std::to_string(v / 10 % 10) + "." + std::to_string(v % 10);
}

// ECB_Mode<C>::Encryption::ProcessData on the whole buffer (it hands the
// buffer to the block cipher's AdvancedProcessBlocks in one call).
// aesni: -1 = leave Crypto++'s own CPU dispatch alone, 0 = force its
// AES-NI path off (g_hasAESNI, a public global of cpu.h) for key setup and
// encryption, 1 = require AES-NI.
template <class C>
struct CryptoppPeer : Peer {
    typename CryptoPP::ECB_Mode<C>::Encryption enc;
    int aesni;
    CryptoppPeer(const char *pid, const char *cls, int aesni_mode) : aesni(aesni_mode)
    {
        id = pid;
        library = "Crypto++";
        version = cryptopp_version();
        api = std::string("ECB_Mode<") + cls + ">::Encryption::ProcessData";
    }
    void apply_dispatch()
    {
#if CRYPTOPP_AESNI_AVAILABLE
        (void)CryptoPP::HasAESNI();  // runs CPU detection once, so our write below sticks
        static const bool detected = CryptoPP::g_hasAESNI;
        if (aesni == 0)
            CryptoPP::g_hasAESNI = false;
        else
            CryptoPP::g_hasAESNI = detected;
#endif
    }
    std::string setup(const uint8_t *key, size_t key_bytes) override
    {
        apply_dispatch();
        if (aesni == 1 && !CryptoPP::HasAESNI())
            return "Crypto++ reports no AES-NI on this CPU (or was built without it)";
        if (aesni == 0)
            note = "Crypto++ AES-NI dispatch switched off (g_hasAESNI=false): its table code path";
        else if (aesni == 1)
            note = "Crypto++ AES-NI path (HasAESNI() true)";
        try {
            enc.SetKey(key, key_bytes);
        } catch (const CryptoPP::Exception &e) {
            return std::string("SetKey: ") + e.what();
        }
        return "";
    }
    void encrypt(const uint8_t *in, uint8_t *out, size_t len) override
    {
        apply_dispatch();  // cheap; keeps the chosen path if anything else touched it
        enc.ProcessData(out, in, len);
    }
};
#endif

#ifdef PEERS_TOMCRYPT
// ecb_start + ecb_encrypt on the whole buffer.
struct TomcryptPeer : Peer {
    symmetric_ECB ecb{};
    int idx = -1;
    bool started = false;
    TomcryptPeer(const char *pid, const ltc_cipher_descriptor *desc)
    {
        id = pid;
        library = "libtomcrypt";
        version = SCRYPT;
        idx = register_cipher(desc);
        api = std::string("ecb_encrypt(\"") + desc->name + "\")";
        note = "rounds: libtomcrypt default for the key size";
    }
    ~TomcryptPeer() override
    {
        if (started)
            ecb_done(&ecb);
    }
    std::string setup(const uint8_t *key, size_t key_bytes) override
    {
        if (idx < 0)
            return "register_cipher failed";
        if (started)
            ecb_done(&ecb);
        started = false;
        int err = ecb_start(idx, key, (int)key_bytes, 0, &ecb);
        if (err != CRYPT_OK)
            return std::string("ecb_start: ") + error_to_string(err);
        started = true;
        return "";
    }
    void encrypt(const uint8_t *in, uint8_t *out, size_t len) override
    {
        int err = ecb_encrypt(in, out, (unsigned long)len, &ecb);
        if (err != CRYPT_OK) {
            std::fprintf(stderr, "ecb_encrypt: %s\n", error_to_string(err));
            std::exit(2);
        }
    }
};
#endif

#ifdef PEERS_OPENSSL
// EVP_EncryptUpdate on the whole buffer, padding off.
struct OpensslPeer : Peer {
    EVP_CIPHER_CTX *ctx = nullptr;
    EVP_CIPHER *cipher = nullptr;
    std::string evp_name;
    bool legacy;
    OpensslPeer(const char *pid, const char *name, bool needs_legacy) : evp_name(name), legacy(needs_legacy)
    {
        id = pid;
        library = "OpenSSL";
        version = OpenSSL_version(OPENSSL_VERSION);
        api = "EVP_EncryptUpdate(" + evp_name + ", padding off)";
        note = legacy ? "cipher from OpenSSL's legacy provider" : "default provider, OpenSSL's own CPU dispatch";
    }
    ~OpensslPeer() override
    {
        EVP_CIPHER_CTX_free(ctx);
        EVP_CIPHER_free(cipher);
    }
    std::string setup(const uint8_t *key, size_t key_bytes) override
    {
        if (legacy) {
            static bool loaded = OSSL_PROVIDER_load(nullptr, "legacy") && OSSL_PROVIDER_load(nullptr, "default");
            if (!loaded)
                return "OpenSSL legacy provider not available";
        }
        EVP_CIPHER_CTX_free(ctx);
        EVP_CIPHER_free(cipher);
        ctx = nullptr;
        cipher = EVP_CIPHER_fetch(nullptr, evp_name.c_str(), nullptr);
        if (!cipher)
            return "EVP_CIPHER_fetch(" + evp_name + ") failed (not built into this OpenSSL?)";
        if ((size_t)EVP_CIPHER_get_key_length(cipher) != key_bytes)
            return "key length differs";
        ctx = EVP_CIPHER_CTX_new();
        if (!ctx || EVP_EncryptInit_ex2(ctx, cipher, key, nullptr, nullptr) != 1)
            return "EVP_EncryptInit_ex2 failed";
        EVP_CIPHER_CTX_set_padding(ctx, 0);
        return "";
    }
    void encrypt(const uint8_t *in, uint8_t *out, size_t len) override
    {
        int outl = 0;
        if (EVP_EncryptUpdate(ctx, out, &outl, in, (int)len) != 1 || (size_t)outl != len) {
            std::fprintf(stderr, "EVP_EncryptUpdate failed\n");
            std::exit(2);
        }
    }
};
#endif

#ifdef PEERS_NETTLE
std::string nettle_ver()
{
    return std::to_string(nettle_version_major()) + "." + std::to_string(nettle_version_minor());
}

// Nettle's <cipher>_encrypt(ctx, length, dst, src) on the whole buffer.
template <class Ctx>
struct NettlePeer : Peer {
    Ctx ctx{};
    std::string (*set)(Ctx *, const uint8_t *, size_t);
    void (*enc)(const Ctx *, size_t, uint8_t *, const uint8_t *);
    NettlePeer(const char *pid, const char *fn, std::string (*s)(Ctx *, const uint8_t *, size_t),
               void (*e)(const Ctx *, size_t, uint8_t *, const uint8_t *))
        : set(s), enc(e)
    {
        id = pid;
        library = "Nettle";
        version = nettle_ver();
        api = fn;
        const char *ov = std::getenv("NETTLE_FAT_OVERRIDE");
        note = ov ? std::string("NETTLE_FAT_OVERRIDE=") + ov : "Nettle's own CPU dispatch (fat build)";
    }
    std::string setup(const uint8_t *key, size_t key_bytes) override { return set(&ctx, key, key_bytes); }
    void encrypt(const uint8_t *in, uint8_t *out, size_t len) override { enc(&ctx, len, out, in); }
};

std::string n_aes128(aes128_ctx *c, const uint8_t *k, size_t n)
{
    if (n != AES128_KEY_SIZE)
        return "Nettle peer is AES-128 only";
    aes128_set_encrypt_key(c, k);
    return "";
}

// Nettle's AES picks its code once, when the library loads (fat build): AES-NI
// when the CPU has it, unless NETTLE_FAT_OVERRIDE is set (e.g. to "none").  So
// "nettle" (AES-NI) and "nettle-noaesni" need different processes; each
// checks the environment it was started with.
struct NettleAesPeer : NettlePeer<aes128_ctx> {
    bool want_noaesni;
    NettleAesPeer(const char *pid, bool noaesni)
        : NettlePeer<aes128_ctx>(pid, "aes128_encrypt", n_aes128, aes128_encrypt), want_noaesni(noaesni)
    {
    }
    std::string setup(const uint8_t *key, size_t key_bytes) override
    {
        const char *ov = std::getenv("NETTLE_FAT_OVERRIDE");
        bool noaesni = ov && !std::strstr(ov, "aesni");
        if (want_noaesni && !noaesni)
            return "start the program with NETTLE_FAT_OVERRIDE=none for Nettle's non-AES-NI code";
        if (!want_noaesni && ov)
            return "NETTLE_FAT_OVERRIDE is set; run 'nettle' (AES-NI dispatch) without it";
        note = noaesni ? "NETTLE_FAT_OVERRIDE=" + std::string(ov) + ": Nettle's non-AES-NI code"
                       : "Nettle's fat-build dispatch (AES-NI when the CPU has it)";
        return NettlePeer<aes128_ctx>::setup(key, key_bytes);
    }
};
std::string n_serpent(serpent_ctx *c, const uint8_t *k, size_t n)
{
    serpent_set_key(c, n, k);
    return "";
}
std::string n_twofish(twofish_ctx *c, const uint8_t *k, size_t n)
{
    twofish_set_key(c, n, k);
    return "";
}
std::string n_des(des_ctx *c, const uint8_t *k, size_t n)
{
    if (n != DES_KEY_SIZE)
        return "bad key length";
    // 0 means a weak key; Nettle sets the schedule all the same (its manual:
    // applications that don't care about weak keys can ignore the result).
    (void)des_set_key(c, k);
    return "";
}
std::string n_des3(des3_ctx *c, const uint8_t *k, size_t n)
{
    if (n != DES3_KEY_SIZE)
        return "bad key length";
    // 0 means a weak key; Nettle sets the schedule all the same (its manual:
    // applications that don't care about weak keys can ignore the result).
    (void)des3_set_key(c, k);
    return "";
}
#endif

// The peers that exist for a cipher (folder name).  Ids: cryptopp (its own
// dispatch), cryptopp-aesni / cryptopp-noaesni (AES only), tomcrypt, openssl,
// nettle, nettle-noaesni (AES only; needs NETTLE_FAT_OVERRIDE=none in the environment).
std::unique_ptr<Peer> make_peer_1(const std::string &id, const std::string &cipher)
{
    (void)id;
    (void)cipher;
#ifdef PEERS_CRYPTOPP
    using namespace CryptoPP;
    if (cipher == "rijndael") {
        if (id == "cryptopp-aesni")
            return std::make_unique<CryptoppPeer<AES>>(id.c_str(), "AES", 1);
        if (id == "cryptopp-noaesni")
            return std::make_unique<CryptoppPeer<AES>>(id.c_str(), "AES", 0);
        if (id == "cryptopp")
            return std::make_unique<CryptoppPeer<AES>>(id.c_str(), "AES", -1);
    }
    if (id == "cryptopp") {
        if (cipher == "rc6")
            return std::make_unique<CryptoppPeer<RC6>>(id.c_str(), "RC6", -1);
        if (cipher == "mars")
            return std::make_unique<CryptoppPeer<MARS>>(id.c_str(), "MARS", -1);
        if (cipher == "serpent")
            return std::make_unique<CryptoppPeer<Serpent>>(id.c_str(), "Serpent", -1);
        if (cipher == "twofish")
            return std::make_unique<CryptoppPeer<Twofish>>(id.c_str(), "Twofish", -1);
        if (cipher == "cast256")
            return std::make_unique<CryptoppPeer<CAST256>>(id.c_str(), "CAST256", -1);
        if (cipher == "des")
            return std::make_unique<CryptoppPeer<DES>>(id.c_str(), "DES", -1);
        if (cipher == "3des")
            return std::make_unique<CryptoppPeer<DES_EDE3>>(id.c_str(), "DES_EDE3", -1);
        if (cipher == "idea")
            return std::make_unique<CryptoppPeer<IDEA>>(id.c_str(), "IDEA", -1);
    }
#endif
#ifdef PEERS_TOMCRYPT
    if (id == "tomcrypt") {
        if (cipher == "rijndael")
            return std::make_unique<TomcryptPeer>(id.c_str(), &aes_desc);
        if (cipher == "rc6")
            return std::make_unique<TomcryptPeer>(id.c_str(), &rc6_desc);
        if (cipher == "twofish")
            return std::make_unique<TomcryptPeer>(id.c_str(), &twofish_desc);
        if (cipher == "saferplus")
            return std::make_unique<TomcryptPeer>(id.c_str(), &saferp_desc);
        if (cipher == "des")
            return std::make_unique<TomcryptPeer>(id.c_str(), &des_desc);
        if (cipher == "3des")
            return std::make_unique<TomcryptPeer>(id.c_str(), &des3_desc);
    }
#endif
#ifdef PEERS_OPENSSL
    if (id == "openssl") {
        if (cipher == "rijndael")
            return std::make_unique<OpensslPeer>(id.c_str(), "AES-128-ECB", false);
        if (cipher == "3des")
            return std::make_unique<OpensslPeer>(id.c_str(), "DES-EDE3-ECB", false);
        if (cipher == "des")
            return std::make_unique<OpensslPeer>(id.c_str(), "DES-ECB", true);
        if (cipher == "idea")
            return std::make_unique<OpensslPeer>(id.c_str(), "IDEA-ECB", true);
    }
#endif
#ifdef PEERS_NETTLE
    if (cipher == "rijndael" && (id == "nettle" || id == "nettle-noaesni"))
        return std::make_unique<NettleAesPeer>(id.c_str(), id == "nettle-noaesni");
    if (id == "nettle") {
        if (cipher == "serpent")
            return std::make_unique<NettlePeer<serpent_ctx>>(id.c_str(), "serpent_encrypt", n_serpent,
                                                             serpent_encrypt);
        if (cipher == "twofish")
            return std::make_unique<NettlePeer<twofish_ctx>>(id.c_str(), "twofish_encrypt", n_twofish,
                                                             twofish_encrypt);
        if (cipher == "des")
            return std::make_unique<NettlePeer<des_ctx>>(id.c_str(), "des_encrypt", n_des, des_encrypt);
        if (cipher == "3des")
            return std::make_unique<NettlePeer<des3_ctx>>(id.c_str(), "des3_encrypt", n_des3, des3_encrypt);
    }
#endif
    return nullptr;
}

// What kind of code each peer runs on x86-64 (checked with a debugger and the
// libraries' symbol tables: Crypto++'s non-AES-NI AES goes through
// Rijndael_Enc_AdvancedProcessBlocks_SSE2, Nettle's serpent_encrypt uses xmm
// registers, Nettle's and OpenSSL's AES dispatch to AES-NI code).
std::string peer_code(const std::string &id, const std::string &cipher)
{
    if (cipher == "rijndael") {
        if (id == "cryptopp-noaesni")
            return "x86-64 assembly, T-tables";
        if (id == "nettle-noaesni")
            return "x86-64 assembly, T-tables";
        if (id == "tomcrypt")
            return "portable C, T-tables";
        return "AES-NI";
    }
    if (id == "nettle" && cipher == "serpent")
        return "x86-64 SSE2 assembly";
    if (id.rfind("cryptopp", 0) == 0)
        return "portable C++";
    return "portable C";
}

std::unique_ptr<Peer> make_peer(const std::string &id, const std::string &cipher)
{
    std::unique_ptr<Peer> p = make_peer_1(id, cipher);
    if (p)
        p->code = peer_code(id, cipher);
    return p;
}

const char *const ALL_PEERS[] = {"cryptopp", "cryptopp-aesni", "cryptopp-noaesni", "tomcrypt",
                                 "openssl",  "nettle",         "nettle-noaesni"};

// ------------------------------------------------------------------ timing
double median(std::vector<uint64_t> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2.0;
}

double quantile(std::vector<uint64_t> v, double q)
{
    std::sort(v.begin(), v.end());
    return (double)v[(size_t)(q * (double)(v.size() - 1))];
}

// ------------------------------------------------------------------ known answers
// Single-block ECB records (no ITER or ITER=1, no MODE) of a vectors file
// (format: shared/vectors/README.md) with a key of key_bits.  They show that
// each side really uses the vectors' byte convention, not only that both agree.
struct Kat {
    std::vector<uint8_t> key, pt, ct;
};

bool unhex(const std::string &h, std::vector<uint8_t> &out)
{
    if (h.size() % 2)
        return false;
    out.clear();
    for (size_t i = 0; i < h.size(); i += 2) {
        char b[3] = {h[i], h[i + 1], 0};
        char *end = nullptr;
        out.push_back((uint8_t)std::strtoul(b, &end, 16));
        if (*end)
            return false;
    }
    return true;
}

std::vector<Kat> read_kat(const std::string &path, unsigned key_bits, size_t block_bytes, size_t limit)
{
    std::vector<Kat> out;
    FILE *f = std::fopen(path.c_str(), "r");
    if (!f)
        return out;
    std::string key, pt, ct, iter, mode;
    auto flush = [&]() {
        std::string it = iter.empty() ? "1" : iter;
        if (!key.empty() && !pt.empty() && !ct.empty() && it == "1" && (mode.empty() || mode == "ECB") &&
            out.size() < limit) {
            Kat k;
            if (unhex(key, k.key) && unhex(pt, k.pt) && unhex(ct, k.ct) && k.key.size() * 8 == key_bits &&
                k.pt.size() == block_bytes && k.ct.size() == block_bytes)
                out.push_back(std::move(k));
        }
        key.clear(), pt.clear(), ct.clear(), iter.clear(), mode.clear();
    };
    char buf[4096];
    while (std::fgets(buf, sizeof buf, f)) {
        std::string line(buf);
        while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' '))
            line.pop_back();
        if (line.empty()) {
            flush();
            continue;
        }
        if (line[0] == '#')
            continue;
        size_t eq = line.find('=');
        if (eq == std::string::npos)
            continue;
        std::string k = line.substr(0, eq), v = line.substr(eq + 1);
        if (k == "KEY")
            key = v;
        else if (k == "PT")
            pt = v;
        else if (k == "CT")
            ct = v;
        else if (k == "ITER")
            iter = v;
        else if (k == "MODE")
            mode = v;
    }
    flush();
    std::fclose(f);
    return out;
}

struct Options {
    std::vector<std::string> peers;
    int rounds = 200;
    int warmup = 20;
    size_t bytes = 4096;
    unsigned key_bits = 0;
    std::string toolchain = "unknown";
    std::string kat;
    size_t kat_limit = 500;
    bool list = false;
};

void json_kv(const char *k, const std::string &v, bool comma = true)
{
    std::printf("%s\"%s\":", comma ? "," : "", k);
    cl_json_str(stdout, v.c_str());
}

void usage_die(const char *msg)
{
    cl_die("peers", msg,
           "usage: peers [--peers a,b] [--rounds N] [--warmup N] [--bytes N] [--key-bits N] [--toolchain NAME] "
           "[--kat FILE] [--kat-limit N] [--list]");
}

Options parse(int argc, char **argv)
{
    Options o;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto val = [&]() -> std::string {
            if (i + 1 >= argc)
                usage_die(("missing value for " + a).c_str());
            return argv[++i];
        };
        if (a == "--peers") {
            std::string s = val();
            size_t p = 0;
            while (p <= s.size()) {
                size_t q = s.find(',', p);
                if (q == std::string::npos)
                    q = s.size();
                if (q > p)
                    o.peers.push_back(s.substr(p, q - p));
                p = q + 1;
            }
        } else if (a == "--rounds") {
            o.rounds = std::atoi(val().c_str());
        } else if (a == "--warmup") {
            o.warmup = std::atoi(val().c_str());
        } else if (a == "--bytes") {
            o.bytes = (size_t)std::strtoul(val().c_str(), nullptr, 10);
        } else if (a == "--key-bits") {
            o.key_bits = (unsigned)std::strtoul(val().c_str(), nullptr, 10);
        } else if (a == "--toolchain") {
            o.toolchain = val();
        } else if (a == "--kat") {
            o.kat = val();
        } else if (a == "--kat-limit") {
            o.kat_limit = (size_t)std::strtoul(val().c_str(), nullptr, 10);
        } else if (a == "--list") {
            o.list = true;
        } else {
            usage_die(("unknown argument " + a).c_str());
        }
    }
    if (o.rounds < 5 || o.warmup < 0 || o.bytes == 0)
        usage_die("--rounds must be >= 5, --warmup >= 0, --bytes > 0");
    return o;
}

}  // namespace

int main(int argc, char **argv)
{
    Options opt = parse(argc, argv);
    const cl_impl *impl = cl_registry[0];
    if (!impl)
        cl_die("peers", "no implementation linked", nullptr);
    std::string cipher = impl->cipher;
    std::string ours = cipher + "/" + impl->strategy;

    if (opt.peers.empty())
        for (const char *p : ALL_PEERS)
            opt.peers.push_back(p);

    if (opt.list) {
        std::printf("{\"type\":\"peers\",\"impl\":\"%s\",\"available\":[", ours.c_str());
        bool first = true;
        for (const char *p : ALL_PEERS)
            if (make_peer(p, cipher)) {
                std::printf("%s\"%s\"", first ? "" : ",", p);
                first = false;
            }
        std::printf("]}\n");
        return 0;
    }

    if (!cl_impl_available(impl)) {
        std::printf("{\"type\":\"unavailable\",\"impl\":\"%s\",\"reason\":\"CPU lacks what it needs\"}\n",
                    ours.c_str());
        return 3;
    }
    unsigned key_bits = opt.key_bits;
    if (!key_bits)
        key_bits = cl_supports_key_bits(impl, 128) ? 128 : impl->key_bits[0];
    if (!cl_supports_key_bits(impl, key_bits))
        cl_die("peers", "our implementation does not support that key size", nullptr);
    size_t bs = impl->block_bytes;
    if (opt.bytes % bs)
        usage_die("--bytes must be a multiple of the block size");
    size_t nblocks = opt.bytes / bs;

    // Same key and same plaintext for both sides (deterministic).
    uint64_t seed = 0x70656572735f3031ULL;
    uint8_t key[CL_MAX_KEY_BYTES];
    cl_rand_fill(&seed, key, key_bits / 8);
    std::vector<uint8_t> ct_ours(opt.bytes), ct_peer(opt.bytes);
    // Timed calls read `pt` and write `ct` in one page-aligned arena, the same
    // two addresses for both sides, so neither gets a different alignment or
    // distance between input and output (4K aliasing) than the other.
    size_t span = (opt.bytes + 4095) / 4096 * 4096;
    uint8_t *arena = (uint8_t *)cl_alloc_aligned(2 * span + 4096);
    uint8_t *pt = arena, *ct = arena + span + 256;
    cl_rand_fill(&seed, pt, opt.bytes);

    void *ks = cl_alloc_aligned(impl->ks_bytes);
    int rc = impl->set_encrypt_key(ks, key, key_bits);
    if (rc != CL_OK)
        cl_die("peers", "our set_encrypt_key failed", nullptr);

    std::vector<Kat> kats;
    size_t ours_kat_ok = 0;
    if (!opt.kat.empty()) {
        kats = read_kat(opt.kat, key_bits, bs, opt.kat_limit);
        void *kks = cl_alloc_aligned(impl->ks_bytes);
        uint8_t blk[CL_MAX_BLOCK_BYTES];
        for (const Kat &k : kats) {
            if (impl->set_encrypt_key(kks, k.key.data(), key_bits) != CL_OK)
                continue;
            impl->encrypt(kks, k.pt.data(), blk, 1);
            ours_kat_ok += std::memcmp(blk, k.ct.data(), bs) == 0;
        }
        std::free(kks);
    }

    // Overhead of the counter pair itself (subtracted from both medians).
    std::vector<uint64_t> null_t;
    for (int i = 0; i < 1000; i++) {
        uint64_t t0 = cl_counter_start();
        uint64_t t1 = cl_counter_stop();
        null_t.push_back(t1 - t0);
    }
    double null_med = median(null_t);

    int status = 0;
    for (const std::string &pid : opt.peers) {
        std::unique_ptr<Peer> peer = make_peer(pid, cipher);
        if (!peer) {
            std::printf("{\"type\":\"skip\",\"impl\":\"%s\",\"peer\":\"%s\",\"reason\":\"peer has no %s (or "
                        "was not built in)\"}\n",
                        ours.c_str(), pid.c_str(), cipher.c_str());
            continue;
        }
        // Known answers first (each sets its own key), then the benchmark key.
        size_t peer_kat_ok = 0;
        std::string err;
        for (const Kat &k : kats) {
            err = peer->setup(k.key.data(), k.key.size());
            if (!err.empty())
                break;
            uint8_t blk[CL_MAX_BLOCK_BYTES];
            peer->encrypt(k.pt.data(), blk, bs);
            peer_kat_ok += std::memcmp(blk, k.ct.data(), bs) == 0;
        }
        if (err.empty())
            err = peer->setup(key, key_bits / 8);
        if (!err.empty()) {
            std::printf("{\"type\":\"skip\",\"impl\":\"%s\",\"peer\":\"%s\",\"reason\":", ours.c_str(),
                        pid.c_str());
            cl_json_str(stdout, err.c_str());
            std::printf("}\n");
            continue;
        }
        impl->encrypt(ks, pt, ct_ours.data(), nblocks);
        peer->encrypt(pt, ct_peer.data(), opt.bytes);
        bool same = std::memcmp(ct_ours.data(), ct_peer.data(), opt.bytes) == 0;
        if (!same)
            status = 1;

        std::vector<uint64_t> t_ours, t_peer;
        t_ours.reserve(opt.rounds);
        t_peer.reserve(opt.rounds);
        auto time_ours = [&]() {
            uint64_t t0 = cl_counter_start();
            impl->encrypt(ks, pt, ct, nblocks);
            uint64_t t1 = cl_counter_stop();
            return t1 - t0;
        };
        auto time_peer = [&]() {
            uint64_t t0 = cl_counter_start();
            peer->encrypt(pt, ct, opt.bytes);
            uint64_t t1 = cl_counter_stop();
            return t1 - t0;
        };
        for (int r = -opt.warmup; r < opt.rounds; r++) {
            uint64_t a, b;
            if (r & 1) {
                b = time_peer();
                a = time_ours();
            } else {
                a = time_ours();
                b = time_peer();
            }
            if (r >= 0) {
                t_ours.push_back(a);
                t_peer.push_back(b);
            }
        }
        double mo = std::max(median(t_ours) - null_med, 1.0);
        double mp = std::max(median(t_peer) - null_med, 1.0);
        double bytes = (double)opt.bytes;

        std::printf("{\"type\":\"comparison\"");
        json_kv("cipher", cipher);
        json_kv("ours", ours);
        json_kv("toolchain", opt.toolchain);
        json_kv("peer", peer->id);
        json_kv("peer_library", peer->library);
        json_kv("peer_version", peer->version);
        json_kv("peer_api", peer->api);
        json_kv("peer_note", peer->note);
        json_kv("peer_code", peer->code);
        std::printf(",\"key_bits\":%u,\"bytes\":%zu,\"rounds\":%d,\"warmup\":%d", key_bits, opt.bytes, opt.rounds,
                    opt.warmup);
        json_kv("counter", cl_counter_name());
        json_kv("unit", cl_counter_unit());
        std::printf(",\"null_median\":%.1f", null_med);
        std::printf(",\"ours_per_byte\":%.4f,\"peer_per_byte\":%.4f,\"ratio\":%.4f", mo / bytes, mp / bytes,
                    mo / mp);
        std::printf(",\"ours_q25_per_byte\":%.4f,\"ours_q75_per_byte\":%.4f", (quantile(t_ours, 0.25) - null_med) / bytes,
                    (quantile(t_ours, 0.75) - null_med) / bytes);
        std::printf(",\"peer_q25_per_byte\":%.4f,\"peer_q75_per_byte\":%.4f", (quantile(t_peer, 0.25) - null_med) / bytes,
                    (quantile(t_peer, 0.75) - null_med) / bytes);
        std::printf(",\"same_ciphertext\":%s", same ? "true" : "false");
        std::printf(",\"kat_records\":%zu,\"ours_kat_passed\":%zu,\"peer_kat_passed\":%zu", kats.size(),
                    ours_kat_ok, peer_kat_ok);
        std::printf(",\"ours_ct_head\":");
        cl_json_hex(stdout, ct_ours.data(), std::min<size_t>(16, opt.bytes));
        std::printf(",\"peer_ct_head\":");
        cl_json_hex(stdout, ct_peer.data(), std::min<size_t>(16, opt.bytes));
        std::printf("}\n");
        std::fflush(stdout);
    }
    std::free(ks);
    std::free(arena);
    return status;
}

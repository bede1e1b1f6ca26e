#include "credemu_x509.h"

#include <openssl/asn1.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

// One subject attribute; an empty value is left out. Lengths are explicit: a value holding a NUL is refused by
// the caller, never cut short here.
static int add_entry(X509_NAME *name, const char *field, const char *value, size_t length) {
    if (length == 0) return 1;
    if (length > 256) return 0;
    return X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8, (const unsigned char *)value, (int)length, -1, 0) == 1;
}

// An extension from OpenSSL's configuration syntax (`critical,CA:FALSE`), in the context of subject and issuer.
static int add_conf(X509 *cert, X509V3_CTX *ctx, int nid, const char *value) {
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, ctx, nid, value);
    if (ext == NULL) return 0;
    int ok = X509_add_ext(cert, ext, -1) == 1;
    X509_EXTENSION_free(ext);
    return ok;
}

// The caller's DER Extensions, each added as given.
static int add_extensions(X509 *cert, const uint8_t *der, size_t length) {
    if (length == 0) return 1;
    if (length > 65536) return 0;
    const unsigned char *cursor = der;
    X509_EXTENSIONS *list = d2i_X509_EXTENSIONS(NULL, &cursor, (long)length);
    if (list == NULL) return 0;
    int ok = cursor == der + length;   // nothing after the list
    for (int i = 0; ok && i < sk_X509_EXTENSION_num(list); i++) ok = X509_add_ext(cert, sk_X509_EXTENSION_value(list, i), -1) == 1;
    sk_X509_EXTENSION_pop_free(list, X509_EXTENSION_free);
    return ok;
}

static EVP_PKEY *read_private_key(const uint8_t *der, size_t length) {
    const unsigned char *cursor = der;
    PKCS8_PRIV_KEY_INFO *info = d2i_PKCS8_PRIV_KEY_INFO(NULL, &cursor, (long)length);
    if (info == NULL) return NULL;
    EVP_PKEY *key = cursor == der + length ? EVP_PKCS82PKEY(info) : NULL;
    PKCS8_PRIV_KEY_INFO_free(info);
    return key;
}

uint8_t *credemu_x509_issue(const char *country, size_t country_length,
                            const char *organization, size_t organization_length,
                            const char *unit, size_t unit_length,
                            const char *common_name, size_t common_name_length,
                            const uint8_t *subject_spki, size_t subject_spki_length,
                            const uint8_t *issuer_pkcs8, size_t issuer_pkcs8_length,
                            const uint8_t *issuer_certificate, size_t issuer_certificate_length,
                            const uint8_t *serial, size_t serial_length,
                            int64_t not_before, int64_t not_after, int authority,
                            const uint8_t *extensions, size_t extensions_length,
                            size_t *length) {
    if (serial_length == 0 || serial_length > 20 || (serial[0] & 0x80) != 0 || subject_spki_length > 65536
        || issuer_pkcs8_length > 65536 || issuer_certificate_length > 65536) return NULL;
    uint8_t *out = NULL;
    X509 *cert = X509_new();
    X509 *issuer = NULL;
    EVP_PKEY *subject_key = NULL;
    EVP_PKEY *signer = read_private_key(issuer_pkcs8, issuer_pkcs8_length);
    BIGNUM *serial_number = BN_bin2bn(serial, (int)serial_length, NULL);
    const unsigned char *cursor = subject_spki;
    subject_key = d2i_PUBKEY(NULL, &cursor, (long)subject_spki_length);
    int ok = cert != NULL && signer != NULL && serial_number != NULL && subject_key != NULL
        && cursor == subject_spki + subject_spki_length;
    if (ok && issuer_certificate_length > 0) {
        cursor = issuer_certificate;
        issuer = d2i_X509(NULL, &cursor, (long)issuer_certificate_length);
        ok = issuer != NULL && cursor == issuer_certificate + issuer_certificate_length
            && X509_check_private_key(issuer, signer) == 1;
    }
    // Self-signed: the signer is the subject.
    if (ok && issuer == NULL) ok = EVP_PKEY_eq(signer, subject_key) == 1;
    X509_NAME *name = ok ? X509_get_subject_name(cert) : NULL;
    ok = ok && X509_set_version(cert, X509_VERSION_3) == 1
        && BN_to_ASN1_INTEGER(serial_number, X509_get_serialNumber(cert)) != NULL
        && ASN1_TIME_set(X509_getm_notBefore(cert), (time_t)not_before) != NULL
        && ASN1_TIME_set(X509_getm_notAfter(cert), (time_t)not_after) != NULL
        && X509_set_pubkey(cert, subject_key) == 1
        && add_entry(name, "C", country, country_length)
        && add_entry(name, "O", organization, organization_length)
        && add_entry(name, "OU", unit, unit_length)
        && add_entry(name, "CN", common_name, common_name_length)
        && X509_set_issuer_name(cert, issuer != NULL ? X509_get_subject_name(issuer) : name) == 1;
    if (ok) {
        X509V3_CTX ctx;
        X509V3_set_ctx(&ctx, issuer != NULL ? issuer : cert, cert, NULL, NULL, 0);
        ok = add_conf(cert, &ctx, NID_basic_constraints, authority ? "critical,CA:TRUE" : "critical,CA:FALSE")
            && add_conf(cert, &ctx, NID_key_usage, authority ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature")
            && add_conf(cert, &ctx, NID_subject_key_identifier, "hash")
            && (issuer == NULL || add_conf(cert, &ctx, NID_authority_key_identifier, "keyid:always"))
            && add_extensions(cert, extensions, extensions_length);
    }
    ok = ok && X509_sign(cert, signer, EVP_sha256()) > 0;
    if (ok) {
        int size = i2d_X509(cert, NULL);
        out = size > 0 ? OPENSSL_malloc((size_t)size) : NULL;
        unsigned char *write = out;
        if (out != NULL && i2d_X509(cert, &write) == size) {
            *length = (size_t)size;
        } else {
            OPENSSL_free(out);
            out = NULL;
        }
    }
    BN_free(serial_number);
    EVP_PKEY_free(subject_key);
    EVP_PKEY_free(signer);
    X509_free(issuer);
    X509_free(cert);
    return out;
}

void credemu_x509_free(uint8_t *der) { OPENSSL_free(der); }

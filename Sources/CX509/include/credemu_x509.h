// X.509 v3 certificates (RFC 5280) over OpenSSL's X509 interface, for credemu's test attestation CA and its
// batch certificates (WebAuthn L3 §8.2.1). What goes into them beyond the X.509 machinery (the FIDO extensions,
// the names) is the Swift side's (`Signing/AttestationCA.swift`).
#ifndef CREDEMU_X509_H
#define CREDEMU_X509_H

#include <stddef.h>
#include <stdint.h>

/// Issues a certificate and returns its DER (free it with `credemu_x509_free`), its length in `*length`; NULL on
/// failure, with the reason on OpenSSL's error queue.
///
/// - The subject is C, O, OU (left out when `unit` is empty) and CN, each `*_length` bytes of UTF-8 (C a
///   PrintableString of two letters, as OpenSSL's string table requires).
/// - `subject_spki`: the subject's public key, DER SubjectPublicKeyInfo.
/// - `issuer_certificate`: the issuer's DER certificate, or length 0 for a self-signed one (then
///   `issuer_pkcs8` must be the subject's own key). The issuer's key must be the certificate's.
/// - `serial`: a positive big-endian serial number, at most 20 bytes (RFC 5280 §4.1.2.2).
/// - `not_before`, `not_after`: seconds since the epoch.
/// - `authority`: 1 for a CA (basicConstraints CA:TRUE and keyUsage keyCertSign, cRLSign, both critical); 0 for an
///   end entity (basicConstraints CA:FALSE, keyUsage digitalSignature, critical).
/// - `extensions`: more extensions, DER `Extensions` (SEQUENCE OF Extension), added as they are; length 0 for none.
///
/// Every certificate is version 3, has a subjectKeyIdentifier (and, when not self-signed, the issuer's as its
/// authorityKeyIdentifier) and is signed with ECDSA or RSA over SHA-256, whichever the issuer's key is.
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
                            size_t *length);

void credemu_x509_free(uint8_t *der);

#endif

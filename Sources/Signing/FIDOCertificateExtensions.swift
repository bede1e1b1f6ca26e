/// The FIDO extensions of an attestation certificate, as DER `Extension`s (RFC 5280 §4.1), both non-critical.
enum FIDOCertificateExtensions {
    /// id-fido-gen-ce-aaguid, 1.3.6.1.4.1.45724.1.1.4 (WebAuthn L3 §8.2.1): the extnValue is an OCTET STRING
    /// holding the DER OCTET STRING of the 16-byte AAGUID. It MUST NOT be critical.
    static func aaguid(_ aaguid: [UInt8]) -> [UInt8] {
        precondition(aaguid.count == 16)
        return DER.sequence(DER.tagged(0x06, aaguidOID) + DER.tagged(0x04, DER.tagged(0x04, aaguid)))
    }

    /// id-fido-u2f-ce-transports, 1.3.6.1.4.1.45724.2.1.1 (FIDO U2F Authenticator Transports Extension v1.2 §3).
    static func transports(_ transports: U2FTransports) -> [UInt8] {
        DER.sequence(DER.tagged(0x06, transportsOID) + DER.tagged(0x04, transports.bitString))
    }

    /// 1.3.6.1.4.1.45724.1.1.4 encoded (X.690 §8.19): 45724 is 0x82 0xE5 0x1C in base 128.
    static let aaguidOID: [UInt8] = [0x2B, 0x06, 0x01, 0x04, 0x01, 0x82, 0xE5, 0x1C, 0x01, 0x01, 0x04]
    static let transportsOID: [UInt8] = [0x2B, 0x06, 0x01, 0x04, 0x01, 0x82, 0xE5, 0x1C, 0x02, 0x01, 0x01]
}

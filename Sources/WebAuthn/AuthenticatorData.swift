/// Authenticator data (WebAuthn L3 §6.1): rpIdHash, flags, signCount, attested credential data, extensions.
public struct AuthenticatorData: Equatable, Sendable {
    /// The flag bits of §6.1; bits 1 and 5 are reserved (RFU) and always zero here.
    public struct Flags: OptionSet, Equatable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let userPresent = Flags(rawValue: 0x01)
        public static let userVerified = Flags(rawValue: 0x04)
        public static let backupEligible = Flags(rawValue: 0x08)
        public static let backedUp = Flags(rawValue: 0x10)
        public static let attestedCredentialData = Flags(rawValue: 0x40)
        public static let extensionData = Flags(rawValue: 0x80)
    }

    /// §6.5.1: AAGUID, credential ID and the COSE public key.
    public struct AttestedCredentialData: Equatable, Sendable {
        public var aaguid: [UInt8]
        public var credentialID: [UInt8]
        public var publicKey: COSEKey

        public init(aaguid: [UInt8], credentialID: [UInt8], publicKey: COSEKey) {
            self.aaguid = aaguid
            self.credentialID = credentialID
            self.publicKey = publicKey
        }
    }

    public var rpIDHash: [UInt8]
    public var flags: Flags
    public var signCount: UInt32
    public var attestedCredentialData: AttestedCredentialData?
    public var extensions: CBOR?

    /// AT and ED follow from the data present; pass the others in `flags`.
    public init(rpIDHash: [UInt8], flags: Flags, signCount: UInt32,
                attestedCredentialData: AttestedCredentialData? = nil, extensions: CBOR? = nil) {
        var flags = flags
        if attestedCredentialData != nil { flags.insert(.attestedCredentialData) } else { flags.remove(.attestedCredentialData) }
        if extensions != nil { flags.insert(.extensionData) } else { flags.remove(.extensionData) }
        self.rpIDHash = rpIDHash
        self.flags = flags
        self.signCount = signCount
        self.attestedCredentialData = attestedCredentialData
        self.extensions = extensions
    }

    public var bytes: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(37 + (attestedCredentialData.map { 18 + $0.credentialID.count + 80 } ?? 0))
        out.append(contentsOf: rpIDHash)
        out.append(flags.rawValue)
        CBOR.appendBigEndian(UInt64(signCount), count: 4, to: &out)
        if let acd = attestedCredentialData {
            out.append(contentsOf: acd.aaguid)
            CBOR.appendBigEndian(UInt64(acd.credentialID.count), count: 2, to: &out)
            out.append(contentsOf: acd.credentialID)
            acd.publicKey.encode(into: &out)
        }
        extensions?.encode(into: &out)
        return out
    }

    /// Parses authenticator data, refusing anything whose flags and contents disagree.
    public init(bytes: [UInt8]) throws(CBORError) {
        func fail(_ m: String) -> CBORError { CBORError(message: "authenticator data: \(m)", offset: 0) }
        guard bytes.count >= 37 else { throw fail("shorter than 37 bytes") }
        rpIDHash = Array(bytes[0..<32])
        flags = Flags(rawValue: bytes[32])
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        var index = 37
        if flags.contains(.attestedCredentialData) {
            guard bytes.count >= index + 18 else { throw fail("truncated attested credential data") }
            let aaguid = Array(bytes[index..<index + 16])
            let length = Int(bytes[index + 16]) << 8 | Int(bytes[index + 17])
            index += 18
            guard bytes.count >= index + length else { throw fail("truncated credential ID") }
            let credentialID = Array(bytes[index..<index + length])
            index += length
            let (keyCBOR, used) = try CBOR.decodePrefix(bytes[index...])
            index += used
            attestedCredentialData = AttestedCredentialData(aaguid: aaguid, credentialID: credentialID, publicKey: try COSEKey(cbor: keyCBOR))
        } else {
            attestedCredentialData = nil
        }
        if flags.contains(.extensionData) {
            let (ext, used) = try CBOR.decodePrefix(bytes[index...])
            extensions = ext
            index += used
        } else {
            extensions = nil
        }
        guard index == bytes.count else { throw fail("\(bytes.count - index) trailing bytes") }
    }
}

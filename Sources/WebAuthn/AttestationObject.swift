/// The attestation object of a registration (WebAuthn L3 §6.5.4): `fmt`, `attStmt` and `authData`.
public struct AttestationObject: Equatable, Sendable {
    /// The attestation statement formats credemu emits.
    public enum Statement: Equatable, Sendable {
        /// §8.7: `fmt` "none" and an empty `attStmt`.
        case none
        /// §8.2 self attestation: `alg` and `sig` by the credential's own key, no `x5c`.
        case packedSelf(algorithm: COSEAlgorithm, signature: [UInt8])
        /// §8.2 full (basic) attestation: `alg`, `sig` over authenticatorData || clientDataHash by the attestation
        /// key, and `x5c`, the attestation certificate (DER) first, then any intermediates; the root, which the
        /// RP trusts, is left out.
        case packed(algorithm: COSEAlgorithm, signature: [UInt8], x5c: [[UInt8]])
        /// §8.6 FIDO U2F: `sig` over `fidoU2FVerificationData` by the attestation key (ECDSA P-256) and `x5c`, the
        /// one attestation certificate.
        case fidoU2F(signature: [UInt8], x5c: [[UInt8]])
    }

    public var authenticatorData: [UInt8]
    public var statement: Statement

    public init(authenticatorData: [UInt8], statement: Statement) {
        self.authenticatorData = authenticatorData
        self.statement = statement
    }

    public var fmt: String {
        switch statement {
        case .none: return "none"
        case .packedSelf, .packed: return "packed"
        case .fidoU2F: return "fido-u2f"
        }
    }

    public var cbor: CBOR {
        let attStmt: CBOR
        switch statement {
        case .none: attStmt = .map([])
        case let .packedSelf(algorithm, signature):
            attStmt = .map([(.text("alg"), .int(Int64(algorithm.rawValue))), (.text("sig"), .bytes(signature))])
        case let .packed(algorithm, signature, x5c):
            attStmt = .map([(.text("alg"), .int(Int64(algorithm.rawValue))), (.text("sig"), .bytes(signature)),
                            (.text("x5c"), .array(x5c.map { .bytes($0) }))])
        case let .fidoU2F(signature, x5c):
            attStmt = .map([(.text("sig"), .bytes(signature)), (.text("x5c"), .array(x5c.map { .bytes($0) }))])
        }
        return .map([(.text("fmt"), .text(fmt)), (.text("attStmt"), attStmt), (.text("authData"), .bytes(authenticatorData))])
    }

    public var encoded: [UInt8] {
        guard case .none = statement else { return cbor.encoded() }
        // {"fmt": "none", "attStmt": {}, "authData": h'...'}, written as it stands (every registration).
        var out = [UInt8]()
        out.reserveCapacity(30 + authenticatorData.count)
        out.append(contentsOf: [0xA3, 0x63, 0x66, 0x6D, 0x74, 0x64, 0x6E, 0x6F, 0x6E, 0x65,
                                0x67, 0x61, 0x74, 0x74, 0x53, 0x74, 0x6D, 0x74, 0xA0,
                                0x68, 0x61, 0x75, 0x74, 0x68, 0x44, 0x61, 0x74, 0x61])
        CBOR.writeHead(major: 2, argument: UInt64(authenticatorData.count), into: &out)
        out.append(contentsOf: authenticatorData)
        return out
    }

    /// What a FIDO U2F attestation signs (§8.6 verification step 5, from U2F's registration message): 0x00,
    /// rpIdHash, clientDataHash, the credential ID, then the public key as an uncompressed point (0x04 || x || y).
    /// Nil unless the key is P-256, the only key U2F has, and the credential ID fits U2F's one-byte key-handle length.
    public static func fidoU2FVerificationData(rpIDHash: [UInt8], clientDataHash: [UInt8], credentialID: [UInt8],
                                               publicKey: COSEKey) -> [UInt8]? {
        guard case let .ec2P256(x, y) = publicKey, rpIDHash.count == 32, clientDataHash.count == 32,
              credentialID.count <= 255 else { return nil }
        var out: [UInt8] = [0x00]
        out.reserveCapacity(1 + 32 + 32 + credentialID.count + 65)
        out += rpIDHash
        out += clientDataHash
        out += credentialID
        out.append(0x04)
        out += x
        out += y
        return out
    }
}

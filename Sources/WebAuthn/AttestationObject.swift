/// The attestation object of a registration (WebAuthn L3 §6.5.4): `fmt`, `attStmt` and `authData`.
public struct AttestationObject: Equatable, Sendable {
    /// The attestation statement formats credemu emits.
    public enum Statement: Equatable, Sendable {
        /// §8.7: `fmt` "none" and an empty `attStmt`.
        case none
        /// §8.2 self attestation: `alg` and `sig` by the credential's own key, no `x5c`.
        case packedSelf(algorithm: COSEAlgorithm, signature: [UInt8])
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
        case .packedSelf: return "packed"
        }
    }

    public var cbor: CBOR {
        let attStmt: CBOR
        switch statement {
        case .none: attStmt = .map([])
        case let .packedSelf(algorithm, signature):
            attStmt = .map([(.text("alg"), .int(Int64(algorithm.rawValue))), (.text("sig"), .bytes(signature))])
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
}

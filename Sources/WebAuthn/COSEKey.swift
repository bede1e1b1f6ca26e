/// A COSE algorithm identifier credemu can create credentials for (IANA COSE Algorithms registry).
public enum COSEAlgorithm: Int, Sendable, CaseIterable, Codable {
    case es256 = -7
    case edDSA = -8
    case rs256 = -257

    public var name: String {
        switch self {
        case .es256: return "ES256"
        case .edDSA: return "EdDSA"
        case .rs256: return "RS256"
        }
    }

    public init?(name: String) {
        guard let match = COSEAlgorithm.allCases.first(where: { $0.name.lowercased() == name.lowercased() }) else { return nil }
        self = match
    }
}

/// A credential public key in COSE_Key form (RFC 9052 §7, RFC 9053 §7), as carried in attested credential data.
public enum COSEKey: Equatable, Sendable {
    /// EC2 on P-256 with ES256: kty 2, crv 1, 32-byte x and y.
    case ec2P256(x: [UInt8], y: [UInt8])
    /// OKP on Ed25519 with EdDSA: kty 1, crv 6, 32-byte x.
    case okpEd25519(x: [UInt8])
    /// RSA with RS256: kty 3, modulus n and exponent e, big-endian without leading zeros (RFC 8230 §4).
    case rsa(n: [UInt8], e: [UInt8])

    public var algorithm: COSEAlgorithm {
        switch self {
        case .ec2P256: return .es256
        case .okpEd25519: return .edDSA
        case .rsa: return .rs256
        }
    }

    public var cbor: CBOR {
        switch self {
        case let .ec2P256(x, y):
            return .map([(.int(1), .int(2)), (.int(3), .int(-7)), (.int(-1), .int(1)), (.int(-2), .bytes(x)), (.int(-3), .bytes(y))])
        case let .okpEd25519(x):
            return .map([(.int(1), .int(1)), (.int(3), .int(-8)), (.int(-1), .int(6)), (.int(-2), .bytes(x))])
        case let .rsa(n, e):
            return .map([(.int(1), .int(3)), (.int(3), .int(-257)), (.int(-1), .bytes(n)), (.int(-2), .bytes(e))])
        }
    }

    public var encoded: [UInt8] {
        var out = [UInt8]()
        encode(into: &out)
        return out
    }

    /// Appends the canonical CBOR of `cbor`; a P-256 key's fixed layout is written as it stands (every registration).
    public func encode(into out: inout [UInt8]) {
        guard case let .ec2P256(x, y) = self, x.count == 32, y.count == 32 else { return cbor.encode(into: &out) }
        out.reserveCapacity(out.count + 77)
        // {1: 2, 3: -7, -1: 1, -2: h'x', -3: h'y'}
        out.append(contentsOf: [0xA5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20])
        out.append(contentsOf: x)
        out.append(contentsOf: [0x22, 0x58, 0x20])
        out.append(contentsOf: y)
    }

    /// Reads a COSE_Key of one of the three supported kinds.
    public init(cbor: CBOR) throws(CBORError) {
        func fail(_ message: String) -> CBORError { CBORError(message: "COSE key: \(message)", offset: 0) }
        guard let kty = cbor[1]?.intValue, let alg = cbor[3]?.intValue else { throw fail("missing kty or alg") }
        switch (kty, alg) {
        case (2, -7):
            guard cbor[-1]?.intValue == 1, let x = cbor[-2]?.bytesValue, let y = cbor[-3]?.bytesValue, x.count == 32, y.count == 32
            else { throw fail("bad EC2 P-256 parameters") }
            self = .ec2P256(x: x, y: y)
        case (1, -8):
            guard cbor[-1]?.intValue == 6, let x = cbor[-2]?.bytesValue, x.count == 32 else { throw fail("bad OKP Ed25519 parameters") }
            self = .okpEd25519(x: x)
        case (3, -257):
            guard let n = cbor[-1]?.bytesValue, let e = cbor[-2]?.bytesValue, !n.isEmpty, !e.isEmpty else { throw fail("bad RSA parameters") }
            self = .rsa(n: n, e: e)
        default:
            throw fail("unsupported kty \(kty) with alg \(alg)")
        }
    }
}

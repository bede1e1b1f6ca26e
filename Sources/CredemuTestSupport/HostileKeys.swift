import Signing

/// Private keys as an attacker sends them (issue 31), made from real keys, for the tests of every way a key comes in
/// (Signing's import, WebDriver's Add Credential, a fixture).
public enum HostileKeys {
    /// P-256 PKCS#8 in the usual layout (the scalar at 36..<68, the point at 73..<138) with one real key's scalar and
    /// another real key's point: on the curve, but not the scalar's.
    public static func p256WithAnotherKeysPoint() throws -> [UInt8] {
        var mine = try SigningKeys.generate(.es256).pkcs8
        let theirs = try SigningKeys.generate(.es256).pkcs8
        mine.replaceSubrange(73..<138, with: theirs[73..<138])
        return mine
    }

    /// The contents of an RSA PKCS#8's RSAPrivateKey INTEGERs (RFC 8017 A.1.2): version, n, e, d, p, q, dP, dQ, qInv.
    public static func rsaFields(_ pkcs8: [UInt8]) throws -> [[UInt8]] {
        let info = try children(pkcs8[...])[0].content
        let octets = try children(info)[2].content
        return try children(try children(octets)[0].content).map { Array($0.content) }
    }

    /// The RSA PKCS#8 with RSAPrivateKey's fields at `indices` replaced by these magnitudes.
    public static func rsa(_ pkcs8: [UInt8], replacing replacements: [Int: [UInt8]]) throws -> [UInt8] {
        var fields = try rsaFields(pkcs8)
        for (index, magnitude) in replacements { fields[index] = magnitude }
        let algorithm = sequence([0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01, 0x05, 0x00])
        return sequence([0x02, 0x01, 0x00] + algorithm + tagged(0x04, sequence(fields.flatMap(integer))))
    }

    /// A DER element: the tag, the length, the content.
    public static func tagged(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var length: [UInt8] = []
        var n = content.count
        while n > 0 { length.insert(UInt8(n & 0xFF), at: 0); n >>= 8 }
        return [tag] + (content.count < 0x80 ? [UInt8(content.count)] : [0x80 | UInt8(length.count)] + length) + content
    }

    public static func sequence(_ content: [UInt8]) -> [UInt8] { tagged(0x30, content) }

    /// A non-negative DER INTEGER of a big-endian magnitude.
    public static func integer(_ magnitude: [UInt8]) -> [UInt8] {
        var m = Array(magnitude.drop(while: { $0 == 0 }))
        if m.first.map({ $0 & 0x80 != 0 }) ?? true { m.insert(0, at: 0) }
        return tagged(0x02, m)
    }

    struct Malformed: Error {}

    /// The elements of DER content, each its tag and its content.
    static func children(_ der: ArraySlice<UInt8>) throws -> [(tag: UInt8, content: ArraySlice<UInt8>)] {
        var out: [(UInt8, ArraySlice<UInt8>)] = []
        var i = der.startIndex
        while i < der.endIndex {
            guard i + 1 < der.endIndex else { throw Malformed() }
            var length = Int(der[i + 1]), start = i + 2
            if length & 0x80 != 0 {
                let count = length & 0x7F
                guard count <= 4, start + count <= der.endIndex else { throw Malformed() }
                length = der[start..<start + count].reduce(0) { $0 << 8 | Int($1) }
                start += count
            }
            guard start + length <= der.endIndex else { throw Malformed() }
            out.append((der[i], der[start..<start + length]))
            i = start + length
        }
        return out
    }
}

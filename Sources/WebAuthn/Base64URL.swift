/// Strict base64url (RFC 4648 §5) without padding, as WebAuthn's `Base64URLString` uses it.
///
/// Decoding refuses padding, the `+` and `/` alphabet, whitespace, impossible lengths and non-zero trailing
/// bits, so every accepted string has exactly one byte sequence and encodes back to itself.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let reverse: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, char) in alphabet.enumerated() { table[Int(char)] = UInt8(index) }
        return table
    }()

    public static func encode<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        if let encoded = bytes.withContiguousStorageIfAvailable({ encode($0) }) { return encoded }
        return Array(bytes).withUnsafeBufferPointer { encode($0) }
    }

    /// Written straight into the string's storage: one allocation, none for short strings.
    private static func encode(_ input: UnsafeBufferPointer<UInt8>) -> String {
        let length = (input.count * 4 + 2) / 3
        return alphabet.withUnsafeBufferPointer { alphabet in
            String(unsafeUninitializedCapacity: length) { out in
                var index = 0, o = 0
                while index + 3 <= input.count {
                    let n = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                    out[o] = alphabet[Int(n >> 18 & 63)]
                    out[o + 1] = alphabet[Int(n >> 12 & 63)]
                    out[o + 2] = alphabet[Int(n >> 6 & 63)]
                    out[o + 3] = alphabet[Int(n & 63)]
                    index += 3
                    o += 4
                }
                let rest = input.count - index
                if rest == 1 {
                    let n = UInt32(input[index]) << 16
                    out[o] = alphabet[Int(n >> 18 & 63)]
                    out[o + 1] = alphabet[Int(n >> 12 & 63)]
                    o += 2
                } else if rest == 2 {
                    let n = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
                    out[o] = alphabet[Int(n >> 18 & 63)]
                    out[o + 1] = alphabet[Int(n >> 12 & 63)]
                    out[o + 2] = alphabet[Int(n >> 6 & 63)]
                    o += 3
                }
                return o
            }
        }
    }

    /// Decodes, or returns nil for anything that is not canonical unpadded base64url.
    public static func decode(_ string: String) -> [UInt8]? {
        var string = string
        return string.withUTF8 { decode($0) }
    }

    private static func decode(_ chars: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        if chars.count % 4 == 1 { return nil }
        var out = [UInt8]()
        out.reserveCapacity(chars.count * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        let ok = reverse.withUnsafeBufferPointer { reverse in
            for char in chars {
                let value = reverse[Int(char)]
                if value == 0xFF { return false }
                buffer = buffer << 6 | UInt32(value)
                bits += 6
                if bits >= 8 {
                    bits -= 8
                    out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
                }
            }
            return true
        }
        guard ok else { return nil }
        // Leftover bits must be zero, or two strings would decode to the same bytes.
        if bits > 0 && buffer & ((1 << UInt32(bits)) - 1) != 0 { return nil }
        return out
    }

    /// Decodes a named field, or throws the `TypeError` a browser raises for it.
    public static func decode(_ string: String, field: String) throws(WebAuthnError) -> [UInt8] {
        guard let bytes = decode(string) else {
            throw .typeError("Invalid base64url string for \(field).")
        }
        return bytes
    }
}

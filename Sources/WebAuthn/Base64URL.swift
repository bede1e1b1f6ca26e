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

    /// Four characters to three bytes at a time, written straight into the array's storage (appending a byte at
    /// a time cost about 15 instructions a byte: a challenge and a credential ID a ceremony).
    private static func decode(_ chars: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let rest = chars.count % 4
        if rest == 1 { return nil }
        var ok = true
        let out = reverse.withUnsafeBufferPointer { reverse in
            [UInt8](unsafeUninitializedCapacity: chars.count / 4 * 3 + max(rest - 1, 0)) { out, count in
                var i = 0, o = 0
                while i + 4 <= chars.count {
                    let a = reverse[Int(chars[i])], b = reverse[Int(chars[i + 1])], c = reverse[Int(chars[i + 2])], d = reverse[Int(chars[i + 3])]
                    // 0xFF marks a character outside the alphabet: any of the four sets a high bit.
                    if (a | b | c | d) & 0xC0 != 0 { ok = false; break }
                    let n = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    out[o] = UInt8(truncatingIfNeeded: n >> 16)
                    out[o + 1] = UInt8(truncatingIfNeeded: n >> 8)
                    out[o + 2] = UInt8(truncatingIfNeeded: n)
                    i += 4
                    o += 3
                }
                if ok && rest > 0 {
                    let a = reverse[Int(chars[i])], b = reverse[Int(chars[i + 1])], c = rest == 3 ? reverse[Int(chars[i + 2])] : 0
                    // Leftover bits must be zero, or two strings would decode to the same bytes.
                    if (a | b | c) & 0xC0 != 0 || (rest == 2 ? b & 0x0F : c & 0x03) != 0 {
                        ok = false
                    } else {
                        let n = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6
                        out[o] = UInt8(truncatingIfNeeded: n >> 16)
                        o += 1
                        if rest == 3 {
                            out[o] = UInt8(truncatingIfNeeded: n >> 8)
                            o += 1
                        }
                    }
                }
                count = ok ? o : 0
            }
        }
        return ok ? out : nil
    }

    /// Decodes a named field, or throws the `TypeError` a browser raises for it.
    public static func decode(_ string: String, field: String) throws(WebAuthnError) -> [UInt8] {
        guard let bytes = decode(string) else {
            throw .typeError("Invalid base64url string for \(field).")
        }
        return bytes
    }
}

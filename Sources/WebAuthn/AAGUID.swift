/// AAGUIDs as lower-case UUID strings.
public enum AAGUID {
    public static func format(_ bytes: [UInt8]) -> String {
        let hex = Hex.encode(bytes)
        let parts = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)]
        return parts.joined(separator: "-")
    }

    /// 16 bytes from "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (ASCII hex digits, either case); nil for anything else.
    public static func parse(_ s: String) -> [UInt8]? {
        let utf8 = Array(s.utf8)
        guard utf8.count == 36, [8, 13, 18, 23].allSatisfy({ utf8[$0] == UInt8(ascii: "-") }) else { return nil }
        return Hex.decode(String(decoding: utf8.filter { $0 != UInt8(ascii: "-") }, as: UTF8.self)).flatMap { $0.count == 16 ? $0 : nil }
    }
}

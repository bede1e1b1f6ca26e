/// A CBOR data item (RFC 8949). Maps keep their order as read; the encoder sorts them canonically.
public indirect enum CBOR: Equatable, Sendable {
    case unsigned(UInt64)
    /// A negative integer `-1 - n`, stored as `n` so the whole CBOR range fits.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBOR])
    case map([(CBOR, CBOR)])
    case tagged(UInt64, CBOR)
    case simple(UInt8)
    case bool(Bool)
    case null
    case undefined
    case float(Double)

    public static func == (lhs: CBOR, rhs: CBOR) -> Bool {
        switch (lhs, rhs) {
        case let (.unsigned(a), .unsigned(b)), let (.negative(a), .negative(b)): return a == b
        case let (.bytes(a), .bytes(b)): return a == b
        case let (.text(a), .text(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.map(a), .map(b)): return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case let (.tagged(t1, v1), .tagged(t2, v2)): return t1 == t2 && v1 == v2
        case let (.simple(a), .simple(b)): return a == b
        case let (.bool(a), .bool(b)): return a == b
        case (.null, .null), (.undefined, .undefined): return true
        case let (.float(a), .float(b)): return a == b || (a.isNaN && b.isNaN)
        default: return false
        }
    }

    /// An integer item from a signed value.
    public static func int(_ value: Int64) -> CBOR {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-1 - value))
    }

    /// The value as a signed integer, when it is an integer that fits.
    public var intValue: Int64? {
        switch self {
        case .unsigned(let n): return n <= UInt64(Int64.max) ? Int64(n) : nil
        case .negative(let n): return n <= UInt64(Int64.max) ? -1 - Int64(n) : nil
        default: return nil
        }
    }

    public var bytesValue: [UInt8]? { if case .bytes(let b) = self { return b } else { return nil } }
    public var textValue: String? { if case .text(let t) = self { return t } else { return nil } }
    public var mapValue: [(CBOR, CBOR)]? { if case .map(let m) = self { return m } else { return nil } }

    /// The value stored under `key` in a map.
    public subscript(key: CBOR) -> CBOR? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first(where: { $0.0 == key })?.1
    }

    public subscript(key: String) -> CBOR? { self[.text(key)] }
    public subscript(key: Int64) -> CBOR? { self[.int(key)] }
}

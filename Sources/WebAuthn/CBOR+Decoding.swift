/// Why CBOR input was refused; the offset is where reading stopped.
public struct CBORError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public var offset: Int
    public var description: String { "invalid CBOR at byte \(offset): \(message)" }
}

extension CBOR {
    /// Limits and strictness for reading untrusted CBOR.
    public struct DecodingOptions: Sendable {
        /// Deepest nesting of arrays, maps and tags.
        public var maxDepth: Int
        /// Largest input accepted, in bytes.
        public var maxInputSize: Int
        /// Accept indefinite-length strings, arrays and maps (RFC 8949 §3.2); CTAP2 forbids them.
        public var allowIndefiniteLength: Bool
        /// Refuse integers and lengths not in their shortest form, as CTAP2 canonical CBOR requires.
        public var requireShortestForm: Bool

        public init(maxDepth: Int = 16, maxInputSize: Int = 1 << 20, allowIndefiniteLength: Bool = false,
                    requireShortestForm: Bool = true) {
            self.maxDepth = maxDepth
            self.maxInputSize = maxInputSize
            self.allowIndefiniteLength = allowIndefiniteLength
            self.requireShortestForm = requireShortestForm
        }

        /// CTAP2 canonical, as used for everything credemu reads by default.
        public static let strict = DecodingOptions()
        /// Any well-formed RFC 8949 item (used for test vectors that are not in preferred form).
        public static let lenient = DecodingOptions(maxDepth: 64, allowIndefiniteLength: true, requireShortestForm: false)
    }

    /// Decodes exactly one item filling all of `bytes`.
    public static func decode(_ bytes: [UInt8], options: DecodingOptions = .strict) throws(CBORError) -> CBOR {
        var reader = CBORReader(bytes: bytes, options: options)
        guard bytes.count <= options.maxInputSize else {
            throw CBORError(message: "input of \(bytes.count) bytes exceeds the \(options.maxInputSize)-byte limit", offset: 0)
        }
        let item = try reader.read(depth: 0)
        guard reader.index == bytes.count else { throw reader.error("\(bytes.count - reader.index) trailing bytes") }
        return item
    }

    /// Decodes one item from the start of `bytes` and says how many bytes it took (for authenticator data,
    /// where the COSE key is followed by extensions).
    public static func decodePrefix(_ bytes: ArraySlice<UInt8>, options: DecodingOptions = .strict) throws(CBORError) -> (CBOR, Int) {
        var reader = CBORReader(bytes: Array(bytes), options: options)
        let item = try reader.read(depth: 0)
        return (item, reader.index)
    }
}

private struct CBORReader {
    let bytes: [UInt8]
    let options: CBOR.DecodingOptions
    var index = 0

    init(bytes: [UInt8], options: CBOR.DecodingOptions) {
        self.bytes = bytes
        self.options = options
    }

    func error(_ message: String) -> CBORError { CBORError(message: message, offset: index) }

    mutating func byte() throws(CBORError) -> UInt8 {
        guard index < bytes.count else { throw error("unexpected end of input") }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func take(_ count: UInt64) throws(CBORError) -> [UInt8] {
        guard count <= UInt64(bytes.count - index) else { throw error("length \(count) runs past the end of input") }
        defer { index += Int(count) }
        return Array(bytes[index..<index + Int(count)])
    }

    mutating func uint(_ count: Int) throws(CBORError) -> UInt64 {
        var value: UInt64 = 0
        for b in try take(UInt64(count)) { value = value << 8 | UInt64(b) }
        return value
    }

    /// Reads the argument for additional info `info`; nil means indefinite length.
    mutating func argument(_ info: UInt8) throws(CBORError) -> UInt64? {
        let value: UInt64
        switch info {
        case 0..<24: return UInt64(info)
        case 24:
            value = try uint(1)
            if options.requireShortestForm && value < 24 { throw error("integer not in shortest form") }
        case 25:
            value = try uint(2)
            if options.requireShortestForm && value <= 0xFF { throw error("integer not in shortest form") }
        case 26:
            value = try uint(4)
            if options.requireShortestForm && value <= 0xFFFF { throw error("integer not in shortest form") }
        case 27:
            value = try uint(8)
            if options.requireShortestForm && value <= 0xFFFF_FFFF { throw error("integer not in shortest form") }
        case 31: return nil
        default: throw error("reserved additional information \(info)")
        }
        return value
    }

    mutating func read(depth: Int) throws(CBORError) -> CBOR {
        let start = index
        let initial = try byte()
        let major = initial >> 5
        let info = initial & 0x1F
        if major == 7 { return try readSimple(info) }
        let arg = try argument(info)
        if arg == nil {
            guard options.allowIndefiniteLength else { index = start; throw error("indefinite-length item not allowed") }
            guard [2, 3, 4, 5].contains(major) else { index = start; throw error("indefinite length on major type \(major)") }
        }
        switch major {
        case 0: return .unsigned(arg!)
        case 1: return .negative(arg!)
        case 2, 3:
            var data = [UInt8]()
            if let length = arg {
                data = try take(length)
            } else {
                while true {
                    guard index < bytes.count else { throw error("unterminated indefinite-length string") }
                    if bytes[index] == 0xFF { index += 1; break }
                    let chunkHead = try byte()
                    guard chunkHead >> 5 == major, let length = try argument(chunkHead & 0x1F) else {
                        throw error("bad chunk in indefinite-length string")
                    }
                    data += try take(length)
                }
            }
            if major == 2 { return .bytes(data) }
            guard let text = String(validating: data, as: UTF8.self) else { throw error("text string is not valid UTF-8") }
            return .text(text)
        case 4, 5:
            guard depth < options.maxDepth else { throw error("nested deeper than \(options.maxDepth) levels") }
            if major == 4 {
                var items: [CBOR] = []
                if let count = arg {
                    guard count <= UInt64(bytes.count - index) else { throw error("array of \(count) items cannot fit") }
                    for _ in 0..<count { items.append(try read(depth: depth + 1)) }
                } else {
                    while true {
                        guard index < bytes.count else { throw error("unterminated indefinite-length array") }
                        if bytes[index] == 0xFF { index += 1; break }
                        items.append(try read(depth: depth + 1))
                    }
                }
                return .array(items)
            }
            var pairs: [(CBOR, CBOR)] = []
            func add(_ key: CBOR, _ value: CBOR, at offset: Int) throws(CBORError) {
                if pairs.contains(where: { $0.0 == key }) { throw CBORError(message: "duplicate map key", offset: offset) }
                pairs.append((key, value))
            }
            if let count = arg {
                guard count <= UInt64(bytes.count - index) / 2 else { throw error("map of \(count) pairs cannot fit") }
                for _ in 0..<count {
                    let at = index
                    let key = try read(depth: depth + 1)
                    try add(key, try read(depth: depth + 1), at: at)
                }
            } else {
                while true {
                    guard index < bytes.count else { throw error("unterminated indefinite-length map") }
                    if bytes[index] == 0xFF { index += 1; break }
                    let at = index
                    let key = try read(depth: depth + 1)
                    try add(key, try read(depth: depth + 1), at: at)
                }
            }
            return .map(pairs)
        default:
            guard depth < options.maxDepth else { throw error("nested deeper than \(options.maxDepth) levels") }
            return .tagged(arg!, try read(depth: depth + 1))
        }
    }

    mutating func readSimple(_ info: UInt8) throws(CBORError) -> CBOR {
        switch info {
        case 20: return .bool(false)
        case 21: return .bool(true)
        case 22: return .null
        case 23: return .undefined
        case 0..<20: return .simple(info)
        case 24:
            let v = try byte()
            guard v >= 32 else { throw error("simple value \(v) in two-byte form") }
            return .simple(v)
        case 25:
            let bits = UInt16(try uint(2))
            return .float(Double(Float16(bitPattern: bits)))
        case 26:
            let bits = UInt32(try uint(4))
            return .float(Double(Float(bitPattern: bits)))
        case 27:
            return .float(Double(bitPattern: try uint(8)))
        case 31: throw error("unexpected break")
        default: throw error("reserved simple value encoding \(info)")
        }
    }
}

/// A JSON document with its object members kept in order, so output is byte-stable.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.number(a), .number(b)): return a == b
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// The member named `key` of an object (the last one, as JavaScript would keep it), or nil.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.last(where: { $0.0 == key })?.1
    }

    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    public var numberValue: Double? { if case .number(let n) = self { return n } else { return nil } }
    /// The number as an integer in `range`; nil for anything else, a fraction or a number outside the range. The
    /// checks come before any conversion, so no number (1e300, -1e300) can trap.
    public func integerValue(in range: ClosedRange<Int64>) -> Int64? {
        guard case .number(let n) = self, n.isFinite, n.rounded(.towardZero) == n,
              n >= Double(range.lowerBound), n <= Double(range.upperBound),
              // Double(Int64.max) rounds up to 2^63, which the comparison lets through; `exactly` refuses it.
              let integer = Int64(exactly: n), range.contains(integer) else { return nil }
        return integer
    }
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a } else { return nil } }
    public var objectValue: [(String, JSONValue)]? { if case .object(let o) = self { return o } else { return nil } }
    public var isNull: Bool { if case .null = self { return true } else { return false } }

    /// The JavaScript type name, for error messages.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .number: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }

    /// Returns a copy of an object with `key` set (replaced in place, or appended).
    public func setting(_ key: String, _ value: JSONValue) -> JSONValue {
        guard case .object(var members) = self else { return self }
        if let index = members.firstIndex(where: { $0.0 == key }) {
            members[index].1 = value
        } else {
            members.append((key, value))
        }
        return .object(members)
    }
}

// MARK: - Parsing

/// Where each top-level member's value lies in a text `JSONValue.parseWithMemberSpans` read, in the order written.
/// A list, not a dictionary: a message has a handful of members, and hashing each name cost more than the search.
public struct JSONMemberSpans: Sendable {
    var spans: [(name: String, range: Range<Int>)] = []

    /// The span of the last member named `name`, the one `JSONValue`'s subscript reads; nil for none.
    public subscript(name: String) -> Range<Int>? { spans.last { $0.name == name }?.range }
    public var names: Set<String> { Set(spans.map(\.name)) }
    public var isEmpty: Bool { spans.isEmpty }
}

/// Why a JSON text could not be read; the offset is in UTF-8 bytes.
public struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public var offset: Int
    public var description: String { "invalid JSON at byte \(offset): \(message)" }
}

extension JSONValue {
    /// Parses RFC 8259 JSON strictly: one value, no trailing commas or comments, at most `maxDepth` levels.
    public static func parse(_ text: String, maxDepth: Int = 64) throws(JSONParseError) -> JSONValue {
        var text = text
        return try text.withUTF8 { parse(buffer: $0, maxDepth: maxDepth) }.get()
    }

    public static func parse(_ bytes: [UInt8], maxDepth: Int = 64) throws(JSONParseError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { parse(buffer: $0, maxDepth: maxDepth) }.get()
    }

    /// Parses `bytes` as `parse` does, and says where the value of each member of a top-level object lies in
    /// them (the last member of a name, as the subscript reads it; none for a value that is not an object): for a
    /// reader that hands one member on as it was written, parsed and as bytes, without serializing it again.
    public static func parseWithMemberSpans(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = 64) throws(JSONParseError) -> (JSONValue, JSONMemberSpans) {
        try parse(buffer: bytes, maxDepth: maxDepth, spans: true).get()
    }

    /// The JSON string whose opening quote is at `start` in `bytes`, read as `parse` reads a string (its escapes,
    /// its UTF-8 checked), and the index just past its closing quote: for a reader that knows a message's shape
    /// and takes one string out of it without making a tree of the rest (`DevToolsChannel`'s binding calls).
    public static func string(in bytes: UnsafeBufferPointer<UInt8>, at start: Int) throws(JSONParseError) -> (String, end: Int) {
        var parser = JSONParser(bytes: bytes, maxDepth: 0)
        parser.index = start
        guard start < bytes.count, bytes[start] == UInt8(ascii: "\"") else { throw parser.error("expected a string") }
        let text = try parser.parseString()
        return (text, parser.index)
    }

    /// Parses in place: the text is not copied, and reads of a buffer pointer are not bounds-checked twice.
    private static func parse(buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int) -> Result<JSONValue, JSONParseError> {
        parse(buffer: buffer, maxDepth: maxDepth, spans: false).map(\.0)
    }

    private static func parse(buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int, spans: Bool) -> Result<(JSONValue, JSONMemberSpans), JSONParseError> {
        Result { () throws(JSONParseError) in
            var parser = JSONParser(bytes: buffer, maxDepth: maxDepth)
            if spans {
                parser.spans = JSONMemberSpans()
                parser.spans!.spans.reserveCapacity(4)
            }
            parser.skipWhitespace()
            let value = try parser.parseValue(depth: 0)
            parser.skipWhitespace()
            if parser.index != buffer.count { throw parser.error("unexpected data after the JSON value") }
            return (value, parser.spans ?? JSONMemberSpans())
        }
    }
}

/// Reads `bytes` only while the buffer is valid (inside `JSONValue.parse`); every read is checked against `count`.
private struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var index = 0
    /// Where each top-level object member's value lies, when asked for (`parseWithMemberSpans`).
    var spans: JSONMemberSpans?

    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    func error(_ message: String) -> JSONParseError { JSONParseError(message: message, offset: index) }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func expect(_ literal: String) throws(JSONParseError) {
        for byte in literal.utf8 {
            guard index < bytes.count, bytes[index] == byte else { throw error("expected '\(literal)'") }
            index += 1
        }
    }

    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard index < bytes.count else { throw error("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            guard depth < maxDepth else { throw error("nested deeper than \(maxDepth) levels") }
            return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["):
            guard depth < maxDepth else { throw error("nested deeper than \(maxDepth) levels") }
            return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try expect("false"); return .bool(false)
        case UInt8(ascii: "n"): try expect("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw error("unexpected character")
        }
    }

    mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        index += 1
        var members: [(String, JSONValue)] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
        // Room for the members most objects have: grown once where appending from empty grew three times.
        members.reserveCapacity(4)
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a member name") }
            let key = try parseString()
            skipWhitespace()
            try expect(":")
            skipWhitespace()
            let start = index
            members.append((key, try parseValue(depth: depth)))
            if depth == 1 && spans != nil { spans!.spans.append((key, start..<index)) }
            skipWhitespace()
            guard index < bytes.count else { throw error("unterminated object") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            throw error("expected ',' or '}'")
        }
    }

    mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        index += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
        items.reserveCapacity(4)
        while true {
            skipWhitespace()
            items.append(try parseValue(depth: depth))
            skipWhitespace()
            guard index < bytes.count else { throw error("unterminated array") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
            throw error("expected ',' or ']'")
        }
    }

    mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[index]
            let digit: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw error("bad hex digit in \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    /// The scalar of a `\\u` escape whose four digits begin at `index`, a surrogate pair's second escape read too.
    mutating func parseEscapedScalar() throws(JSONParseError) -> Unicode.Scalar {
        var scalar = try parseHex4()
        if (0xD800...0xDBFF).contains(scalar) {
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else { throw error("lone surrogate in string") }
            index += 2
            let low = try parseHex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw error("lone surrogate in string") }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(scalar) {
            throw error("lone surrogate in string")
        }
        guard let u = Unicode.Scalar(scalar) else { throw error("invalid code point") }
        return u
    }

    mutating func parseString() throws(JSONParseError) -> String {
        index += 1
        // Most strings have no escapes: find the closing quote and take the bytes as they are.
        var end = index
        var ascii = true
        // Eight bytes at a time up to the first that may end the run (a quote, a backslash, a control character).
        while end + 8 <= bytes.count {
            let word = UnsafeRawPointer(bytes.baseAddress! + end).loadUnaligned(as: UInt64.self)
            if JSONValue.mayNeedEscape(word) { break }
            if word & 0x8080_8080_8080_8080 != 0 { ascii = false }
            end += 8
        }
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20 {
            if bytes[end] >= 0x80 { ascii = false }
            end += 1
        }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            // ASCII is valid UTF-8 as it stands: only other text needs validating.
            let s: String
            if ascii {
                s = String(decoding: bytes[index..<end], as: UTF8.self)
            } else {
                guard let valid = String(validating: bytes[index..<end], as: UTF8.self) else { throw error("string is not valid UTF-8") }
                s = valid
            }
            index = end + 1
            return s
        }
        // Escapes (a binding's payload is JSON in a JSON string, a quote every few bytes): the closing quote
        // first, then one pass that writes through a pointer into a buffer of the escaped length (unescaping never
        // lengthens a string). Copying the runs between escapes one `append` each cost about 15 instructions a byte.
        var close = end
        while true {
            close = JSONValue.quoteOrBackslash(bytes, from: close)
            guard close < bytes.count else { index = bytes.count; throw error("unterminated string") }
            if bytes[close] == UInt8(ascii: "\"") { break }
            close += 2
        }
        var failure: JSONParseError?
        let out = [UInt8](unsafeUninitializedCapacity: close - index) { buffer, count in
            let target = buffer.baseAddress!, source = bytes.baseAddress!
            var o = 0, i = index
            while i < close {
                let c = source[i]
                if c != UInt8(ascii: "\\") {
                    if c < 0x20 { index = i; failure = error("control character in string"); break }
                    target[o] = c
                    o += 1
                    i += 1
                    continue
                }
                let e = source[i + 1]
                i += 2
                switch e {
                case UInt8(ascii: "\""): target[o] = 0x22
                case UInt8(ascii: "\\"): target[o] = 0x5C
                case UInt8(ascii: "/"): target[o] = 0x2F
                case UInt8(ascii: "b"): target[o] = 0x08
                case UInt8(ascii: "f"): target[o] = 0x0C
                case UInt8(ascii: "n"): target[o] = 0x0A
                case UInt8(ascii: "r"): target[o] = 0x0D
                case UInt8(ascii: "t"): target[o] = 0x09
                case UInt8(ascii: "u"):
                    index = i
                    do throws(JSONParseError) {
                        for unit in UTF8.encode(try parseEscapedScalar())! {
                            target[o] = unit
                            o += 1
                        }
                        i = index
                        continue
                    } catch {
                        failure = error
                    }
                default:
                    index = i
                    failure = error("unknown escape")
                }
                if failure != nil { break }
                o += 1
            }
            if failure == nil { index = close + 1 }
            count = o
        }
        if let failure { throw failure }
        guard let s = String(validating: out, as: UTF8.self) else { throw error("string is not valid UTF-8") }
        return s
    }

    mutating func parseNumber() throws(JSONParseError) -> Double {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        func digits(_ p: inout JSONParser) -> Int {
            let s = p.index
            while p.index < p.bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(p.bytes[p.index]) { p.index += 1 }
            return p.index - s
        }
        guard index < bytes.count else { throw error("truncated number") }
        if bytes[index] == UInt8(ascii: "0") { index += 1 } else if digits(&self) == 0 { throw error("bad number") }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            if digits(&self) == 0 { throw error("bad number") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            if digits(&self) == 0 { throw error("bad number") }
        }
        guard let value = Double(String(decoding: bytes[start..<index], as: UTF8.self)), value.isFinite else {
            throw error("number out of range")
        }
        return value
    }
}

// MARK: - Serializing

extension JSONValue {
    /// Compact JSON: members in stored order, `/` unescaped, integers without a fraction.
    public func serialized() -> String {
        String(decoding: serializedBytes(), as: UTF8.self)
    }

    /// `serialized()` as its UTF-8 bytes, for a body or a frame: no `String` made and read back (which checked
    /// the bytes' UTF-8 again, 1-2% of a served registration's time).
    public func serializedBytes() -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(1024)  // a ceremony's response is 1-2 KB: grown once, not three times
        write(to: &out, indent: nil, level: 0)
        return out
    }

    /// Pretty JSON with two-space indentation and a trailing newline: the form of fixtures and CLI output.
    public func pretty() -> String {
        var out = [UInt8]()
        write(to: &out, indent: 2, level: 0)
        out.append(0x0A)
        return String(decoding: out, as: UTF8.self)
    }

    private static func newline(_ out: inout [UInt8], _ indent: Int?, _ level: Int) {
        guard let indent else { return }
        out.append(0x0A)
        out.append(contentsOf: repeatElement(0x20, count: indent * level))
    }

    private func write(to out: inout [UInt8], indent: Int?, level: Int) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let n): out.append(contentsOf: JSONValue.format(n).utf8)
        case .string(let s): JSONValue.writeString(s, to: &out)
        case .array(let items):
            if items.isEmpty { out.append(contentsOf: "[]".utf8); return }
            out.append(0x5B)
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(0x2C) }
                JSONValue.newline(&out, indent, level + 1)
                item.write(to: &out, indent: indent, level: level + 1)
            }
            JSONValue.newline(&out, indent, level)
            out.append(0x5D)
        case .object(let members):
            if members.isEmpty { out.append(contentsOf: "{}".utf8); return }
            out.append(0x7B)
            for (i, (key, value)) in members.enumerated() {
                if i > 0 { out.append(0x2C) }
                JSONValue.newline(&out, indent, level + 1)
                JSONValue.writeString(key, to: &out)
                out.append(0x3A)
                if indent != nil { out.append(0x20) }
                value.write(to: &out, indent: indent, level: level + 1)
            }
            JSONValue.newline(&out, indent, level)
            out.append(0x7D)
        }
    }

    static func format(_ n: Double) -> String {
        if n == n.rounded(), abs(n) < 9.007_199_254_740_992e15 { return String(Int64(n)) }
        return String(n)
    }

    static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(0x22)
        var s = s
        s.withUTF8 { bytes in
            // Most strings need no escape: copied whole.
            let i = plainRun(bytes, from: 0)
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[..<i]))
            if i < bytes.count { writeEscaped(UnsafeBufferPointer(rebasing: bytes[i...]), to: &out) }
        }
        out.append(0x22)
    }

    /// Appends UTF-8 bytes as the inside of a JSON string (no quotes around them): `"`, `\\` and control characters
    /// escaped, the rest copied. For a caller that builds a string member from bytes it has, as `DevToolsChannel`
    /// does its reply's expression (a JSON reply, a quote every few bytes). Written through a pointer: eight bytes
    /// that need no escape go as one word, the others a byte at a time (about 5 instructions a byte; runs copied
    /// between escapes one `append` each cost 12).
    public static func writeEscaped(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        guard !bytes.isEmpty else { return }
        let escaped = [UInt8](unsafeUninitializedCapacity: bytes.count * 6) { buffer, count in
            let target = UnsafeMutableRawPointer(buffer.baseAddress!)
            var o = 0, i = 0
            while i < bytes.count {
                var stop = bytes.count
                if i + 8 <= bytes.count {
                    let word = UnsafeRawPointer(bytes.baseAddress! + i).loadUnaligned(as: UInt64.self)
                    if !mayNeedEscape(word) {
                        target.storeBytes(of: word, toByteOffset: o, as: UInt64.self)
                        o += 8
                        i += 8
                        continue
                    }
                    stop = i + 8
                }
                while i < stop {
                    let byte = bytes[i]
                    i += 1
                    guard byte < 0x20 || byte == 0x22 || byte == 0x5C else {
                        buffer[o] = byte
                        o += 1
                        continue
                    }
                    buffer[o] = 0x5C
                    switch byte {
                    case 0x22, 0x5C: buffer[o + 1] = byte
                    case 0x0A: buffer[o + 1] = 0x6E
                    case 0x0D: buffer[o + 1] = 0x72
                    case 0x09: buffer[o + 1] = 0x74
                    case 0x08: buffer[o + 1] = 0x62
                    case 0x0C: buffer[o + 1] = 0x66
                    default:
                        buffer[o + 1] = 0x75
                        buffer[o + 2] = 0x30
                        buffer[o + 3] = 0x30
                        buffer[o + 4] = hexDigit(byte >> 4)
                        buffer[o + 5] = hexDigit(byte & 0xF)
                        o += 4
                    }
                    o += 2
                }
            }
            count = o
        }
        out.append(contentsOf: escaped)
    }

    /// The index of the first byte from `start` on that a JSON string escapes (a control character, `"` or `\\`),
    /// or `bytes.count`.
    @inline(__always)
    static func plainRun(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        firstByte(bytes, from: start, wordMayHold: mayNeedEscape) { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }
    }

    /// The index of the first `"` or `\\` from `start` on, or `bytes.count`.
    @inline(__always)
    static func quoteOrBackslash(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        firstByte(bytes, from: start, wordMayHold: holdsQuoteOrBackslash) { $0 == 0x22 || $0 == 0x5C }
    }

    /// The index of the first byte from `start` on that `isWanted`, or `bytes.count`: eight bytes at a time while
    /// `wordMayHold` says a word has none, then one by one.
    @inline(__always)
    private static func firstByte(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, wordMayHold: (UInt64) -> Bool,
                                  _ isWanted: (UInt8) -> Bool) -> Int {
        var i = start
        while i + 8 <= bytes.count, !wordMayHold(UnsafeRawPointer(bytes.baseAddress! + i).loadUnaligned(as: UInt64.self)) { i += 8 }
        while i < bytes.count, !isWanted(bytes[i]) { i += 1 }
        return i
    }

    @inline(__always)
    private static func hexDigit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 0x30 + nibble : 0x57 + nibble }

    /// Whether any of the eight bytes of `word` is a control character, `"` or `\` (exact: the tests for a zero
    /// byte and for a byte under 0x20 have no false answer for the word as a whole; bytes of 0x80 and over pass).
    @inline(__always)
    static func mayNeedEscape(_ word: UInt64) -> Bool {
        let control = (word &- ones &* 0x20) & ~word & highs != 0
        return control || holdsQuoteOrBackslash(word)
    }

    /// Whether any of the eight bytes of `word` is `"` or `\\` (exact).
    @inline(__always)
    static func holdsQuoteOrBackslash(_ word: UInt64) -> Bool {
        hasZeroByte(word ^ (ones &* 0x22)) || hasZeroByte(word ^ (ones &* 0x5C))
    }

    @inline(__always)
    private static func hasZeroByte(_ v: UInt64) -> Bool { (v &- ones) & ~v & highs != 0 }

    private static var ones: UInt64 { 0x0101_0101_0101_0101 }
    private static var highs: UInt64 { 0x8080_8080_8080_8080 }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
}

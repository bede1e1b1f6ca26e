extension CBOR {
    /// Encodes in the CTAP2 canonical form (CTAP 2.1 §8): shortest integer and length heads, definite
    /// lengths only, map keys sorted by their encoded bytes (shorter first, then bytewise), and floats in
    /// the shortest of half, single or double precision that keeps the value (RFC 8949 §4.2.2).
    public func encoded() -> [UInt8] {
        var out = [UInt8]()
        encode(into: &out)
        return out
    }

    public func encode(into out: inout [UInt8]) {
        switch self {
        case .unsigned(let n): CBOR.writeHead(major: 0, argument: n, into: &out)
        case .negative(let n): CBOR.writeHead(major: 1, argument: n, into: &out)
        case .bytes(let b):
            CBOR.writeHead(major: 2, argument: UInt64(b.count), into: &out)
            out.append(contentsOf: b)
        case .text(let t):
            CBOR.writeHead(major: 3, argument: UInt64(t.utf8.count), into: &out)
            out.append(contentsOf: t.utf8)
        case .array(let items):
            CBOR.writeHead(major: 4, argument: UInt64(items.count), into: &out)
            for item in items { item.encode(into: &out) }
        case .map(let pairs):
            CBOR.writeHead(major: 5, argument: UInt64(pairs.count), into: &out)
            // Maps built in canonical key order (as ours are) are written as they come; others are sorted.
            let start = out.count
            var previousKey = start..<start
            var inOrder = true
            for (key, value) in pairs {
                let keyStart = out.count
                key.encode(into: &out)
                let keyRange = keyStart..<out.count
                if !previousKey.isEmpty && !CBOR.precedes(out[previousKey], out[keyRange]) {
                    inOrder = false
                    break
                }
                previousKey = keyRange
                value.encode(into: &out)
            }
            if inOrder { return }
            out.removeSubrange(start...)
            let encodedPairs = pairs.map { ($0.0.encoded(), $0.1) }
            let sorted = encodedPairs.sorted { a, b in CBOR.precedes(a.0[...], b.0[...]) }
            for (key, value) in sorted {
                out.append(contentsOf: key)
                value.encode(into: &out)
            }
        case .tagged(let tag, let value):
            CBOR.writeHead(major: 6, argument: tag, into: &out)
            value.encode(into: &out)
        case .simple(let v):
            if v < 24 { out.append(0xE0 | v) } else { out.append(contentsOf: [0xF8, v]) }
        case .bool(let b): out.append(b ? 0xF5 : 0xF4)
        case .null: out.append(0xF6)
        case .undefined: out.append(0xF7)
        case .float(let d): CBOR.writeFloat(d, into: &out)
        }
    }

    /// Canonical key order: shorter encoding first, then bytewise.
    static func precedes(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Bool {
        a.count != b.count ? a.count < b.count : a.lexicographicallyPrecedes(b)
    }

    static func writeHead(major: UInt8, argument: UInt64, into out: inout [UInt8]) {
        let m = major << 5
        switch argument {
        case 0..<24: out.append(m | UInt8(argument))
        case 24...0xFF: out.append(contentsOf: [m | 24, UInt8(argument)])
        case 0x100...0xFFFF:
            out.append(m | 25)
            appendBigEndian(argument, count: 2, to: &out)
        case 0x1_0000...0xFFFF_FFFF:
            out.append(m | 26)
            appendBigEndian(argument, count: 4, to: &out)
        default:
            out.append(m | 27)
            appendBigEndian(argument, count: 8, to: &out)
        }
    }

    /// Appends the low `count` bytes of `value`, most significant first.
    static func appendBigEndian(_ value: UInt64, count: Int, to out: inout [UInt8]) {
        for i in stride(from: count - 1, through: 0, by: -1) { out.append(UInt8(truncatingIfNeeded: value >> UInt64(8 * i))) }
    }

    static func writeFloat(_ d: Double, into out: inout [UInt8]) {
        if d.isNaN {
            out.append(contentsOf: [0xF9, 0x7E, 0x00])
            return
        }
        let half = Float16(d)
        if Double(half) == d {
            out.append(0xF9)
            appendBigEndian(UInt64(half.bitPattern), count: 2, to: &out)
            return
        }
        let single = Float(d)
        if Double(single) == d {
            out.append(0xFA)
            appendBigEndian(UInt64(single.bitPattern), count: 4, to: &out)
            return
        }
        out.append(0xFB)
        appendBigEndian(d.bitPattern, count: 8, to: &out)
    }
}

import Foundation

/// Reads one HTTP/1.x answer from a byte source as it arrives, within `HTTPLimits`: status line, header fields
/// (names lowercased), and the body framed by Content-Length, chunked encoding or the end of the connection.
///
/// Every length the server states is read digit by digit against the bound it may not pass, so no size it
/// sends can overflow; a byte past a bound is never buffered. Lines end in LF, a CR before it dropped
/// (RFC 9112 §2.2).
struct HTTPResponseReader {
    /// Appends what the connection has next to the buffer and returns how many bytes: 0 at its end.
    typealias Source = (inout [UInt8]) throws(ProbeError) -> Int

    let limits: HTTPLimits
    let url: HTTPURL
    private let source: Source
    private var buffer: [UInt8] = []
    /// The first byte not yet consumed.
    private var start = 0
    /// Where the search for the next LF resumes (everything from `start` to here has none).
    private var scanned = 0
    private var ended = false
    private var received = 0
    private var fieldCount = 0
    private var fieldBytes = 0

    init(limits: HTTPLimits, url: HTTPURL, source: @escaping Source) {
        self.limits = limits
        self.url = url
        self.source = source
    }

    mutating func response() throws(ProbeError) -> HTTPClient.Response {
        var status: Int
        var headers: [(String, String)]
        repeat {
            guard let line = try line(max: limits.statusLine, "the status line") else {
                throw malformed(buffer.isEmpty ? "closed the connection without answering" : "did not answer with HTTP")
            }
            try countField(bytes: line.count)
            status = try HTTPResponseReader.status(line, url)
            headers = try fields()
        } while (100..<200).contains(status) && status != 101 // interim answers come before the real one
        guard status != 101 else { throw malformed("switched protocols, which the probe never asks for") }
        return HTTPClient.Response(status: status, headers: headers, body: try body(status: status, headers: headers))
    }

    // MARK: Framing

    private mutating func body(status: Int, headers: [(String, String)]) throws(ProbeError) -> [UInt8] {
        if status == 204 || status == 304 { return [] }
        let codings = headers.filter { $0.0 == "transfer-encoding" }
            .flatMap { $0.1.split(separator: ",") }.map { $0.trimmingCharacters(in: [" ", "\t"]).lowercased() }
        if let last = codings.last {
            // RFC 9112 §6.3: chunked last frames the body (Content-Length is then ignored); anything else runs to the close.
            return last == "chunked" ? try chunked() : try rest()
        }
        let lengths = headers.filter { $0.0 == "content-length" }.map(\.1)
        guard let text = lengths.first else { return try rest() }
        guard lengths.allSatisfy({ $0 == text }) else { throw malformed("sent conflicting Content-Length headers") }
        let length = try number(text, radix: 10, bound: limits.body, "Content-Length")
        return Array(try bytes(length, "the body"))
    }

    private mutating func chunked() throws(ProbeError) -> [UInt8] {
        var out: [UInt8] = []
        while true {
            guard let line = try line(max: limits.chunkLine, "a chunk size line") else { throw truncated("chunked body") }
            let sizeEnd = line.firstIndex(of: UInt8(ascii: ";")) ?? line.endIndex
            var digits = line[..<sizeEnd]
            while let last = digits.last, last == 32 || last == 9 { digits = digits.dropLast() }
            let size = try number(String(decoding: digits, as: UTF8.self), radix: 16, bound: limits.body - out.count, "chunk size")
            if size == 0 { break }
            out.append(contentsOf: try bytes(size, "a chunk"))
            var end = try bytes(1, "chunked body").first
            if end == 13 { end = try bytes(1, "chunked body").first }
            guard end == 10 else { throw malformed("sent a chunk longer than its size") }
        }
        _ = try fields() // the trailers, counted against the header bounds and dropped
        return out
    }

    /// Everything up to the end of the connection.
    private mutating func rest() throws(ProbeError) -> [UInt8] {
        while !ended {
            guard buffer.count - start <= limits.body else { throw tooLarge("a body over \(limits.body) bytes") }
            try fill()
        }
        guard buffer.count - start <= limits.body else { throw tooLarge("a body over \(limits.body) bytes") }
        defer { start = buffer.count }
        return Array(buffer[start...])
    }

    /// `text` as a number in `radix`, digits only; `ResponseTooLarge` once it passes `bound` (so it never overflows).
    private func number(_ text: String, radix: Int, bound: Int, _ what: String) throws(ProbeError) -> Int {
        guard !text.isEmpty else { throw malformed("sent an empty \(what)") }
        var value = 0
        for character in text.utf8 {
            guard let digit = HTTPResponseReader.digit(character, radix: radix) else {
                throw malformed("sent a \(what) that is not a \(radix == 16 ? "hexadecimal" : "decimal") number")
            }
            value = value * radix + digit // value <= bound before, so this cannot overflow
            guard value <= bound else { throw tooLarge("a \(what) past the \(limits.body) bytes a body may have") }
        }
        return value
    }

    private static func digit(_ byte: UInt8, radix: Int) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f") where radix == 16: Int(byte - UInt8(ascii: "a")) + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F") where radix == 16: Int(byte - UInt8(ascii: "A")) + 10
        default: nil
        }
    }

    // MARK: Lines and fields

    /// `HTTP/1.x SP 3DIGIT [SP reason]`.
    static func status(_ line: ArraySlice<UInt8>, _ url: HTTPURL) throws(ProbeError) -> Int {
        let bytes = Array(line)
        let prefix = Array("HTTP/1.".utf8)
        guard bytes.count >= 12, bytes.starts(with: prefix), (48...57).contains(bytes[7]), bytes[8] == 32,
              bytes[9...11].allSatisfy({ (48...57).contains($0) }), bytes.count == 12 || bytes[12] == 32 else {
            throw ProbeError(.malformedResponse, "\(url) did not answer with an HTTP/1.x status line.")
        }
        let status = bytes[9...11].reduce(0) { $0 * 10 + Int($1 - 48) }
        guard status >= 100 && status <= 599 else { throw ProbeError(.malformedResponse, "\(url) answered with the status \(status).") }
        return status
    }

    /// Header fields (or trailers) up to the empty line.
    private mutating func fields() throws(ProbeError) -> [(String, String)] {
        var out: [(String, String)] = []
        while true {
            guard let line = try line(max: limits.headerBytes - fieldBytes, "the header fields") else { throw truncated("header fields") }
            try countField(bytes: line.count)
            if line.isEmpty { return out }
            fieldCount += 1
            guard fieldCount <= limits.headerCount else { throw tooLarge("more than \(limits.headerCount) header fields") }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
                  line[..<colon].allSatisfy(HTTPResponseReader.isTokenByte) else {
                throw malformed("sent a header line that is not `name: value`")
            }
            let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
            let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingCharacters(in: [" ", "\t"])
            out.append((name, value))
        }
    }

    private mutating func countField(bytes: Int) throws(ProbeError) {
        fieldBytes += bytes + 2
        guard fieldBytes <= limits.headerBytes else { throw tooLarge("a head over \(limits.headerBytes) bytes") }
    }

    /// RFC 9110 §5.6.2 `tchar`.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"): true
        default: Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    /// The next line without its LF (and a CR before it), or nil when the connection ends first; a line of
    /// more than `max` bytes is `ResponseTooLarge` as soon as that many arrive.
    private mutating func line(max: Int, _ what: String) throws(ProbeError) -> ArraySlice<UInt8>? {
        while true {
            if let lf = buffer[scanned...].firstIndex(of: 10) {
                var end = lf
                if end > start && buffer[end - 1] == 13 { end -= 1 }
                guard end - start <= max else { throw tooLarge("\(what) over \(Swift.max(max, 0)) bytes") }
                let line = buffer[start..<end]
                start = lf + 1
                scanned = start
                return line
            }
            scanned = buffer.count
            guard buffer.count - start <= max + 1 else { throw tooLarge("\(what) over \(Swift.max(max, 0)) bytes") }
            if ended { return nil }
            try fill()
        }
    }

    /// The next `count` bytes.
    private mutating func bytes(_ count: Int, _ what: String) throws(ProbeError) -> ArraySlice<UInt8> {
        while buffer.count - start < count {
            if ended { throw truncated(what) }
            try fill()
        }
        defer {
            start += count
            scanned = start
        }
        return buffer[start..<start + count]
    }

    private mutating func fill() throws(ProbeError) {
        if start > 65536 && start > buffer.count / 2 {
            buffer.removeFirst(start)
            scanned -= start
            start = 0
        }
        let n = try source(&buffer)
        received += n
        guard received <= limits.received else { throw tooLarge("more than \(limits.received) bytes in one answer") }
        if n == 0 { ended = true }
    }

    // MARK: Errors

    private func malformed(_ what: String) -> ProbeError { ProbeError(.malformedResponse, "\(url) \(what).") }
    private func truncated(_ what: String) -> ProbeError { ProbeError(.malformedResponse, "\(url) closed the connection inside its \(what).") }
    private func tooLarge(_ what: String) -> ProbeError { ProbeError(.responseTooLarge, "\(url) sent \(what).") }
}

import Foundation
import XCTest
@testable import CredemuServer

/// The server-side channel's websocket client reads a server's frames as hostile: what RFC 6455 forbids ends the
/// connection, a message over the bound is read past without being held.
final class WebSocketClientTests: XCTestCase {
    /// A server frame (unmasked) with FIN, `opcode` and `payload`; `length` overrides the length field's form.
    static func frame(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, first: UInt8? = nil) -> [UInt8] {
        var out: [UInt8] = [first ?? ((fin ? 0x80 : 0) | opcode)]
        if payload.count < 126 {
            out.append(UInt8(payload.count))
        } else if payload.count < 65536 {
            out += [126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            out.append(127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((UInt64(payload.count) >> UInt64(shift)) & 0xFF)) }
        }
        return out + payload
    }

    func events(_ bytes: [UInt8], max: Int = 1024, chunk: Int = 7) throws -> [WebSocketFrames.Event] {
        var frames = WebSocketFrames(maxMessage: max)
        var out: [WebSocketFrames.Event] = []
        var i = 0
        while i < bytes.count {
            frames.append(bytes[i..<min(bytes.count, i + chunk)])
            i += chunk
            while let event = try frames.next() { out.append(event) }
        }
        return out
    }

    func testTextPingCloseAndAFragmentedMessageArriveWholeInAnyChunking() throws {
        let stream = Self.frame(0x1, Array("hello".utf8)) + Self.frame(0x9, [1, 2]) + Self.frame(0x1, Array("frag".utf8), fin: false)
            + Self.frame(0xA, []) + Self.frame(0x0, Array("ment".utf8)) + Self.frame(0x1, [UInt8](repeating: 0x61, count: 300)) + Self.frame(0x8, [])
        for chunk in [1, 3, 7, 1000] {
            XCTAssertEqual(try events(stream, chunk: chunk), [.text(Array("hello".utf8)), .ping([1, 2]), .pong, .text(Array("fragment".utf8)),
                                                          .text([UInt8](repeating: 0x61, count: 300)), .close], "chunks of \(chunk)")
        }
    }

    func testAMessageOverTheBoundIsDroppedWithoutBeingHeldAndTheNextOneArrives() throws {
        var frames = WebSocketFrames(maxMessage: 1000)
        let big = Self.frame(0x1, [UInt8](repeating: 0x62, count: 200_000))
        var seen: [WebSocketFrames.Event] = []
        for start in stride(from: 0, to: big.count, by: 4096) {
            frames.append(big[start..<min(big.count, start + 4096)])
            while let event = try frames.next() { seen.append(event) }
            XCTAssertLessThanOrEqual(frames.held, 4096, "a dropped message's bytes are never kept")
        }
        frames.append(Self.frame(0x1, Array("{}".utf8))[...])
        while let event = try frames.next() { seen.append(event) }
        XCTAssertEqual(seen, [.dropped(200_000), .text(Array("{}".utf8))])
        // Fragments that together pass the bound, and a binary message: dropped too.
        let parts = Self.frame(0x1, [UInt8](repeating: 0x63, count: 600), fin: false) + Self.frame(0x0, [UInt8](repeating: 0x63, count: 600))
        XCTAssertEqual(try events(parts + Self.frame(0x2, [1, 2, 3]) + Self.frame(0x1, [0x7B, 0x7D])),
                       [.dropped(1200), .dropped(3), .text([0x7B, 0x7D])])
    }

    func testFramesTheRFCForbidsEndTheConnection() {
        let forbidden: [(String, [UInt8])] = [
            ("a masked server frame", [0x81, 0x82, 1, 2, 3, 4, 0x61, 0x62]),
            ("a reserved bit", Self.frame(0x1, [0x61], first: 0xC1)),
            ("an unknown opcode", Self.frame(0x3, [])),
            ("an unknown control opcode", Self.frame(0xB, [])),
            ("a fragmented ping", Self.frame(0x9, [], fin: false)),
            ("a ping over 125 bytes", Self.frame(0x9, [UInt8](repeating: 0, count: 126))),
            ("a continuation with no message", Self.frame(0x0, [0x61])),
            ("a message inside a fragmented one", Self.frame(0x1, [0x61], fin: false) + Self.frame(0x1, [0x62])),
            ("a length with the top bit set", [0x81, 127, 0x80, 0, 0, 0, 0, 0, 0, 1]),
            ("a length past 2^31", [0x81, 127, 0, 0, 0, 1, 0, 0, 0, 0]),
        ]
        for (name, bytes) in forbidden {
            XCTAssertThrowsError(try events(bytes, chunk: 1), name)
        }
    }

    func testClientFramesAreMaskedAndTheHandshakeKeyIsAnsweredAsRFC6455Says() {
        XCTAssertEqual(WebSocketClient.accept(for: "dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", "RFC 6455 §1.3's example")
        let framed = WebSocketFrames.frame(opcode: 0x1, Array("Hello".utf8), mask: [0x37, 0xFA, 0x21, 0x3D])
        XCTAssertEqual(framed, [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58], "RFC 6455 §5.7's masked Hello")
        XCTAssertEqual(Array(WebSocketFrames.frame(opcode: 0x1, [UInt8](repeating: 0, count: 70000), mask: [0, 0, 0, 0]).prefix(10)),
                       [0x81, 0xFF, 0, 0, 0, 0, 0, 1, 0x11, 0x70])
    }

    /// The mask applied a word at a time is RFC 6455 §5.3's, byte by byte, at every length and tail.
    func testAFrameOfAnyLengthIsMaskedByteByByte() {
        let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        for length in [0, 1, 7, 8, 9, 125, 126, 1500, 1503] {
            let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            let framed = WebSocketFrames.frame(opcode: 0x1, payload, mask: mask)
            let body = Array(framed.suffix(length))
            XCTAssertEqual(Array(framed.dropLast(length).suffix(4)), mask, "\(length)")
            XCTAssertEqual(body.enumerated().map { $0.element ^ mask[$0.offset & 3] }, payload, "\(length)")
        }
        XCTAssertNotEqual(WebSocketFrames.randomMask(), WebSocketFrames.randomMask())
    }

    func testOnlyALoopbackPagesDevToolsURLIsTaken() {
        for good in ["ws://127.0.0.1:9222/devtools/page/ABCDEF0123", "ws://localhost:1/devtools/page/a-b", "ws://[::1]:9222/devtools/page/X",
                     "ws://127.1.2.3:65535/devtools/page/X"] {
            XCTAssertNotNil(DevToolsChannel.pageURL(good), good)
        }
        XCTAssertEqual(DevToolsChannel.pageURL("ws://localhost:9222/devtools/page/X")?.address, "127.0.0.1")
        for bad in ["ws://10.0.0.1:9222/devtools/page/X", "ws://evil.example:9222/devtools/page/X", "ws://127.0.0.1.evil.example:9222/devtools/page/X",
                    "ws://127.0.0.1/devtools/page/X", "ws://127.0.0.1:0/devtools/page/X", "ws://127.0.0.1:99999/devtools/page/X",
                    "wss://127.0.0.1:9222/devtools/page/X", "http://127.0.0.1:9222/devtools/page/X", "ws://127.0.0.1:9222/devtools/browser/X",
                    "ws://127.0.0.1:9222/devtools/page/", "ws://127.0.0.1:9222/devtools/page/X/../../json", "ws://127.0.0.1:9222/devtools/page/X?a=b",
                    "ws://user@127.0.0.1:9222/devtools/page/X", "ws://127.0.0.1:9222/devtools/page/" + String(repeating: "A", count: 65),
                    "ws://127.0.0.1:9222/devtools/page/X Y", "ws://0x7f.1:9222/devtools/page/X", "ws://127.0.0.1:+80/devtools/page/X"] {
            XCTAssertNil(DevToolsChannel.pageURL(bad), bad)
        }
    }
}

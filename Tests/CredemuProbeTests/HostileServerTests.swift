@testable import CredemuProbe
import CredemuEngine
import CredemuOperations
import CredemuTestSupport
import Foundation
import XCTest

/// The probe's client against servers that lie about lengths, trickle, or flood: each exchange ends in a named
/// `ProbeError` within its deadline, and nothing crashes.
final class HostileServerTests: XCTestCase {
    /// Runs one request against a server answering `answer`; the error it ends in and how long it took.
    private func failure(_ answer: @escaping HostileServer.Answer, limits: HTTPLimits = .standard, runDeadline: Deadline? = nil,
                         requests: Int = 1, file: StaticString = #filePath, line: UInt = #line) -> (ProbeError?, TimeInterval) {
        let server = HostileServer(answer)
        defer { server.stop() }
        let client = HTTPClient(limits: limits, runDeadline: runDeadline)
        let started = Date()
        do {
            for _ in 0..<requests { _ = try client.request("POST", server.url, json: "{}") }
        } catch {
            return (error, Date().timeIntervalSince(started))
        }
        XCTFail("the exchange succeeded", file: file, line: line)
        return (nil, Date().timeIntervalSince(started))
    }

    private func assertFails(_ answer: @escaping HostileServer.Answer, _ kind: ProbeError.Kind, limits: HTTPLimits = .standard,
                             requests: Int = 1, within seconds: TimeInterval = 10, file: StaticString = #filePath, line: UInt = #line) {
        let (error, elapsed) = failure(answer, limits: limits, requests: requests, file: file, line: line)
        XCTAssertEqual(error?.kind, kind, error?.description ?? "", file: file, line: line)
        XCTAssertLessThan(elapsed, seconds, file: file, line: line)
    }

    func testChunkSizesThatWouldOverflowAreResponseTooLarge() {
        for size in ["7fffffffffffffff", "ffffffffffffffffffffffff", "800001", "0000000000000000000000000000800001"] {
            assertFails(HostileServer.text("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\(size)\r\nabc\r\n0\r\n\r\n"), .responseTooLarge)
        }
        // The second chunk passes the body bound only with the first counted.
        let half = String(4 << 20, radix: 16)
        let first = String(repeating: "a", count: 4 << 20)
        assertFails(HostileServer.text("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\(half)\r\n\(first)\r\n\(half)1\r\n"), .responseTooLarge)
    }

    func testChunkSizesThatAreNotHexadecimalAreMalformed() {
        for size in ["-1", "+5", " 5", "0x5", "", "5 5", "٥"] {
            assertFails(HostileServer.text("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\(size)\r\nabcde\r\n0\r\n\r\n"), .malformedResponse)
        }
        assertFails(HostileServer.text("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcdef\r\n0\r\n\r\n"), .malformedResponse)
        assertFails(HostileServer.text("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc"), .malformedResponse)
    }

    func testChunkExtensionsAndTrailersAreBounded() {
        let extensions = String(repeating: ";a=b", count: 2000)
        assertFails(HostileServer.text("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\(extensions)\r\nabc\r\n0\r\n\r\n"), .responseTooLarge)
        let trailers = (0..<200).map { "T\($0): v\r\n" }.joined()
        assertFails(HostileServer.text("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\(trailers)\r\n"), .responseTooLarge)
        // One-byte chunks under long extensions: the bytes on the wire are bounded, not only the body.
        let piece = "1;" + String(repeating: "x", count: 4000) + "\r\na\r\n"
        assertFails(HostileServer.flood("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", piece, total: 64 << 20), .responseTooLarge, within: 30)
    }

    func testAByteASecondBodyEndsAtTheExchangeDeadline() {
        var limits = HTTPLimits.standard
        limits.exchange = .seconds(1)
        // Each byte comes well within any per-read timeout; the exchange as a whole still ends.
        assertFails(HostileServer.trickle("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", interval: 0.2), .exchangeTimedOut, limits: limits, within: 5)
        assertFails(HostileServer.trickle("HTTP/1.1 200 OK\r\n", interval: 0.2), .exchangeTimedOut, limits: limits, within: 5)
        assertFails(HostileServer.trickle("", interval: 0.2), .exchangeTimedOut, limits: limits, within: 5)
        assertFails(HostileServer.trickle("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfff\r\n", interval: 0.2), .exchangeTimedOut,
                    limits: limits, within: 5)
    }

    func testTheRunDeadlineCutsAnExchangeShortAndStopsTheNext() {
        let (error, elapsed) = failure(HostileServer.trickle("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", interval: 0.2),
                                       runDeadline: Deadline(after: .milliseconds(800), ProbeError(.runTimedOut, "run over")))
        XCTAssertEqual(error?.kind, .runTimedOut)
        XCTAssertLessThan(elapsed, 5)
        let passed = Deadline(after: .zero, ProbeError(.runTimedOut, "run over"))
        let (next, _) = failure(HostileServer.text("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"), runDeadline: passed)
        XCTAssertEqual(next?.kind, .runTimedOut)
    }

    func testOneHundredThousandHeadersAreResponseTooLarge() {
        let headers = (0..<100_000).map { "X-\($0): v\r\n" }.joined()
        assertFails(HostileServer.text("HTTP/1.1 200 OK\r\n\(headers)\r\n{}"), .responseTooLarge)
        assertFails(HostileServer.text("HTTP/1.1 200 OK\r\nX: " + String(repeating: "v", count: 1 << 20) + "\r\n\r\n"), .responseTooLarge)
        assertFails(HostileServer.flood("HTTP/1.1 200 OK\r\n", "X: v\r\n", total: 64 << 20), .responseTooLarge)
        assertFails(HostileServer.text("HTTP/1.1 200 " + String(repeating: "O", count: 1 << 20) + "\r\n\r\n"), .responseTooLarge)
    }

    func testHugeOrConflictingContentLengthsAreNamedBeforeAnyBodyIsRead() {
        for length in ["99999999999999999999999999", "9223372036854775807", "9223372036854775808", "8388609"] {
            assertFails(HostileServer.text("HTTP/1.1 200 OK\r\nContent-Length: \(length)\r\n\r\n{}"), .responseTooLarge)
        }
        for length in ["-1", "+2", "2, 2", "0x2", "", "１"] {
            assertFails(HostileServer.text("HTTP/1.1 200 OK\r\nContent-Length: \(length)\r\n\r\n{}"), .malformedResponse)
        }
        assertFails(HostileServer.text("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}x"), .malformedResponse)
        assertFails(HostileServer.text("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}"), .malformedResponse)
        assertFails(HostileServer.flood("HTTP/1.1 200 OK\r\n\r\n", "x", total: 64 << 20), .responseTooLarge)
    }

    func testManyOrLargeCookiesEndInCookieOverLimit() {
        let cookies = (0..<95).map { "Set-Cookie: c\($0)=\($0); Path=/\r\n" }.joined()
        let answer = HostileServer.text("HTTP/1.1 200 OK\r\n\(cookies)Content-Length: 0\r\n\r\n")
        // 95 an answer, the same names each time: the jar stays at 95 however often they come.
        let server = HostileServer(answer)
        let client = HTTPClient()
        for _ in 0..<3 { XCTAssertNoThrow(try client.request("POST", server.url)) }
        XCTAssertEqual(client.cookies.count, 95)
        server.stop()
        // New names each time: the second answer takes the jar past its 180.
        let fresh: HostileServer.Answer = { send in
            let cookies = (0..<95).map { _ in "Set-Cookie: n\(UUID().uuidString)=v\r\n" }.joined()
            _ = send(ArraySlice("HTTP/1.1 200 OK\r\n\(cookies)Content-Length: 0\r\n\r\n".utf8))
        }
        assertFails(fresh, .cookieOverLimit, requests: 2)
        assertFails(HostileServer.text("HTTP/1.1 200 OK\r\nSet-Cookie: big=\(String(repeating: "v", count: 5000))\r\nContent-Length: 0\r\n\r\n"), .cookieOverLimit)
    }

    func testAnswersThatAreNotHTTPAreMalformed() {
        for text in ["", "garbage\r\n\r\n", "HTTP/2 200\r\n\r\n", "HTTP/1.1 20 OK\r\n\r\n", "HTTP/1.1 2000 OK\r\n\r\n", "HTTP/1.1 099 X\r\n\r\n",
                     "HTTP/1.1 200 OK\r\n folded: x\r\n\r\n", "HTTP/1.1 200 OK\r\nno colon\r\n\r\n", "HTTP/1.1 200 OK\r\nbad name: x\r\n\r\n",
                     "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n", "HTTP/1.1 101 Switching Protocols\r\n\r\n"] {
            assertFails(HostileServer.text(text), .malformedResponse)
        }
    }

    func testARefusedConnectionIsUnreachable() throws {
        let server = HostileServer(HostileServer.text("unused"))
        let url = server.url
        server.stop()
        XCTAssertThrowsError(try HTTPClient().request("POST", url)) { XCTAssertEqual(($0 as? ProbeError)?.kind, .unreachable) }
    }

    /// The whole probe, not one exchange: `Prober.run` ends in `RunTimedOut` at its limit against a trickling server.
    func testAProbeRunEndsAtItsTimeLimit() throws {
        let server = HostileServer(HostileServer.trickle("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n", interval: 0.1))
        defer { server.stop() }
        let (vault, directory) = try makeTestVault()
        _ = directory
        defer { vault.close() }
        let registry = try PolicyRegistry()
        let prober = Prober(base: server.url, adapter: .conformance, origin: "http://localhost:\(server.port)",
                            operations: try Operations(vault: vault, registry: registry), timeLimit: .seconds(1))
        let started = Date()
        XCTAssertThrowsError(try prober.run(try Prober.select("gpm", from: registry))) { error in
            XCTAssertEqual((error as? ProbeError)?.kind, .runTimedOut)
            XCTAssertTrue("\(error)".hasPrefix("RunTimedOut: "), "\(error)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
    }
}

@testable import CredemuProbe
import XCTest

/// How the probe's client frames an answer: interim answers skipped, bodies by chunked encoding over
/// Content-Length, trailers dropped, and lines ending in a bare LF read as well.
final class ResponseFramingTests: XCTestCase {
    let url = try! HTTPURL("http://127.0.0.1/")

    private func parse(_ text: String, limits: HTTPLimits = .standard) throws -> HTTPClient.Response {
        try HTTPClient.parse(Array(text.utf8), url, limits: limits)
    }

    func testInterimAnswersAreSkippedAndCountAgainstTheHeaderBounds() throws {
        let answer = try parse("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\n{}")
        XCTAssertEqual(answer.status, 201)
        XCTAssertEqual(answer.text, "{}")
        let many = String(repeating: "HTTP/1.1 100 Continue\r\nX: y\r\n\r\n", count: 101) + "HTTP/1.1 200 OK\r\n\r\n"
        XCTAssertThrowsError(try parse(many)) { XCTAssertEqual(($0 as? ProbeError)?.kind, .responseTooLarge) }
    }

    func testChunkedWinsOverContentLengthAndTrailersAreDropped() throws {
        let answer = try parse("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n4;ext=\"a;b\"\r\nabcd\r\n0\r\nX-Trailer: t\r\n\r\n")
        XCTAssertEqual(answer.text, "abcd")
        XCTAssertFalse(answer.headers.contains { $0.0 == "x-trailer" })
        let toClose = try parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\nContent-Length: 1\r\n\r\nall of it")
        XCTAssertEqual(toClose.text, "all of it")
    }

    func testBareLineFeedsEndLinesAndNoContentMeansNoBody() throws {
        let answer = try parse("HTTP/1.0 200 OK\nContent-Length: 3\n\nabcdef")
        XCTAssertEqual(answer.text, "abc")
        XCTAssertEqual(try parse("HTTP/1.1 204 No Content\r\n\r\nignored").body, [])
        XCTAssertEqual(try parse("HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n").status, 200)
    }

    func testEveryBoundIsTheLimitsGiven() throws {
        var limits = HTTPLimits.standard
        limits.body = 4
        XCTAssertEqual(try parse("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcd", limits: limits).text, "abcd")
        for text in ["HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabcde", "HTTP/1.1 200 OK\r\n\r\nabcde",
                     "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"] {
            XCTAssertThrowsError(try parse(text, limits: limits), text) { XCTAssertEqual(($0 as? ProbeError)?.kind, .responseTooLarge) }
        }
        limits = .standard
        limits.headerCount = 2
        XCTAssertNoThrow(try parse("HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\n\r\n", limits: limits))
        XCTAssertThrowsError(try parse("HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", limits: limits))
    }
}

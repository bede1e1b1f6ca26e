import Foundation
import Shipped
import XCTest

/// The files compiled into the executable are the tree's: a pack, the shim or the OpenAPI document edited,
/// added or removed without `CShipped/shipped.c` following fails here.
final class ShippedFileTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    func testEveryShippedFileIsByteForByteTheFileInTheTree() throws {
        XCTAssertFalse(ShippedFile.all.isEmpty)
        // COMMIT is the build's stamp (`make commit-stamp` writes .build/credemu-commit), not a file of the tree.
        for file in ShippedFile.all where file.path != "COMMIT" {
            let onDisk = try XCTUnwrap(FileManager.default.contents(atPath: Self.root + "/" + file.path), "\(file.path) is shipped but not in the tree")
            XCTAssertEqual(file.bytes.count, onDisk.count, "\(file.path): the shipped copy differs from the tree's (rebuild, or fix shipped.c)")
            XCTAssertTrue(file.bytes == Array(onDisk), "\(file.path): the shipped copy differs from the tree's (rebuild, or fix shipped.c)")
        }
    }

    func testEveryPackInProvidersIsShipped() throws {
        let inTree = try FileManager.default.contentsOfDirectory(atPath: Self.root + "/providers")
            .filter { $0.hasSuffix(".json") && !$0.hasSuffix(".schema.json") }.map { "providers/" + $0 }.sorted()
        XCTAssertFalse(inTree.isEmpty)
        XCTAssertEqual(ShippedFile.packs.map(\.path), inTree, "every providers/*.json pack, and only those, is listed in Sources/CShipped/shipped.c")
    }

    func testEveryServerResourceIsShipped() throws {
        let directory = "Sources/CredemuServer/Resources"
        let inTree = try FileManager.default.contentsOfDirectory(atPath: Self.root + "/" + directory).map { directory + "/" + $0 }.sorted()
        let shipped = ShippedFile.all.map(\.path).filter { $0.hasPrefix(directory + "/") }.sorted()
        XCTAssertEqual(shipped, inTree, "every file of \(directory) is listed in Sources/CShipped/shipped.c")
    }

    func testAFileIsFoundByItsPathAndOnlyByIt() {
        XCTAssertEqual(ShippedFile.named("providers/gpm.json")?.path, "providers/gpm.json")
        XCTAssertNil(ShippedFile.named("gpm.json"))
        XCTAssertNil(ShippedFile.named("providers/policy-pack.schema.json"), "the schema is for pack authors, not read at run time")
    }
}

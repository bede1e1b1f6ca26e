import CShipped

/// A file of the source tree compiled into the executable (`CShipped/shipped.c`): the packs, the shim and the
/// OpenAPI document, so an installed or copied `credemu` needs no file beside it.
public struct ShippedFile: Sendable {
    /// The path from the repository root, such as `providers/gpm.json`.
    public let path: String
    public let bytes: [UInt8]

    /// Every shipped file, in `shipped.c`'s order.
    public static let all: [ShippedFile] = {
        var count = 0
        guard let files = credemu_shipped_files(&count) else { return [] }
        return (0..<count).map { index in
            let file = files[index]
            return ShippedFile(path: String(cString: file.path), bytes: Array(UnsafeBufferPointer(start: file.bytes, count: file.count)))
        }
    }()

    /// The shipped file at `path`, if there is one.
    public static func named(_ path: String) -> ShippedFile? {
        all.first { $0.path == path }
    }

    /// The shipped policy packs (`providers/*.json`), sorted by path.
    public static var packs: [ShippedFile] {
        all.filter { $0.path.hasPrefix("providers/") }.sorted { $0.path < $1.path }
    }
}

/// credemu's version: the repository's `VERSION` file, compiled in (`shipped.c`), so `credemu --version`, `/health`
/// and the Makefile's packages (which read the file) name one version; with the commit it was built from.
public enum CredemuVersion {
    /// The version, such as `0.2.0`.
    public static let current: String = trimmed("VERSION") ?? "unknown"

    /// The commit the binary was built from (`git describe --always --dirty`'s, as the Makefile writes it before
    /// every build), or nil for a build made without the Makefile.
    public static let commit: String? = trimmed("COMMIT")

    /// What `credemu --version` prints: the version, and the commit in parentheses when known.
    public static var description: String { current + (commit.map { " (\($0))" } ?? "") }

    private static func trimmed(_ path: String) -> String? {
        guard let file = ShippedFile.named(path) else { return nil }
        let text = String(decoding: file.bytes, as: UTF8.self)
        let value = String(text.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
        return value.isEmpty ? nil : value
    }
}

/// credemu's version: the repository's `VERSION` file, compiled in (`shipped.c`), so `credemu --version`, `/health`
/// and the Makefile's `.deb` and archive (which read the file) name one version.
public enum CredemuVersion {
    /// The version, such as `0.1.0`.
    public static let current: String = {
        guard let file = ShippedFile.named("VERSION") else { return "unknown" }
        let text = String(decoding: file.bytes, as: UTF8.self)
        return String(text.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }()
}

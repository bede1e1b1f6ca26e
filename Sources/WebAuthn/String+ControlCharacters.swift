extension StringProtocol {
    /// Whether the text holds a control character by Unicode's general category Cc: C0 (U+0000-U+001F), DEL and C1
    /// (U+0080-U+009F, NEL U+0085 among them), the one rule for names a user or a page gives credemu.
    public var containsControlCharacter: Bool {
        unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}

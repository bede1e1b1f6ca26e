/// The collected client data (WebAuthn L3 §5.8.1), serialized as the browser does (§5.8.1.1): members in the
/// order type, challenge, origin, crossOrigin, then topOrigin when cross-origin.
public struct ClientData: Equatable, Sendable {
    public enum CeremonyType: String, Sendable {
        case create = "webauthn.create"
        case get = "webauthn.get"
    }

    public var type: CeremonyType
    public var challenge: [UInt8]
    public var origin: String
    public var crossOrigin: Bool
    public var topOrigin: String?
    /// Android adds the calling app's package name to app-origin client data.
    public var androidPackageName: String?

    public init(type: CeremonyType, challenge: [UInt8], origin: String, crossOrigin: Bool = false,
                topOrigin: String? = nil, androidPackageName: String? = nil) {
        self.type = type
        self.challenge = challenge
        self.origin = origin
        self.crossOrigin = crossOrigin
        self.topOrigin = topOrigin
        self.androidPackageName = androidPackageName
    }

    public var json: String { String(decoding: bytes, as: UTF8.self) }

    /// The serialized bytes: what clientDataJSON carries and clientDataHash hashes.
    public var bytes: [UInt8] {
        // The common case (no characters to escape in the origins) appends bytes directly: this runs on every
        // ceremony.
        guard ClientData.isPlain(origin), topOrigin.map(ClientData.isPlain) ?? true,
              androidPackageName.map(ClientData.isPlain) ?? true else { return Array(treeJSON.utf8) }
        var out = [UInt8]()
        out.reserveCapacity(160)
        ClientData.append(#"{"type":""#, to: &out)
        ClientData.append(type.rawValue, to: &out)
        ClientData.append(#"","challenge":""#, to: &out)
        ClientData.append(Base64URL.encode(challenge), to: &out)
        ClientData.append(#"","origin":""#, to: &out)
        ClientData.append(origin, to: &out)
        ClientData.append(crossOrigin ? #"","crossOrigin":true"# : #"","crossOrigin":false"#, to: &out)
        if crossOrigin, let topOrigin {
            ClientData.append(#","topOrigin":""#, to: &out)
            ClientData.append(topOrigin, to: &out)
            out.append(0x22)
        }
        if let androidPackageName {
            ClientData.append(#","androidPackageName":""#, to: &out)
            ClientData.append(androidPackageName, to: &out)
            out.append(0x22)
        }
        out.append(0x7D)
        return out
    }

    /// Appends the string's UTF-8: a native string's (every one here) in one copy, not byte by byte.
    private static func append(_ text: String, to out: inout [UInt8]) {
        if text.utf8.withContiguousStorageIfAvailable({ out.append(contentsOf: $0) }) == nil { out.append(contentsOf: text.utf8) }
    }

    /// Whether the string needs no escaping in JSON: printable ASCII without a quote or a backslash.
    private static func isPlain(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { $0.allSatisfy(ClientData.isPlain) } ?? text.utf8.allSatisfy(ClientData.isPlain)
    }

    private static func isPlain(_ byte: UInt8) -> Bool { byte >= 0x20 && byte != 0x22 && byte != 0x5C && byte < 0x80 }

    /// The same serialization through the JSON tree, escaping whatever needs it.
    var treeJSON: String {
        var members: [(String, JSONValue)] = [
            ("type", .string(type.rawValue)),
            ("challenge", .string(Base64URL.encode(challenge))),
            ("origin", .string(origin)),
            ("crossOrigin", .bool(crossOrigin)),
        ]
        if crossOrigin, let topOrigin { members.append(("topOrigin", .string(topOrigin))) }
        if let androidPackageName { members.append(("androidPackageName", .string(androidPackageName))) }
        return JSONValue.object(members).serialized()
    }
}

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
        guard origin.utf8.allSatisfy(ClientData.isPlain), topOrigin?.utf8.allSatisfy(ClientData.isPlain) ?? true,
              androidPackageName?.utf8.allSatisfy(ClientData.isPlain) ?? true else { return Array(treeJSON.utf8) }
        var out = [UInt8]()
        out.reserveCapacity(160)
        out += #"{"type":""#.utf8
        out += type.rawValue.utf8
        out += #"","challenge":""#.utf8
        out += Base64URL.encode(challenge).utf8
        out += #"","origin":""#.utf8
        out += origin.utf8
        out += #"","crossOrigin":"#.utf8
        out += (crossOrigin ? "true" : "false").utf8
        if crossOrigin, let topOrigin {
            out += #","topOrigin":""#.utf8
            out += topOrigin.utf8
            out.append(0x22)
        }
        if let androidPackageName {
            out += #","androidPackageName":""#.utf8
            out += androidPackageName.utf8
            out.append(0x22)
        }
        out.append(0x7D)
        return out
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

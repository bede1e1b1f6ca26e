/// A `PublicKeyCredentialDescriptorJSON`: a credential the RP names in an exclude or allow list.
public struct CredentialDescriptor: Equatable, Sendable {
    public var type: String
    public var id: [UInt8]
    public var transports: [String]

    public init(type: String = "public-key", id: [UInt8], transports: [String] = []) {
        self.type = type
        self.id = id
        self.transports = transports
    }
}

/// Where a member sits in a document ("publicKey.pubKeyCredParams[0]"): spelled out only for an error message.
public indirect enum OptionsPath: CustomStringConvertible, ExpressibleByStringLiteral, Sendable {
    case root(String)
    case member(OptionsPath, String)
    case element(OptionsPath, String, Int)

    public init(stringLiteral value: String) { self = .root(value) }

    public var description: String {
        switch self {
        case .root(let name): return name
        case .member(let parent, let key): return "\(parent).\(key)"
        case .element(let parent, let key, let index): return "\(parent).\(key)[\(index)]"
        }
    }
}

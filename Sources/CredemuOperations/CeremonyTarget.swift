import CredemuEngine

/// What a ceremony, a signal or a page's password runs on: a profile (one provider account) or a device (a
/// platform with its ordered provider accounts).
public enum CeremonyTarget: Hashable, Sendable, CustomStringConvertible {
    case profile(String)
    case device(String)

    public enum Kind: String, Sendable, CaseIterable {
        case profile
        case device
    }

    public init(_ kind: Kind, _ name: String) {
        switch kind {
        case .profile: self = .profile(name)
        case .device: self = .device(name)
        }
    }

    public var kind: Kind {
        switch self {
        case .profile: return .profile
        case .device: return .device
        }
    }

    /// "profile NAME" or "device NAME", as messages say it.
    public var description: String { "\(kind.rawValue) \(name)" }

    public var name: String {
        switch self {
        case .profile(let name), .device(let name): return name
        }
    }
}

extension Operations {
    /// The profile that saves and fills a target's passwords: the profile itself, or the account a device's
    /// creates go to.
    public func passwordProfile(_ target: CeremonyTarget) throws(OperationError) -> String {
        switch target {
        case .profile(let name):
            return name
        case .device:
            let answering = try answerers(target)
            do throws(CeremonyError) {
                return try answering.createEngine().engine.profile.name
            } catch {
                throw .notFound("The device \(target.name) has no provider account that saves passwords: \(error.error.message)")
            }
        }
    }
}

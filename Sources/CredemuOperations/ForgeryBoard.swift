import CredemuEngine
import Foundation
import WebAuthn

/// The forged answers a test asked for (issue 35, item 3): one `Forgery` armed on a target for its next ceremony it
/// applies to (`POST /profiles/{p}/forge-next`), and a WebDriver authenticator's response override bits, which
/// change every answer it gives until they are set again, as Chromium's do.
///
/// Kept in memory, as holds are: a forgery armed on the server is the server's. Bounded by the targets that exist:
/// one pending forgery per target and one set of bits per profile, dropped with the target.
public final class ForgeryBoard: @unchecked Sendable {
    /// CDP's `WebAuthn.setResponseOverrideBits` (Chromium's `WebAuthnHandler::SetResponseOverrideBits`): each bit
    /// the call leaves out is cleared, and they hold for every later response of the authenticator.
    public struct OverrideBits: Equatable, Sendable {
        public var isBogusSignature = false
        public var isBadUV = false
        public var isBadUP = false

        public init(isBogusSignature: Bool = false, isBadUV: Bool = false, isBadUP: Bool = false) {
            self.isBogusSignature = isBogusSignature
            self.isBadUV = isBadUV
            self.isBadUP = isBadUP
        }

        public static let names = ["isBogusSignature", "isBadUV", "isBadUP"]

        public var isEmpty: Bool { self == OverrideBits() }

        /// The forgeries the bits make of a response, in the order they apply: the flags first, each signed again
        /// (Chromium's `VirtualCtap2Device` clears UP and UV in the authenticator data it then signs), the bogus
        /// signature last. Chromium sets a bogus signature in an assertion and in an attestation statement; a
        /// registration of attestation `none` carries no signature, so the bit changes nothing there.
        public func forgeries(_ ceremony: Forgery.Ceremony, format: String?) -> [Forgery] {
            var forgeries: [Forgery] = []
            if isBadUP { forgeries.append(.noUserPresence) }
            if isBadUV { forgeries.append(.noUserVerification) }
            if isBogusSignature {
                switch ceremony {
                case .assertion: forgeries.append(.badSignature)
                case .registration: if format != "none" { forgeries.append(.badAttestation) }
                }
            }
            return forgeries
        }

        public var json: JSONValue {
            .object([("isBogusSignature", .bool(isBogusSignature)), ("isBadUV", .bool(isBadUV)), ("isBadUP", .bool(isBadUP))])
        }
    }

    private let lock = NSLock()
    private var pending: [CeremonyTarget: Forgery] = [:]
    private var bits: [String: OverrideBits] = [:]

    public init() {}

    /// Arms `forgery` for the target's next ceremony it applies to, in place of one armed before; nil disarms.
    func arm(_ forgery: Forgery?, on target: CeremonyTarget) {
        lock.withLock { pending[target] = forgery }
    }

    /// The forgery armed on the target, if any.
    func armed(on target: CeremonyTarget) -> Forgery? {
        lock.withLock { pending[target] }
    }

    /// Takes the armed forgery when it applies to `ceremony`: once, whichever of the target's ceremonies running
    /// side by side comes first. One for the other ceremony stays armed.
    func take(on target: CeremonyTarget, for ceremony: Forgery.Ceremony) -> Forgery? {
        lock.withLock {
            guard let forgery = pending[target], forgery.ceremonies.contains(ceremony) else { return nil }
            pending[target] = nil
            return forgery
        }
    }

    func setBits(_ value: OverrideBits, profile: String) {
        lock.withLock { bits[profile] = value.isEmpty ? nil : value }
    }

    func bits(profile: String) -> OverrideBits {
        lock.withLock { bits[profile] ?? OverrideBits() }
    }

    /// Forgets what was armed for a target that was removed: one made later under its name inherits nothing.
    func remove(_ target: CeremonyTarget) {
        lock.withLock {
            pending[target] = nil
            if case .profile(let name) = target { bits[name] = nil }
        }
    }
}

/// A provider's behaviour. Packs under `providers/` implement it from data; Swift code can implement it
/// directly to model a provider no pack describes.
public protocol ProviderPolicy: Sendable {
    var id: String { get }
    var name: String { get }
    var version: String { get }
    /// The platforms this provider is modelled on.
    var platforms: [Platform] { get }
    /// The knobs in force on `platform`.
    func knobs(for platform: Platform) -> PolicyKnobs
}

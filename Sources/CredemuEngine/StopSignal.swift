import Synchronization

/// Set once when the process is stopping (`credemu serve` got SIGTERM); work that checks a `Cancellation` made with
/// it ends early from then on.
public final class StopSignal: Sendable {
    private let flag = Atomic<Bool>(false)

    public init() {}

    public var isSet: Bool { flag.load(ordering: .acquiring) }

    public func set() { flag.store(true, ordering: .releasing) }
}

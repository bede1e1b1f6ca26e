import Dispatch

/// Frees `value` on a background queue instead of the calling thread.
///
/// For a cache emptied on a ceremony's thread: the staged registrations' mirror after a move (4,096 records, under
/// the vault's lock) and the engine's signing keys when the key cache is full (4,096 OpenSSL keys) took about 2% of
/// a registration each to deallocate there. The value is handed over whole: nothing else may use it afterwards.
public func releaseInBackground<T>(_ value: T) {
    let box = ReleaseBox(value)
    releaseQueue.async { box.value = nil }
}

private let releaseQueue = DispatchQueue(label: "credemu.release", qos: .utility)

/// Carries a value to the release queue; only that queue touches it after the hand-over.
private final class ReleaseBox<T>: @unchecked Sendable {
    var value: T?
    init(_ value: T) { self.value = value }
}

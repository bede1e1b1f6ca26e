/// A usage mistake: the message goes to standard error and the exit status is 2.
struct UsageError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

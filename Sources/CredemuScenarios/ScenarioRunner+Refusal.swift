extension ScenarioRunner {
    /// A step the run cannot set up (a plugged-in account that is no security key): its cell is an error naming it.
    struct Refusal: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}

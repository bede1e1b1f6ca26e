import WebAuthn

extension CeremonyError {
    /// The error body of the CLI and the API: the web error, the reason, and every platform's rendering.
    public func json(operation: Dialect.Operation, engine: Engine) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("name", .string(error.name.rawValue)),
            ("message", .string(error.message)),
            ("reason", .string(reason.rawValue)),
            ("silent", .bool(silent)),
        ]
        if let retryMillis { members.append(("retryMillis", .number(Double(retryMillis)))) }
        if let settlesAfterMillis { members.append(("settlesAfterMillis", .number(Double(settlesAfterMillis)))) }
        members += [
            ("profile", .string(engine.profile.name)),
            ("platform", .string(engine.profile.platform.rawValue)),
            ("dialect", .string(engine.profile.platform.dialect.rawValue)),
            ("dialects", Dialect.render(self, operation: operation, knobs: engine.knobs, osVersion: engine.profile.osVersion)),
        ]
        return ErrorBody.json(members)
    }
}

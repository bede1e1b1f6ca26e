/// The one place an error body is built.
public enum ErrorBody {
    public static func json(_ members: [(String, JSONValue)]) -> JSONValue { .object([("error", .object(members))]) }
    public static func json(name: String, message: String) -> JSONValue { json([("name", .string(name)), ("message", .string(message))]) }
}

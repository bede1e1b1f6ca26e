/// One entry of the API's route table: a method, a path template as `openapi.json` writes it, and its handler.
struct Route: Sendable {
    typealias Handler = @Sendable (APIServer, RouteRequest) throws(APIError) -> HTTPResponse

    let method: String
    let template: String
    /// Served without the bearer token (the shim and the health check).
    let open: Bool
    /// A ceremony an armed hold can make wait: answered off the pool thread.
    let mayBlock: Bool
    let handler: Handler
    private let pattern: [Substring?]

    init(_ method: String, _ template: String, open: Bool = false, mayBlock: Bool = false, _ handler: @escaping Handler) {
        self.method = method
        self.template = template
        self.open = open
        self.mayBlock = mayBlock
        self.handler = handler
        pattern = template.split(separator: "/").map { $0.hasPrefix("{") ? nil : $0 }
    }

    var segmentCount: Int { pattern.count }

    /// The parameters named in the template when `segments` fit it, in order; nil when they do not.
    func match(_ segments: [String]) -> [String]? {
        guard segments.count == pattern.count else { return nil }
        var parameters: [String] = []
        for (segment, literal) in zip(segments, pattern) {
            if let literal {
                guard segment == literal else { return nil }
            } else {
                parameters.append(segment)
            }
        }
        return parameters
    }
}

/// A request matched to a route: the HTTP request, the template's parameters, and the one origin a page
/// may act for.
struct RouteRequest {
    let http: HTTPRequest
    let parameters: [String]
    /// The page's `Origin` header: requests that carry one act only for that origin.
    let restrictedTo: String?

    /// The first template parameter (`{profile}`, `{id}`) and the second.
    var first: String { parameters[0] }
    var second: String { parameters[1] }

    func body(allowEmpty: Bool = false) throws(APIError) -> RequestBody { try RequestBody(http, allowEmpty: allowEmpty) }

    /// A query value, when given.
    func query(_ name: String) -> String? { http.query[name] }
}

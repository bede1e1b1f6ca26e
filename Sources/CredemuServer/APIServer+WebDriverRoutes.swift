import CredemuOperations
import WebAuthn

extension APIServer {
    /// WebAuthn L3 §11's virtual-authenticator commands at the WebDriver extension's paths without its
    /// `/session/{session id}` prefix (the server is one session). A success is WebDriver's `{"value": ...}`; a
    /// refusal is credemu's error body, `InvalidArgument` (WebDriver's "invalid argument") or `UnsupportedOperation`
    /// with a 400, an unknown authenticator or credential a 404 `NotFound`.
    static let webDriverRoutes: [Route] = [
        Route("POST", "/webauthn/authenticator", .operator) { s, r in
            s.webDriver(.string(try s.operations.addVirtualAuthenticator(try s.parameters(r))))
        },
        Route("DELETE", "/webauthn/authenticator/{authenticatorId}", .operator) { s, r in
            try s.operations.removeVirtualAuthenticator(r.first)
            return s.webDriver(.null)
        },
        Route("POST", "/webauthn/authenticator/{authenticatorId}/credential", .operator) { s, r in
            try s.operations.addVirtualCredential(r.first, try s.parameters(r))
            return s.webDriver(.null)
        },
        Route("GET", "/webauthn/authenticator/{authenticatorId}/credentials", .operator) { s, r in
            s.webDriver(.array(try s.operations.virtualCredentials(r.first)))
        },
        Route("DELETE", "/webauthn/authenticator/{authenticatorId}/credentials", .operator) { s, r in
            try s.operations.removeAllVirtualCredentials(r.first)
            return s.webDriver(.null)
        },
        Route("DELETE", "/webauthn/authenticator/{authenticatorId}/credentials/{credentialId}", .operator) { s, r in
            try s.operations.removeVirtualCredential(r.first, credentialID: r.second)
            return s.webDriver(.null)
        },
        Route("POST", "/webauthn/authenticator/{authenticatorId}/uv", .operator) { s, r in
            try s.operations.setVirtualUserVerified(r.first, try s.parameters(r))
            return s.webDriver(.null)
        },
        // Not §11's and not chromedriver's: CDP's WebAuthn.setResponseOverrideBits (docs/webdriver.md).
        Route("POST", "/webauthn/authenticator/{authenticatorId}/override-bits", .operator) { s, r in
            s.webDriver(try s.operations.setResponseOverrideBits(r.first, try s.parameters(r)))
        },
        Route("POST", "/webauthn/authenticator/{authenticatorId}/credentials/{credentialId}/props", .operator) { s, r in
            try s.operations.setVirtualCredentialProperties(r.first, credentialID: r.second, try s.parameters(r))
            return s.webDriver(.null)
        },
    ]

    /// A command's parameters: any JSON value, so that one which is not an object is the command's own
    /// `InvalidArgument` (§11's "If parameters is not a JSON Object"), not the body reader's `TypeError`.
    func parameters(_ r: RouteRequest) throws(APIError) -> JSONValue {
        do {
            return try JSONValue.parse(r.http.body)
        } catch {
            throw APIError(.invalidInput("The request body is not valid JSON: \(error.description)."))
        }
    }

    /// WebDriver's success: the command's data as `value`.
    func webDriver(_ value: JSONValue) -> HTTPResponse { json(200, .object([("value", value)])) }
}

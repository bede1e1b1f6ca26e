/// The console at `/`: the password manager's own window, served from the files compiled in
/// (`Resources/console.*`). It is the server's own origin, so the API treats its requests as first-party.
extension APIServer {
    /// Headers of every console file: no other page may frame it (clickjacking a vault's remove buttons), and
    /// it runs only its own script and style, with no inline code, and talks only to this server.
    static let consoleHeaders: [(String, String)] = [
        ("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
            + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
        ("X-Frame-Options", "DENY"),
        ("Referrer-Policy", "no-referrer"),
        ("Cross-Origin-Opener-Policy", "same-origin"),
        ("Cross-Origin-Resource-Policy", "same-origin"),
    ]

    /// One console file with the console's headers. The files hold no secret: the token reaches the page in
    /// the URL's fragment, which no request carries, and every datum comes through the guarded API.
    func console(_ name: String, type: String, _ request: HTTPRequest) -> HTTPResponse {
        var response = resource(name, type: type)
        if response.status == 200 { response.headers += APIServer.consoleHeaders }
        return response
    }
}

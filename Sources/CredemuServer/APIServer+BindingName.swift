extension APIServer {
    /// A name a driver can bind on `window` (Playwright `exposeBinding`, CDP `Runtime.addBinding`) and the shim's
    /// configuration can carry as it is: 1 to 64 of `[A-Za-z0-9_]`, not starting with a digit.
    static func isBindingName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...64).contains(bytes.count), !(0x30...0x39).contains(bytes[0]) else { return false }
        return bytes.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x5F }
    }
}

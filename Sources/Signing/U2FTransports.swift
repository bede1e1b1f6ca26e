/// The transports an attestation certificate names in the FIDO U2F transports extension.
///
/// FIDO U2F Authenticator Transports Extension v1.2 §3: `FIDOU2FTransports ::= BIT STRING { bluetoothRadio(0),
/// bluetoothLowEnergyRadio(1), uSB(2), nFC(3), uSBInternal(4) }`; `rawValue` bit n is the named bit n.
public struct U2FTransports: OptionSet, Equatable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x1F }

    public static let bluetoothClassic = U2FTransports(rawValue: 1 << 0)
    public static let bluetoothLowEnergy = U2FTransports(rawValue: 1 << 1)
    public static let usb = U2FTransports(rawValue: 1 << 2)
    public static let nfc = U2FTransports(rawValue: 1 << 3)
    public static let usbInternal = U2FTransports(rawValue: 1 << 4)

    /// From WebAuthn `AuthenticatorTransport` names (§5.8.4): "usb", "nfc", "ble"; the others ("internal",
    /// "hybrid", "smart-card") have no bit and are left out.
    public init(webAuthnNames names: [String]) {
        var bits: UInt8 = 0
        for name in names {
            switch name {
            case "usb": bits |= U2FTransports.usb.rawValue
            case "nfc": bits |= U2FTransports.nfc.rawValue
            case "ble": bits |= U2FTransports.bluetoothLowEnergy.rawValue
            default: break
            }
        }
        self.init(rawValue: bits)
    }

    /// The DER BIT STRING: named bit n is the byte's bit 7 - n, and the unused bits are the trailing zeros
    /// (X.690 §11.2.2: a named bit list has no trailing zero bits).
    var bitString: [UInt8] {
        var byte: UInt8 = 0
        for bit in 0..<5 where rawValue & (1 << bit) != 0 { byte |= 0x80 >> bit }
        if byte == 0 { return [0x03, 0x01, 0x00] }
        return [0x03, 0x02, UInt8(byte.trailingZeroBitCount), byte]
    }
}

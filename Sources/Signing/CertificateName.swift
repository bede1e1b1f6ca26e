/// A certificate subject: C, O, OU and CN, each checked against RFC 5280's bounds before OpenSSL sees it.
public struct CertificateName: Equatable, Sendable {
    public var country: String
    public var organization: String
    /// Left out of the name when empty.
    public var organizationalUnit: String
    public var commonName: String

    /// Refuses a country that is not two letters A-Z (ISO 3166-1 alpha-2, a PrintableString), and an
    /// organization, unit or common name over 64 characters (RFC 5280 Appendix A's ub-organization-name,
    /// ub-organizational-unit-name, ub-common-name) or holding a control character; only the unit may be empty.
    public init(country: String, organization: String, organizationalUnit: String = "", commonName: String) throws(SigningError) {
        guard country.utf8.count == 2, country.utf8.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) else {
            throw SigningError(.certificate, "A certificate's country is two capital letters (ISO 3166-1 alpha-2), not \"\(country)\".")
        }
        for (field, value, mayBeEmpty) in [("organization", organization, false), ("organizational unit", organizationalUnit, true),
                                           ("common name", commonName, false)] {
            let scalars = value.unicodeScalars
            guard scalars.count <= 64, mayBeEmpty || !scalars.isEmpty,
                  !scalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw SigningError(.certificate, "A certificate's \(field) is 1 to 64 characters without control characters.")
            }
        }
        self.country = country
        self.organization = organization
        self.organizationalUnit = organizationalUnit
        self.commonName = commonName
    }
}

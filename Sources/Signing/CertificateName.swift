/// A certificate subject: C, O, OU and CN, each checked against RFC 5280's bounds before OpenSSL sees it.
public struct CertificateName: Equatable, Sendable {
    public var country: String
    public var organization: String
    /// Left out of the name when empty.
    public var organizationalUnit: String
    public var commonName: String

    /// The most an organization, unit or common name holds, in Unicode scalars: RFC 5280 Appendix A's
    /// ub-organization-name, ub-organizational-unit-name and ub-common-name (64), counted as OpenSSL counts a
    /// UTF8String's characters when it applies them (`ASN1_mbstring_ncopy`: code points), not as Swift's
    /// `Character`s (a letter and its combining mark, or an emoji sequence, are one `Character` and several scalars).
    public static let fieldLimit = 64

    /// Free text made into a field value: control characters dropped, then cut at a `Character` boundary to at
    /// most `fieldLimit` scalars, so a letter keeps its marks and the cut never splits an emoji sequence. What a
    /// name from elsewhere (a pack's name, the attestation's vendor) passes through before `init` sees it.
    public static func fitting(_ value: String) -> String {
        var out = "", scalars = 0
        for character in value {
            let kept = character.unicodeScalars.filter { $0.properties.generalCategory != .control }
            guard scalars + kept.count <= fieldLimit else { break }
            out.unicodeScalars.append(contentsOf: kept)
            scalars += kept.count
        }
        return out
    }

    /// Refuses a country that is not two letters A-Z (ISO 3166-1 alpha-2, a PrintableString), and an
    /// organization, unit or common name over `fieldLimit` scalars or holding a control character; only the unit
    /// may be empty.
    public init(country: String, organization: String, organizationalUnit: String = "", commonName: String) throws(SigningError) {
        guard country.utf8.count == 2, country.utf8.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) else {
            throw SigningError(.certificate, "A certificate's country is two capital letters (ISO 3166-1 alpha-2), not \"\(country)\".")
        }
        for (field, value, mayBeEmpty) in [("organization", organization, false), ("organizational unit", organizationalUnit, true),
                                           ("common name", commonName, false)] {
            let scalars = value.unicodeScalars
            guard scalars.count <= CertificateName.fieldLimit, mayBeEmpty || !scalars.isEmpty,
                  !scalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw SigningError(.certificate, "A certificate's \(field) is 1 to \(CertificateName.fieldLimit) Unicode scalars without control characters.")
            }
        }
        self.country = country
        self.organization = organization
        self.organizationalUnit = organizationalUnit
        self.commonName = commonName
    }
}

import Foundation
import Vault
import WebAuthn

/// A policy pack read from JSON (`providers/*.json`, schema in `providers/README.md` and
/// `providers/policy-pack.schema.json`): base knobs plus per-platform variants, each knob citing its source.
public struct PolicyPack: ProviderPolicy {
    public let id: String
    public let name: String
    public let version: String
    public let platforms: [Platform]
    public let defaultPlatform: Platform
    /// Source ID to citation.
    public let sources: [(String, String)]
    private let base: [String: Knob]
    private let variants: [Platform: [String: Knob]]

    struct Knob: Sendable {
        var value: JSONValue
        var source: String
        var unconfirmed: String?
    }

    /// Reads and validates a pack; every problem names the pack file, the knob and what was expected.
    public init(json text: String, origin: String = "pack") throws(InvalidConfiguration) {
        let document: JSONValue
        do {
            document = try JSONValue.parse(text)
        } catch {
            throw InvalidConfiguration(.policyPack, "\(origin): not valid JSON: \(error.description)")
        }
        try PolicyPack.checkExtensionClaims(document, origin: origin)
        self = try InvalidConfiguration.reading(.policyPack, from: origin) { () throws(InvalidConfiguration.Field) in
            try PolicyPack(document: document)
        }
    }

    private init(document: JSONValue) throws(InvalidConfiguration.Field) {
        let pack = try ConfigurationFields(document, path: "pack")
        try pack.onlyKeys(["schema", "id", "name", "version", "provider", "description", "sources", "platforms", "defaultPlatform",
                           "knobs", "variants"])
        guard try pack.string("schema") == "credemu-policy-pack/1" else { throw pack.invalid("schema", "must be \"credemu-policy-pack/1\"") }
        let id = try pack.requiredString("id")
        guard !id.isEmpty, id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else {
            throw pack.invalid("id", "must be a non-empty string of letters, digits and '-'")
        }
        let name = try pack.requiredString("name")
        let version = try pack.requiredString("version")
        _ = try pack.string("provider")
        _ = try pack.string("description")
        let sourceFields = try pack.requiredObject("sources")
        guard !sourceFields.members.isEmpty else { throw pack.invalid("sources", "must be a non-empty object of source ID to citation") }
        var sources: [(String, String)] = []
        for (key, value) in sourceFields.members {
            guard let citation = value.stringValue, !citation.isEmpty else { throw sourceFields.invalid(key, "must be a citation string") }
            sources.append((key, citation))
        }
        let sourceIDs = Set(sources.map(\.0))
        var platforms: [Platform] = []
        for platformName in try pack.strings("platforms") {
            guard let platform = Platform(rawValue: platformName) else {
                throw pack.invalid("platforms", "has \"\(platformName)\", which is not one of \(Platform.allCases.map(\.rawValue))")
            }
            platforms.append(platform)
        }
        guard !platforms.isEmpty else { throw pack.invalid("platforms", "must list at least one of \(Platform.allCases.map(\.rawValue))") }
        guard let defaultPlatform = Platform(rawValue: try pack.requiredString("defaultPlatform")), platforms.contains(defaultPlatform) else {
            throw pack.invalid("defaultPlatform", "must be one of the pack's platforms")
        }
        let knobs = try pack.requiredObject("knobs")
        let base = try PolicyPack.readKnobs(knobs, sourceIDs: sourceIDs)
        if let missing = KnobSpec.all.keys.sorted().first(where: { base[$0] == nil }) {
            throw knobs.invalid(missing, "is missing: every knob needs a value and a source in the base knobs")
        }
        var variants: [Platform: [String: Knob]] = [:]
        if let variantFields = try pack.object("variants") {
            for (platformName, _) in variantFields.members {
                guard let platform = Platform(rawValue: platformName), platforms.contains(platform) else {
                    throw variantFields.invalid(platformName, "is not one of the pack's platforms")
                }
                variants[platform] = try PolicyPack.readKnobs(try variantFields.requiredObject(platformName), sourceIDs: sourceIDs)
            }
        }
        self.id = id
        self.name = name
        self.version = version
        self.platforms = platforms
        self.defaultPlatform = defaultPlatform
        self.sources = sources
        self.base = base
        self.variants = variants
        // Resolve every platform once so a bad combination fails here, not in a ceremony.
        for platform in platforms { _ = try resolve(platform) }
    }

    /// Loads a pack file.
    public static func load(path: String) throws(InvalidConfiguration) -> PolicyPack {
        guard let data = FileManager.default.contents(atPath: path) else { throw InvalidConfiguration(.policyPack, "\(path): cannot be read") }
        return try PolicyPack(json: String(decoding: data, as: UTF8.self), origin: path)
    }

    private static func readKnobs(_ knobs: ConfigurationFields, sourceIDs: Set<String>) throws(InvalidConfiguration.Field) -> [String: Knob] {
        var out: [String: Knob] = [:]
        for (name, entry) in knobs.members {
            guard let spec = KnobSpec.all[name] else { throw knobs.invalid(name, "is not a known knob (see providers/README.md)") }
            guard entry.objectValue != nil, let value = entry["value"] else { throw knobs.invalid(name, "must be {\"value\": ..., \"source\": ...}") }
            let fields = try ConfigurationFields(entry, path: .member(knobs.path, name))
            try fields.onlyKeys(["value", "source", "unconfirmed", "note"])
            guard let source = try fields.string("source"), sourceIDs.contains(source) else {
                throw knobs.invalid(name, "must name its source, one of the pack's sources: \(sourceIDs.sorted())")
            }
            let unconfirmed = try fields.string("unconfirmed")
            if unconfirmed?.isEmpty == true { throw fields.invalid("unconfirmed", "must say why this value was chosen") }
            _ = try fields.string("note")
            if let problem = spec.check(value) { throw knobs.invalid(name, problem) }
            out[name] = Knob(value: value, source: source, unconfirmed: unconfirmed)
        }
        return out
    }

    public func knobs(for platform: Platform) -> PolicyKnobs {
        // Validated in init for every platform of the pack; another platform gets the base knobs.
        (try? resolve(platforms.contains(platform) ? platform : defaultPlatform)) ?? (try! resolve(defaultPlatform))
    }

    /// The knob entries in force on a platform: base, overridden by the platform's variant.
    func entries(for platform: Platform) -> [String: Knob] {
        base.merging(variants[platform] ?? [:]) { _, variant in variant }
    }

    /// The citation of a source ID.
    public func citation(_ source: String) -> String { sources.first { $0.0 == source }?.1 ?? source }

    /// Knob name to its value, source citation and unconfirmed note, on a platform: for `credemu providers`.
    public func describe(_ platform: Platform) -> [(String, JSONValue, String, String?)] {
        entries(for: platform).sorted { $0.key < $1.key }.map { ($0.key, $0.value.value, citation($0.value.source), $0.value.unconfirmed) }
    }

    private func resolve(_ platform: Platform) throws(InvalidConfiguration.Field) -> PolicyKnobs {
        let k = entries(for: platform)
        func v(_ name: String) -> JSONValue { k[name]!.value }
        func s(_ name: String) -> String { v(name).stringValue ?? "" }
        func b(_ name: String) -> Bool { v(name).boolValue ?? false }
        func i(_ name: String) -> Int { Int(v(name).numberValue ?? 0) }
        func list(_ name: String) -> [String] { v(name).arrayValue?.compactMap(\.stringValue) ?? [] }
        if b("authenticator.backupState") && !b("authenticator.backupEligible") {
            throw .invalidField("pack \(id), platform \(platform.rawValue): authenticator.backupState needs authenticator.backupEligible")
        }
        var provenance: [String: (source: String, unconfirmed: String?)] = [:]
        for (name, knob) in k { provenance[name] = (citation(knob.source), knob.unconfirmed) }
        var knobs = PolicyKnobs(
            aaguid: AAGUID.parse(s("authenticator.aaguid"))!,
            algorithms: list("authenticator.algorithms").compactMap(COSEAlgorithm.init(name:)),
            backupEligible: b("authenticator.backupEligible"), backupState: b("authenticator.backupState"),
            counter: CounterMode(rawValue: s("authenticator.counter"))!, transports: list("authenticator.transports"),
            attestation: AttestationCapability(rawValue: s("authenticator.attestation"))!,
            userVerification: .init(rawValue: s("authenticator.userVerification"))!,
            exclusionOutcome: .init(rawValue: s("exclusion.outcome"))!, exclusionScope: .init(rawValue: s("exclusion.scope"))!,
            conditionalMode: .init(rawValue: s("conditionalCreate.mode"))!,
            minimumPlayServices: v("conditionalCreate.minimumPlayServices").stringValue,
            minimumOSVersion: v("conditionalCreate.minimumOSVersion").stringValue,
            windowSeconds: i("conditionalCreate.windowSeconds"), matchUsername: b("conditionalCreate.matchUsername"),
            countedTimes: list("conditionalCreate.countedTimes"), rejectIfPasskeyExists: b("conditionalCreate.rejectIfPasskeyExists"),
            requirePasscode: b("conditionalCreate.requirePasscode"), conditionalUserPresent: b("conditionalCreate.userPresent"),
            conditionalUserVerified: b("conditionalCreate.userVerified"),
            conditionalExclusion: .init(rawValue: s("conditionalCreate.excludedCredential"))!,
            androidIneligible: .init(rawValue: s("conditionalCreate.androidIneligible"))!,
            appleIneligibleCode: i("conditionalCreate.appleIneligibleCode"), notification: s("conditionalCreate.notification"),
            unknownCredential: .init(rawValue: s("signals.unknownCredential"))!,
            allAcceptedCredentials: .init(rawValue: s("signals.allAcceptedCredentials"))!,
            allAcceptedScope: .init(rawValue: s("signals.allAcceptedScope"))!,
            currentUserDetails: .init(rawValue: s("signals.currentUserDetails"))!,
            signalErrorSurface: .init(rawValue: s("signals.errorSurface"))!, rateLimit: .none,
            clientCapabilities: (v("capabilities.client").objectValue ?? []).compactMap { key, value in value.boolValue.map { (key, $0) } }
                .sorted { $0.0 < $1.0 },
            conditionalMediation: b("capabilities.conditionalMediation"),
            userVerifyingPlatformAuthenticator: b("capabilities.userVerifyingPlatformAuthenticator"),
            attachment: s("authenticator.attachment"), otherAttachment: .init(rawValue: s("authenticator.otherAttachment"))!,
            provenance: provenance)
        knobs.rateLimits = Dictionary(uniqueKeysWithValues: ["unknown", "accepted", "details"].map {
            ($0, PolicyPack.rateLimit(v(PolicyKnobs.rateLimitKnob($0))))
        })
        knobs.model = .init(rawValue: s("authenticator.model"))!
        knobs.signalDecodeOrder = .init(rawValue: s("signals.decodeOrder"))!
        knobs.signalMethods = b("signals.methodsExposed")
        knobs.signalsForwarded = b("signals.forwarded")
        knobs.exclusionList = .init(rawValue: s("exclusion.excludeCredentials"))!
        knobs.prfAtCreationSince = v("extensions.prfAtCreationSince").stringValue
        knobs.publicKeyExposure = .init(rawValue: s("response.getPublicKey"))!
        knobs.prf = .init(rawValue: s("extensions.prf"))!
        knobs.largeBlob = .init(rawValue: s("extensions.largeBlob"))!
        knobs.appid = .init(rawValue: s("extensions.appid"))!
        knobs.hmacSecret = .init(rawValue: s("extensions.hmacSecret"))!
        knobs.credProtect = .init(rawValue: s("extensions.credProtect"))!
        knobs.credBlob = .init(rawValue: s("extensions.credBlob"))!
        knobs.minPinLength = .init(rawValue: s("extensions.minPinLength"))!
        knobs.requireSyncedProfile = b("conditionalCreate.requireSyncedProfile")
        knobs.countedPasswords = .init(rawValue: s("conditionalCreate.countedPasswords"))!
        knobs.passwordMatch = .init(rawValue: s("conditionalCreate.passwordMatch"))!
        knobs.priorOfSameUser = .init(rawValue: s("passkeys.priorOfSameUser"))!
        knobs.importedBackupFlags = .init(rawValue: s("import.backupFlags"))!
        knobs.detailsRespectUserEdit = b("signals.currentUserDetailsRespectsUserEdit")
        knobs.privateBrowsing = .init(rawValue: s("conditionalCreate.privateBrowsing"))!
        knobs.unusedPassword = .init(rawValue: s("passwords.reportUnused"))!
        knobs.relatedOriginsMaxLabels = i("relatedOrigins.maxLabels")
        knobs.relatedOriginsSince = v("relatedOrigins.sinceBrowserVersion").stringValue
        knobs.integration = .init(rawValue: s("device.integration"))!
        knobs.appleMatchedExcludedSince = v("apple.matchedExcludedCredentialSince").stringValue
        knobs.appleDeviceNotConfiguredSince = v("apple.deviceNotConfiguredSince").stringValue
        knobs.conditionalGet = .init(rawValue: s("conditionalGet.mode"))!
        knobs.noCredentialSheet = s("modalGet.noCredential") == "sheetUntilDismissed"
        if knobs.conditionalGet == .passedToBrowser && knobs.conditionalMediation {
            throw .invalidField("pack \(id), platform \(platform.rawValue): conditionalGet.mode passedToBrowser needs capabilities.conditionalMediation false (the provider's page never offers conditional mediation it does not answer)")
        }
        knobs.webAuthenticationProxy = b("conditionalGet.webAuthenticationProxy")
        knobs.webAuthenticationProxySince = v("conditionalGet.webAuthenticationProxySince").stringValue
        knobs.immediateGetSince = v("immediateGet.sinceBrowserVersion").stringValue
        knobs.immediateGetTimeoutMillis = i("immediateGet.timeoutMillis")
        knobs.immediateGetRateLimit = PolicyPack.immediateRateLimit(v("immediateGet.rateLimit"))
        knobs.immediateGetRefusedInPrivate = s("immediateGet.privateBrowsing") == "notAllowed"
        knobs.immediateGetTransports = list("immediateGet.transports")
        return knobs
    }

    /// A `signals.rateLimit.*` value (checked by `KnobSpec.rateLimit`).
    static func rateLimit(_ rate: JSONValue) -> PolicyKnobs.RateLimit {
        let overQuota = PolicyKnobs.OverQuota(rawValue: rate["overQuota"]?.stringValue ?? "drop") ?? .drop
        switch rate["kind"]?.stringValue {
        case "tokenBucket":
            return .tokenBucket(capacity: Int(rate["capacity"]?.numberValue ?? 0), refillSeconds: Int(rate["refillSeconds"]?.numberValue ?? 0),
                                exemptLocalhost: rate["exemptLocalhost"]?.boolValue ?? false, overQuota: overQuota)
        case "window":
            return .window(max: Int(rate["max"]?.numberValue ?? 0), windowSeconds: Int(rate["windowSeconds"]?.numberValue ?? 0), overQuota: overQuota)
        default:
            return .none
        }
    }

    /// An `immediateGet.rateLimit` value (checked by `KnobSpec.immediateRateLimit`).
    static func immediateRateLimit(_ rate: JSONValue) -> PolicyKnobs.ImmediateRateLimit {
        guard rate["kind"]?.stringValue == "slidingWindows" else { return .none }
        let windows = (rate["windows"]?.arrayValue ?? []).map { (max: Int($0["max"]?.numberValue ?? 0), seconds: Int($0["windowSeconds"]?.numberValue ?? 0)) }
        return .init(windows: windows, exemptLocalhost: rate["exemptLocalhost"]?.boolValue ?? false)
    }

    /// Refuses a claim of an extension the engine cannot answer (`Engine.answeredExtensions`): an `extension:`
    /// capability that is true, or an `extensions.` knob the engine does not have, in the base knobs or a variant.
    /// Read from the document as given, before the rest of the pack is checked.
    static func checkExtensionClaims(_ document: JSONValue, origin: String) throws(InvalidConfiguration) {
        let answered = Engine.answeredExtensions
        let list = answered.sorted().joined(separator: ", ")
        var groups: [(String, JSONValue)] = [("knobs", document["knobs"] ?? .null)]
        for (platform, knobs) in document["variants"]?.objectValue ?? [] { groups.append(("variants.\(platform)", knobs)) }
        for (path, knobs) in groups {
            for (name, _) in knobs.objectValue ?? [] where name.hasPrefix("extensions.") && KnobSpec.all[name] == nil {
                throw InvalidConfiguration(.unansweredExtension, "\(origin): pack.\(path).\(name) sets an extension credemu cannot answer (it answers \(list)).")
            }
            for (capability, value) in knobs["capabilities.client"]?["value"]?.objectValue ?? [] where capability.hasPrefix("extension:") {
                let name = String(capability.dropFirst("extension:".count))
                guard value.boolValue == true, !answered.contains(name) else { continue }
                throw InvalidConfiguration(.unansweredExtension, "\(origin): pack.\(path).capabilities.client claims \"\(capability)\": true, but credemu cannot answer the \(name) extension (it answers \(list)); leave the key out.")
            }
        }
    }
}

/// The knobs a pack must set, and what each accepts. Adding a provider difference means adding a knob here,
/// reading it in `PolicyPack.resolve`, and setting it in every pack.
enum KnobSpec {
    case bool
    case int(ClosedRange<Int64>)
    case string
    case optionalVersion
    case oneOf([String])
    case listOf([String]?)
    case uuid
    case rateLimit
    case immediateRateLimit
    case capabilityMap

    /// A rate limit's counts and periods, small enough that no arithmetic on them overflows.
    static let counts: ClosedRange<Int64> = 1...Int64(Int32.max)

    func check(_ v: JSONValue) -> String? {
        func count(_ n: JSONValue?) -> Bool { n?.integerValue(in: KnobSpec.counts) != nil }
        switch self {
        case .bool: return v.boolValue == nil ? "must be true or false" : nil
        case .int(let range):
            return v.integerValue(in: range) == nil ? "must be an integer in \(range)" : nil
        case .string: return v.stringValue == nil ? "must be a string" : nil
        case .optionalVersion:
            if v.isNull { return nil }
            guard let s = v.stringValue, Version(s) != nil else { return "must be null or a dotted version such as \"25.13\"" }
            return nil
        case .oneOf(let options):
            guard let s = v.stringValue, options.contains(s) else { return "must be one of \(options)" }
            return nil
        case .listOf(let options):
            guard let items = v.arrayValue, items.allSatisfy({ $0.stringValue != nil }) else { return "must be a list of strings" }
            if let options, let bad = items.compactMap(\.stringValue).first(where: { !options.contains($0) }) {
                return "has \"\(bad)\"; allowed: \(options)"
            }
            return nil
        case .uuid: return v.stringValue.flatMap(AAGUID.parse) == nil ? "must be a UUID" : nil
        case .rateLimit:
            switch v["kind"]?.stringValue {
            case "none": return nil
            case "tokenBucket":
                guard count(v["capacity"]), count(v["refillSeconds"]), v["exemptLocalhost"]?.boolValue != nil,
                      ["drop", "reject"].contains(v["overQuota"]?.stringValue ?? "")
                else { return "tokenBucket needs capacity and refillSeconds (\(KnobSpec.counts)), exemptLocalhost and overQuota (drop or reject)" }
                return nil
            case "window":
                guard count(v["max"]), count(v["windowSeconds"]), ["drop", "reject"].contains(v["overQuota"]?.stringValue ?? "")
                else { return "window needs max and windowSeconds (\(KnobSpec.counts)) and overQuota (drop or reject)" }
                return nil
            default: return "kind must be none, tokenBucket or window"
            }
        case .immediateRateLimit:
            switch v["kind"]?.stringValue {
            case "none": return nil
            case "slidingWindows":
                guard let windows = v["windows"]?.arrayValue, !windows.isEmpty, windows.count <= 8,
                      windows.allSatisfy({ count($0["max"]) && count($0["windowSeconds"]) && $0.objectValue?.count == 2 }),
                      v["exemptLocalhost"]?.boolValue != nil
                else { return "slidingWindows needs windows (1 to 8 of {max, windowSeconds}, each in \(KnobSpec.counts)) and exemptLocalhost" }
                return nil
            default: return "kind must be none or slidingWindows"
            }
        case .capabilityMap:
            guard let members = v.objectValue, members.allSatisfy({ $0.1.boolValue != nil }) else {
                return "must map capability names to true or false"
            }
            return nil
        }
    }

    static let all: [String: KnobSpec] = [
        "authenticator.model": .oneOf(PolicyKnobs.Model.allCases.map(\.rawValue)),
        "authenticator.aaguid": .uuid,
        "authenticator.algorithms": .listOf(COSEAlgorithm.allCases.map(\.name)),
        "authenticator.backupEligible": .bool,
        "authenticator.backupState": .bool,
        "authenticator.counter": .oneOf(CounterMode.allCases.map(\.rawValue)),
        "authenticator.transports": .listOf(nil),
        "authenticator.attestation": .oneOf(AttestationCapability.allCases.map(\.rawValue)),
        "authenticator.userVerification": .oneOf(["performed", "alwaysClaimed"]),
        "authenticator.attachment": .oneOf(["platform", "cross-platform"]),
        "authenticator.otherAttachment": .oneOf(["notOffered", "answered"]),
        "exclusion.outcome": .oneOf(["InvalidStateError", "NotAllowedError", "noAnswer"]),
        "exclusion.scope": .oneOf(["relyingParty", "sameUser"]),
        "exclusion.excludeCredentials": .oneOf(PolicyKnobs.ExclusionList.allCases.map(\.rawValue)),
        "conditionalCreate.mode": .oneOf(["silent", "modal", "unsupported"]),
        "conditionalCreate.minimumPlayServices": .optionalVersion,
        "conditionalCreate.minimumOSVersion": .optionalVersion,
        "conditionalCreate.windowSeconds": .int(0...86_400),
        "conditionalCreate.matchUsername": .bool,
        "conditionalCreate.countedTimes": .listOf(["created", "lastFilled", "lastUsed"]),
        "conditionalCreate.rejectIfPasskeyExists": .bool,
        "conditionalCreate.requirePasscode": .bool,
        "conditionalCreate.userPresent": .bool,
        "conditionalCreate.userVerified": .bool,
        "conditionalCreate.excludedCredential": .oneOf(["noop", "error"]),
        "conditionalCreate.androidIneligible": .oneOf(["CreateCredentialNoCreateOptionException", "CreatePublicKeyCredentialDomException"]),
        "conditionalCreate.appleIneligibleCode": .int(1000...1010),
        "conditionalCreate.notification": .string,
        "signals.unknownCredential": .oneOf(["hide", "delete", "ignore"]),
        "signals.allAcceptedCredentials": .oneOf(["hideAndRestore", "deleteMissing", "ignore"]),
        "signals.allAcceptedScope": .oneOf(["firstPasskey", "allPasskeys"]),
        "signals.currentUserDetails": .oneOf(["nameAndDisplayName", "nameOnly", "ignore"]),
        "signals.errorSurface": .oneOf(["resolve", "UnknownError"]),
        "signals.decodeOrder": .oneOf(["acceptedListFirst", "userIdFirst"]),
        "signals.methodsExposed": .bool,
        "signals.forwarded": .bool,
        "signals.rateLimit.unknownCredential": .rateLimit,
        "signals.rateLimit.allAcceptedCredentials": .rateLimit,
        "signals.rateLimit.currentUserDetails": .rateLimit,
        "response.getPublicKey": .oneOf(["subjectPublicKeyInfo", "null", "absent"]),
        "extensions.prf": .oneOf(["notProcessed", "unsupported", "evaluatedOnGet", "evaluatedOnCreateAndGet"]),
        "extensions.prfAtCreationSince": .optionalVersion,
        "extensions.largeBlob": .oneOf(["notProcessed", "unsupported", "supported"]),
        "extensions.appid": .oneOf(PolicyKnobs.ExtensionSupport.allCases.map(\.rawValue)),
        "extensions.hmacSecret": .oneOf(PolicyKnobs.ExtensionSupport.allCases.map(\.rawValue)),
        "extensions.credProtect": .oneOf(PolicyKnobs.ExtensionSupport.allCases.map(\.rawValue)),
        "extensions.credBlob": .oneOf(PolicyKnobs.ExtensionSupport.allCases.map(\.rawValue)),
        "extensions.minPinLength": .oneOf(["notProcessed", "supported"]),
        "conditionalCreate.requireSyncedProfile": .bool,
        "conditionalCreate.countedPasswords": .oneOf(["ownStore", "anyStore"]),
        "conditionalCreate.passwordMatch": .oneOf(["exact", "exactOrPSL"]),
        "passkeys.priorOfSameUser": .oneOf(PriorOfSameUser.allCases.map(\.rawValue)),
        "import.backupFlags": .oneOf(PolicyKnobs.ImportedBackupFlags.allCases.map(\.rawValue)),
        "signals.currentUserDetailsRespectsUserEdit": .bool,
        "conditionalCreate.privateBrowsing": .oneOf(["allowed", "ineligible"]),
        "relatedOrigins.maxLabels": .int(0...100),
        "relatedOrigins.sinceBrowserVersion": .optionalVersion,
        "device.integration": .oneOf(PolicyKnobs.Integration.allCases.map(\.rawValue)),
        "passwords.reportUnused": .oneOf(["hide", "delete", "ignore", "unsupported"]),
        "apple.matchedExcludedCredentialSince": .optionalVersion,
        "apple.deviceNotConfiguredSince": .optionalVersion,
        "conditionalGet.mode": .oneOf(["answered", "passedToBrowser"]),
        "modalGet.noCredential": .oneOf(["failsAtOnce", "sheetUntilDismissed"]),
        "conditionalGet.webAuthenticationProxy": .bool,
        "conditionalGet.webAuthenticationProxySince": .optionalVersion,
        "immediateGet.sinceBrowserVersion": .optionalVersion,
        "immediateGet.timeoutMillis": .int(1...600_000),
        "immediateGet.rateLimit": .immediateRateLimit,
        "immediateGet.privateBrowsing": .oneOf(["notAllowed", "allowed"]),
        "immediateGet.transports": .listOf(["internal", "hybrid", "usb", "nfc", "ble", "smart-card"]),
        "capabilities.client": .capabilityMap,
        "capabilities.conditionalMediation": .bool,
        "capabilities.userVerifyingPlatformAuthenticator": .bool,
    ]
}

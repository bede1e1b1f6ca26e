/// Scenario labels for credentials, and back: `pk1`, `pk2`, ... in the order the vault shows them, or the label a
/// step gives (`as`), so cells never carry random IDs.
struct CredentialLabels {
    private var ids: [String: [UInt8]] = [:]
    private var names: [[UInt8]: String] = [:]
    private var counter = 0

    /// The credential a label names.
    subscript(label: String) -> [UInt8]? { ids[label] }

    /// The credential's label, numbering it next when it has none.
    mutating func name(for id: [UInt8]) -> String {
        if let existing = names[id] { return existing }
        counter += 1
        let name = "pk\(counter)"
        assign(name, to: id)
        return name
    }

    /// Names a credential `label`; a credential the label named before loses it.
    mutating func assign(_ label: String, to id: [UInt8]) {
        if let previous = ids[label], previous != id { names[previous] = nil }
        if let old = names[id], old != label { ids[old] = nil }
        ids[label] = id
        names[id] = label
    }

    /// Gives back the number `name(for:)` just took, for a credential a step then labelled itself.
    mutating func giveBackNumber() { counter -= 1 }
}

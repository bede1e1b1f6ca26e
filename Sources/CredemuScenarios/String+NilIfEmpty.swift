extension String {
    /// nil for "": a joined list with nothing in it is no value.
    var nilIfEmpty: String? { isEmpty ? nil : self }
}

extension Int {
    /// `value` rounded toward zero and clamped to `Int`'s range, NaN as zero: for durations worked out from dates
    /// and timeouts, where a huge or non-finite number must not trap.
    public init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value >= Double(Int.max) {
            self = .max
        } else if value <= Double(Int.min) {
            self = .min
        } else {
            self = Int(value)
        }
    }
}

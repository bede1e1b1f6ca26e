extension Array where Element == UInt8 {
    /// Whether `word` occurs anywhere in these bytes: a plain scan, for the bodies the server bounds (its body cap)
    /// and asks one fixed word of (`APIServer.mentionsConditional`, `DevToolsChannel.literalSafe`).
    func containsBytes(_ word: [UInt8]) -> Bool {
        guard let first = word.first else { return true }
        return withUnsafeBufferPointer { bytes in
            word.withUnsafeBufferPointer { word in
                guard bytes.count >= word.count else { return false }
                var start = 0
                while start <= bytes.count - word.count {
                    if bytes[start] == first {
                        var i = 1
                        while i < word.count && bytes[start + i] == word[i] { i += 1 }
                        if i == word.count { return true }
                    }
                    start += 1
                }
                return false
            }
        }
    }
}

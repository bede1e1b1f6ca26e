import CSQLite

extension SQLiteDatabase {
    /// The SQL function `credemu_password_site(realm)`: `PasswordSite.of`, so the column a save writes and the one
    /// migration 9 fills come from one implementation. NULL for NULL, a blob or a realm with no site.
    static func registerPasswordSite(_ db: OpaquePointer) -> Int32 {
        sqlite3_create_function_v2(db, "credemu_password_site", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, { context, count, values in
            guard count == 1, let value = values?[0], sqlite3_value_type(value) == SQLITE_TEXT, let text = sqlite3_value_text(value) else {
                sqlite3_result_null(context)
                return
            }
            let length = Int(sqlite3_value_bytes(value))
            let realm = String(decoding: UnsafeBufferPointer(start: text, count: length), as: UTF8.self)
            guard let site = PasswordSite.of(realm) else {
                sqlite3_result_null(context)
                return
            }
            sqlite3_result_text(context, site, -1, csqlite_transient())
        }, nil, nil, nil)
    }
}

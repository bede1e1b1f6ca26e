/// The vault schema, one migration per version; `PRAGMA user_version` records how many have run.
enum VaultMigrations {
    static let all: [String] = [
        // 1: passwords, passkeys, profiles, the event log, signal quotas and scripted user decisions.
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value BLOB NOT NULL);
        CREATE TABLE passwords (
            id INTEGER PRIMARY KEY,
            profile TEXT NOT NULL,
            origin TEXT NOT NULL,
            username TEXT NOT NULL,
            password BLOB NOT NULL,
            created_at INTEGER NOT NULL,
            last_filled_at INTEGER,
            last_used_at INTEGER,
            UNIQUE (profile, origin, username)
        );
        CREATE TABLE passkeys (
            credential_id BLOB PRIMARY KEY,
            profile TEXT NOT NULL,
            rp_id TEXT NOT NULL,
            user_handle BLOB NOT NULL,
            user_name TEXT NOT NULL,
            display_name TEXT NOT NULL,
            algorithm INTEGER NOT NULL,
            private_key BLOB NOT NULL,
            public_key BLOB NOT NULL,
            sign_count INTEGER NOT NULL,
            counter TEXT NOT NULL CHECK (counter IN ('zero', 'increment')),
            backup_eligible INTEGER NOT NULL,
            backup_state INTEGER NOT NULL,
            aaguid BLOB NOT NULL,
            discoverable INTEGER NOT NULL,
            attestation TEXT NOT NULL CHECK (attestation IN ('none', 'packed')),
            hidden INTEGER NOT NULL DEFAULT 0,
            hidden_at INTEGER,
            created_at INTEGER NOT NULL,
            last_used_at INTEGER
        );
        CREATE INDEX passkeys_by_rp ON passkeys (profile, rp_id, user_handle);
        CREATE INDEX passkeys_by_user_name ON passkeys (profile, rp_id, user_name);
        CREATE TABLE profiles (
            name TEXT PRIMARY KEY,
            settings TEXT NOT NULL,
            created_at INTEGER NOT NULL
        );
        CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            profile TEXT NOT NULL,
            at INTEGER NOT NULL,
            kind TEXT NOT NULL,
            outcome TEXT NOT NULL,
            reason TEXT NOT NULL,
            detail TEXT NOT NULL
        );
        CREATE TABLE signal_quota (
            profile TEXT NOT NULL,
            key TEXT NOT NULL,
            state TEXT NOT NULL,
            PRIMARY KEY (profile, key)
        );
        CREATE TABLE user_decisions (
            id INTEGER PRIMARY KEY,
            profile TEXT NOT NULL,
            decision TEXT NOT NULL
        );
        """,
    ]

    static func migrate(_ db: SQLiteDatabase, from version: Int) throws(VaultError) {
        for (index, sql) in all.enumerated() where index >= version {
            try db.execute(sql)
            try db.execute("PRAGMA user_version = \(index + 1)")
        }
    }
}

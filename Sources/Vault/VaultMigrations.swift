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
        // 2: an index for every read a ceremony, signal or finding makes (issue 11: cost independent of size): a
        // get's offer in recency order, an account's passkeys oldest first, the log by kind, the decision queue;
        // and the marks findings read instead of the log, derived from the log as it stands (`EventMark`'s rules).
        """
        CREATE INDEX passkeys_offered ON passkeys (profile, rp_id, coalesce(last_used_at, created_at) DESC, created_at DESC, credential_id)
            WHERE hidden = 0 AND discoverable = 1;
        DROP INDEX passkeys_by_rp;
        CREATE INDEX passkeys_by_rp ON passkeys (profile, rp_id, user_handle, created_at, credential_id);
        DROP INDEX passkeys_by_user_name;
        CREATE INDEX passkeys_by_user_name ON passkeys (profile, rp_id, user_name, created_at, credential_id);
        CREATE INDEX events_by_kind ON events (profile, kind, id);
        CREATE INDEX user_decisions_by_profile ON user_decisions (profile, id);
        CREATE TABLE event_marks (
            profile TEXT NOT NULL,
            mark TEXT NOT NULL,
            key TEXT NOT NULL,
            key2 TEXT NOT NULL,
            event_id INTEGER NOT NULL,
            value TEXT,
            PRIMARY KEY (profile, mark, key, key2)
        ) WITHOUT ROWID;
        INSERT INTO event_marks (profile, mark, key, key2, event_id, value)
            SELECT profile, 'autofill', json_extract(detail, '$.origin'), '', max(id),
                   CASE WHEN json_type(detail, '$.username') = 'text' THEN json_extract(detail, '$.username') END
            FROM events WHERE kind = 'autofill' AND json_valid(detail) AND json_type(detail, '$.origin') = 'text'
            GROUP BY profile, json_extract(detail, '$.origin');
        INSERT INTO event_marks (profile, mark, key, key2, event_id, value)
            SELECT profile, 'passwordUsed', json_extract(detail, '$.origin'), '', max(id), NULL
            FROM events WHERE kind = 'password' AND outcome = 'used' AND json_valid(detail) AND json_type(detail, '$.origin') = 'text'
            GROUP BY profile, json_extract(detail, '$.origin');
        INSERT INTO event_marks (profile, mark, key, key2, event_id, value)
            SELECT profile, 'conditionalCreate', json_extract(detail, '$.origin'), json_extract(detail, '$.userName'), max(id), NULL
            FROM events WHERE kind = 'create' AND json_valid(detail) AND json_type(detail, '$.mediation') = 'text'
                AND json_extract(detail, '$.mediation') = 'conditional' AND json_type(detail, '$.origin') = 'text'
                AND json_type(detail, '$.userName') = 'text'
            GROUP BY profile, json_extract(detail, '$.origin'), json_extract(detail, '$.userName');
        INSERT INTO event_marks (profile, mark, key, key2, event_id, value)
            SELECT profile, 'unknownSignal', json_extract(detail, '$.credentialId'), '', max(id), NULL
            FROM events WHERE kind = 'signal' AND json_valid(detail) AND json_type(detail, '$.signal') = 'text'
                AND json_extract(detail, '$.signal') = 'unknown' AND json_type(detail, '$.credentialId') = 'text'
            GROUP BY profile, json_extract(detail, '$.credentialId');
        """,
        // 3: extension state and the password's store (issue 12). Each passkey's PRF secret (WebAuthn L3 §10.1.4), sealed
        // as `prf:<id>`, in its row (NULL: made at its first evaluation); large blobs (§10.1.5), sealed as
        // `largeBlob:<id>`, in a table of their own, so a blob never pushes a passkey's columns into overflow pages,
        // and deleted with their passkey; which password manager holds a password (NULL: the profile's own provider).
        """
        ALTER TABLE passkeys ADD COLUMN prf_secret BLOB;
        CREATE TABLE large_blobs (
            credential_id BLOB PRIMARY KEY,
            profile TEXT NOT NULL,
            blob BLOB NOT NULL
        ) WITHOUT ROWID;
        CREATE TRIGGER large_blob_follows_passkey AFTER DELETE ON passkeys BEGIN
            DELETE FROM large_blobs WHERE credential_id = old.credential_id;
        END;
        ALTER TABLE passwords ADD COLUMN saved_in TEXT;
        """,
        // 4: a password the RP reported unused (Apple's `reportUnusedPasswordCredential(domain:userName:)`): when the
        // provider hid it (NULL: offered). Saving the password again clears it.
        """
        ALTER TABLE passwords ADD COLUMN retired_at INTEGER;
        """,
        // 5: devices (issue 12): a platform, its state and the provider accounts (profiles) enabled on it, as settings
        // the engine defines.
        """
        CREATE TABLE devices (
            name TEXT PRIMARY KEY,
            settings TEXT NOT NULL,
            created_at INTEGER NOT NULL
        );
        """,
        // 6: registrations staged (issue 11): a held vault commits a new passkey here, one page of an append-only
        // table, and moves it into `passkeys` with a batch (`Vault+Staging`). The columns are those of `passkeys`.
        """
        CREATE TABLE staged_passkeys (
            seq INTEGER PRIMARY KEY,
            credential_id BLOB NOT NULL,
            profile TEXT NOT NULL,
            rp_id TEXT NOT NULL,
            user_handle BLOB NOT NULL,
            user_name TEXT NOT NULL,
            display_name TEXT NOT NULL,
            algorithm INTEGER NOT NULL,
            private_key BLOB NOT NULL,
            public_key BLOB NOT NULL,
            sign_count INTEGER NOT NULL,
            counter TEXT NOT NULL,
            backup_eligible INTEGER NOT NULL,
            backup_state INTEGER NOT NULL,
            aaguid BLOB NOT NULL,
            discoverable INTEGER NOT NULL,
            attestation TEXT NOT NULL,
            hidden INTEGER NOT NULL,
            hidden_at INTEGER,
            created_at INTEGER NOT NULL,
            last_used_at INTEGER,
            prf_secret BLOB
        );
        """,
        // 7: security keys (issue 23). The vault's test attestation CA (`Vault+Attestation`): one root, and one batch per
        // authenticator model (AAGUID) signed by it, private keys sealed, certificates in the clear. And `attestation`
        // may be 'batch': SQLite cannot alter a CHECK constraint; relaxing one through `writable_schema` is the
        // documented way (sqlite.org/lang_altertable.html "Making Other Kinds Of Table Schema Changes"): no row that was
        // valid becomes invalid, so nothing is rebuilt.
        """
        PRAGMA writable_schema = ON;
        UPDATE sqlite_schema SET sql = replace(sql, 'CHECK (attestation IN (''none'', ''packed''))',
                                               'CHECK (attestation IN (''none'', ''packed'', ''batch''))')
            WHERE type = 'table' AND name = 'passkeys';
        PRAGMA writable_schema = OFF;
        CREATE TABLE attestation_root (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            private_key BLOB NOT NULL,
            certificate BLOB NOT NULL,
            created_at INTEGER NOT NULL
        );
        CREATE TABLE attestation_batches (
            aaguid BLOB PRIMARY KEY,
            vendor TEXT NOT NULL,
            private_key BLOB NOT NULL,
            certificate BLOB NOT NULL,
            created_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        """,
        // 8: CTAP 2.1 extension state a security key keeps per credential (issue 23.5): its credProtect level (CTAP 2.1
        // §12.1; no row or NULL: level 1) and its credBlob (§12.2), sealed as `credBlob:<id>`, deleted with their passkey.
        // A table of its own, so the passkeys table and its staging twin keep their columns.
        """
        CREATE TABLE credential_extensions (
            credential_id BLOB PRIMARY KEY,
            profile TEXT NOT NULL,
            cred_protect INTEGER CHECK (cred_protect BETWEEN 1 AND 3),
            cred_blob BLOB
        ) WITHOUT ROWID;
        CREATE TRIGGER credential_extensions_follow_passkey AFTER DELETE ON passkeys BEGIN
            DELETE FROM credential_extensions WHERE credential_id = old.credential_id;
        END;
        """,
        // 9: a password's site (issue 24.7), the scheme, registrable domain and port its public-suffix matches share
        // (`PasswordSite`; NULL: exact matches only), filled for the passwords saved before it through the SQL function
        // `credemu_password_site`, and an index so an upgrade reads the site's passwords in order, never scanning.
        """
        ALTER TABLE passwords ADD COLUMN site TEXT;
        UPDATE passwords SET site = credemu_password_site(origin);
        CREATE INDEX passwords_by_site ON passwords (profile, site, origin, username);
        """,
        // 10: shadowing (issue 24.1): the newer passkey of the same account (RP ID, user handle) that shadows a passkey
        // (`PriorOfSameUser.shadowed`; NULL: not shadowed), in the staged twin too. A shadowed passkey leaves the offer
        // index; `passkeys_shadowed` finds those a passkey shadows, and when it is deleted they pass to the passkey that
        // shadows it, or are restored (Chromium: a credential is shadowed while another lists it or is newer). The RESET
        // first: migration 7 edited passkeys' schema through writable_schema, and an ALTER in the same transaction must
        // read the schema anew.
        """
        PRAGMA writable_schema = RESET;
        ALTER TABLE passkeys ADD COLUMN shadowed_by BLOB;
        ALTER TABLE staged_passkeys ADD COLUMN shadowed_by BLOB;
        CREATE INDEX passkeys_shadowed ON passkeys (shadowed_by) WHERE shadowed_by IS NOT NULL;
        DROP INDEX passkeys_offered;
        CREATE INDEX passkeys_offered ON passkeys (profile, rp_id, coalesce(last_used_at, created_at) DESC, created_at DESC, credential_id)
            WHERE hidden = 0 AND discoverable = 1 AND shadowed_by IS NULL;
        CREATE TRIGGER passkey_shadow_passes_on AFTER DELETE ON passkeys BEGIN
            UPDATE passkeys SET shadowed_by = old.shadowed_by WHERE shadowed_by = old.credential_id;
        END;
        """,
        // 11: the user's own edit of a passkey's names (issue 24.2), which a pack's signals may respect
        // (`signals.currentUserDetailsRespectsUserEdit`), in the staged twin too.
        """
        PRAGMA writable_schema = RESET;
        ALTER TABLE passkeys ADD COLUMN edited_by_user INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE staged_passkeys ADD COLUMN edited_by_user INTEGER NOT NULL DEFAULT 0;
        """,
        // 12: an account's passkeys not shadowed, which a create that shadows and every signal read: through
        // `passkeys_by_rp` they scanned every passkey the account ever had, so re-registering one user grew each
        // create's cost with the user's history (GPM keeps the shadowed ones).
        """
        CREATE INDEX passkeys_unshadowed_by_user ON passkeys (profile, rp_id, user_handle) WHERE shadowed_by IS NULL;
        """,
        // 13: immediate mediation's request counts (issue 31.10), the browser's like the signal quotas, so every process
        // on the vault counts the same: per browser (a device, else a profile) and top-frame registrable domain, each
        // window's request times and when the last of them leaves its window (`Vault+ImmediateRequests`). Kept in
        // process memory, they grew with every site a page named.
        """
        CREATE TABLE immediate_requests (
            browser TEXT NOT NULL,
            site TEXT NOT NULL,
            times TEXT NOT NULL,
            expires_at INTEGER NOT NULL,
            PRIMARY KEY (browser, site)
        ) WITHOUT ROWID;
        CREATE INDEX immediate_requests_by_expiry ON immediate_requests (browser, expires_at);
        """,
        // 14: a passkey is keyed by its profile and credential ID (issue 36.2), so two provider accounts of one vault may
        // hold the same passkey, as a move that keeps the source's copy leaves them; so are the rows that name a passkey
        // (its large blob, its CTAP state) and a shadow (`shadowed_by` names a passkey of the same profile). SQLite
        // cannot change a primary key in place: each table is rebuilt as sqlite.org/lang_altertable.html "Making Other
        // Kinds Of Table Schema Changes" says (a new table, every row copied, the old dropped, the new renamed, its
        // indexes and triggers made again), columns and rows as they were. The key is (credential ID, profile), so a
        // lookup by ID alone (which profiles hold it) is a walk of the key too.
        """
        PRAGMA writable_schema = RESET;
        CREATE TABLE passkeys_14 (
            credential_id BLOB NOT NULL,
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
            attestation TEXT NOT NULL CHECK (attestation IN ('none', 'packed', 'batch')),
            hidden INTEGER NOT NULL DEFAULT 0,
            hidden_at INTEGER,
            created_at INTEGER NOT NULL,
            last_used_at INTEGER,
            prf_secret BLOB,
            shadowed_by BLOB,
            edited_by_user INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (credential_id, profile)
        );
        INSERT INTO passkeys_14 (credential_id, profile, rp_id, user_handle, user_name, display_name, algorithm, private_key,
                                 public_key, sign_count, counter, backup_eligible, backup_state, aaguid, discoverable, attestation,
                                 hidden, hidden_at, created_at, last_used_at, prf_secret, shadowed_by, edited_by_user)
            SELECT credential_id, profile, rp_id, user_handle, user_name, display_name, algorithm, private_key,
                   public_key, sign_count, counter, backup_eligible, backup_state, aaguid, discoverable, attestation,
                   hidden, hidden_at, created_at, last_used_at, prf_secret, shadowed_by, edited_by_user
            FROM passkeys ORDER BY rowid;
        DROP TABLE passkeys;
        ALTER TABLE passkeys_14 RENAME TO passkeys;
        CREATE INDEX passkeys_by_rp ON passkeys (profile, rp_id, user_handle, created_at, credential_id);
        CREATE INDEX passkeys_by_user_name ON passkeys (profile, rp_id, user_name, created_at, credential_id);
        CREATE INDEX passkeys_offered ON passkeys (profile, rp_id, coalesce(last_used_at, created_at) DESC, created_at DESC, credential_id)
            WHERE hidden = 0 AND discoverable = 1 AND shadowed_by IS NULL;
        CREATE INDEX passkeys_shadowed ON passkeys (profile, shadowed_by) WHERE shadowed_by IS NOT NULL;
        CREATE INDEX passkeys_unshadowed_by_user ON passkeys (profile, rp_id, user_handle) WHERE shadowed_by IS NULL;
        CREATE TABLE large_blobs_14 (
            credential_id BLOB NOT NULL,
            profile TEXT NOT NULL,
            blob BLOB NOT NULL,
            PRIMARY KEY (credential_id, profile)
        ) WITHOUT ROWID;
        INSERT INTO large_blobs_14 (credential_id, profile, blob) SELECT credential_id, profile, blob FROM large_blobs;
        DROP TABLE large_blobs;
        ALTER TABLE large_blobs_14 RENAME TO large_blobs;
        CREATE TABLE credential_extensions_14 (
            credential_id BLOB NOT NULL,
            profile TEXT NOT NULL,
            cred_protect INTEGER CHECK (cred_protect BETWEEN 1 AND 3),
            cred_blob BLOB,
            PRIMARY KEY (credential_id, profile)
        ) WITHOUT ROWID;
        INSERT INTO credential_extensions_14 (credential_id, profile, cred_protect, cred_blob)
            SELECT credential_id, profile, cred_protect, cred_blob FROM credential_extensions;
        DROP TABLE credential_extensions;
        ALTER TABLE credential_extensions_14 RENAME TO credential_extensions;
        CREATE TRIGGER large_blob_follows_passkey AFTER DELETE ON passkeys BEGIN
            DELETE FROM large_blobs WHERE credential_id = old.credential_id AND profile = old.profile;
        END;
        CREATE TRIGGER credential_extensions_follow_passkey AFTER DELETE ON passkeys BEGIN
            DELETE FROM credential_extensions WHERE credential_id = old.credential_id AND profile = old.profile;
        END;
        CREATE TRIGGER passkey_shadow_passes_on AFTER DELETE ON passkeys BEGIN
            UPDATE passkeys SET shadowed_by = old.shadowed_by WHERE profile = old.profile AND shadowed_by = old.credential_id;
        END;
        """,
    ]

    /// Brings an opened vault to the current schema, or finds it there: one write transaction (`BEGIN IMMEDIATE`)
    /// reads the version and applies what is still missing, so any number of processes may open an old vault at
    /// once; the first to take the write lock migrates and the others, once it commits, find nothing to do. Read
    /// outside the transaction, the version was stale by then and a second process ran migration 10 again
    /// ("duplicate column name: shadowed_by"). While it waits for another's migration the busy timeout is
    /// `upgradeWaitMillis`: a migration over a large vault (migration 2 reads the whole event log) outlasts the
    /// usual 5 s.
    static func upgrade(_ db: SQLiteDatabase, path: String) throws(VaultError) {
        db.setBusyTimeout(upgradeWaitMillis)
        defer { db.setBusyTimeout(SQLiteDatabase.busyTimeoutMillis) }
        try db.transaction { () throws(VaultError) in
            var version: Int64 = 0
            try db.query("PRAGMA user_version") { row in version = row.int(0) }
            try checkNotNewer(version, path: path)
            try migrate(db, from: Int(version))
        }
    }

    /// How long an upgrade waits for another process's migration (or other write) to commit.
    static let upgradeWaitMillis: Int32 = 120_000

    /// Refuses a vault a newer credemu made or upgraded, before anything is written.
    static func checkNotNewer(_ version: Int64, path: String) throws(VaultError) {
        guard version > Int64(all.count) else { return }
        throw VaultError(.newerSchema, "The vault at \(path) has schema version \(version), newer than this credemu supports (\(all.count)). Upgrade credemu to open it.")
    }

    /// Applies the migrations after `version` up to `target`, in the caller's transaction.
    static func migrate(_ db: SQLiteDatabase, from version: Int, to target: Int = all.count) throws(VaultError) {
        for (index, sql) in all.enumerated() where index >= version && index < target {
            try db.execute(sql)
            try db.execute("PRAGMA user_version = \(index + 1)")
        }
    }
}

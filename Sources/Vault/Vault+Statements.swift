extension Vault {
    /// Every statement a ceremony, an autofill, a signal, a finding or the event log's writer runs, by name: the
    /// cost-independent-of-size rule says each is answered from an index (a primary key, an index or the rowid),
    /// never by scanning passkeys, events or marks. `QueryPlanTests` asks SQLite's `EXPLAIN QUERY PLAN` about each,
    /// and `ScaleTests` checks that the statements the engine actually runs are all listed here.
    static let pathStatements: [String: String] = [
        // Passkeys: creation, exclusion, a get, its dropdown, a pick.
        "insertPasskey": insertPasskeySQL,
        "shadowPrior": shadowPriorSQL,
        "replacePrior": replacePriorSQL,
        "priorDiscoverable": priorDiscoverableSQL,
        "shadowPassesOn": shadowPassesOnSQL,
        "stagedDuplicate": stagedDuplicateSQL,
        "moveStaged": moveStagedSQL,
        "stagedMark": stagedMarkSQL,
        "setStagedMark": setStagedMarkSQL,
        "moveLegacyStaged": moveLegacyStagedSQL,
        "deleteLegacyStaged": deleteLegacyStagedSQL,
        "legacyStagedExists": legacyStagedExistsSQL,
        "passkeyByID": byIDSQL,
        "privateKey": privateKeySQL,
        "recordAssertion": recordAssertionSQL,
        "recordUse": recordUseSQL,
        "offered": offeredSQL,
        "offeredProtected": offeredProtectedSQL,
        "countHandle": countHandleSQL,
        "countName": countNameSQL,
        "countHandleAndName": countHandleAndNameSQL,
        "countDiscoverable": countDiscoverableSQL,
        "accountByHandle": accountByHandleSQL,
        "accountByHandleVisible": accountByHandleVisibleSQL,
        "accountByName": accountByNameSQL,
        "accountByNameVisible": accountByNameVisibleSQL,
        // Extensions: a create's PRF secret is in insertPasskey; a get's PRF evaluation and large blob.
        "prfSecret": prfSecretSQL,
        "setPRFSecret": setPRFSecretSQL,
        "largeBlob": largeBlobSQL,
        "setLargeBlob": setLargeBlobSQL,
        "setCredentialExtensions": setCredentialExtensionsSQL,
        "credentialExtensions": credentialExtensionsSQL,
        // Signals and their findings.
        "setHidden": setHiddenSQL,
        "updateUser": updateUserSQL,
        "editUser": editUserSQL,
        "removePasskey": removePasskeySQL,
        // WebDriver's virtual authenticators (§11.8, §11.10).
        "setCredentialProperties": setCredentialPropertiesSQL,
        "removeAllPasskeys": removeAllPasskeysSQL,
        "firstUserPasskey": firstUserPasskeySQL,
        "hideUnlisted": hideUnlistedSQL,
        "restoreListed": restoreListedSQL,
        "deleteUnlisted": deleteUnlistedSQL,
        "renameUser": renameUserSQL,
        "renameUserNameOnly": renameUserNameOnlySQL,
        "countUsedUnlisted": countUsedUnlistedSQL,
        "otherDisplayName": otherDisplayNameSQL,
        "quota": quotaSQL,
        "setQuota": setQuotaSQL,
        // Immediate mediation's request counts.
        "immediateRequests": immediateRequestsSQL,
        "setImmediateRequests": setImmediateRequestsSQL,
        "evictImmediateRequests": evictImmediateRequestsSQL,
        "pruneImmediateRequests": pruneImmediateRequestsSQL,
        // Passwords: save, autofill, use, the recent-password check of an automatic upgrade.
        "savePassword": savePasswordSQL,
        "passwordsByOrigin": passwordsByOriginSQL,
        "passwordsBySite": passwordsBySiteSQL,
        "passwordSecret": passwordSecretSQL,
        "markPasswordFilled": markPasswordSQL("last_filled_at"),
        "markPasswordUsed": markPasswordSQL("last_used_at"),
        // An unused password reported by the RP (hidden or deleted).
        "retirePassword": retirePasswordSQL,
        "deletePasswordByAccount": deletePasswordByAccountSQL,
        // A security key's attestation: the vault's root and the model's batch, each made once.
        "attestationRoot": attestationRootSQL,
        "insertAttestationRoot": insertAttestationRootSQL,
        "attestationBatch": attestationBatchSQL,
        "insertAttestationBatch": insertAttestationBatchSQL,
        // The simulated user's queue.
        "pushDecision": pushDecisionSQL,
        "nextDecision": nextDecisionSQL,
        "deleteDecision": deleteDecisionSQL,
        // The event log: writes, marks, rotation, and what findings and scenarios read.
        "insertEvent": insertEventRow,
        "insertEvents": insertEventRows,
        "upsertMark": upsertMarkSQL,
        "mark": markSQL,
        "markedKeys": markedKeysSQL,
        "lastEventID": lastEventIDSQL,
        "firstEventID": firstEventIDSQL,
        "rotateEvents": rotateEventsSQL,
        "lastEventOfKind": lastEventOfKindSQL,
        "eventsOfKind": eventsOfKindSQL,
    ]

    /// Statements without a query plan: transactions.
    static let controlStatements: Set<String> = ["BEGIN IMMEDIATE", "COMMIT", "ROLLBACK"]
}

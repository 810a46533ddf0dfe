-- ACC store, protocol 0.2, schema 3. Created once, in one transaction.
CREATE TABLE acc_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;

CREATE TABLE workspace (
    workspace_id TEXT PRIMARY KEY,
    display_name TEXT NOT NULL,
    root TEXT NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE participants (
    participant_id TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE sessions (
    session_id TEXT PRIMARY KEY,
    participant_id TEXT NOT NULL REFERENCES participants(participant_id),
    session_key TEXT UNIQUE,
    generation INTEGER NOT NULL,
    generation_hash TEXT NOT NULL,
    harness TEXT NOT NULL,
    client_version TEXT,
    checkout TEXT,
    branch TEXT,
    pid INTEGER,
    enforcement TEXT NOT NULL,
    lifecycle TEXT NOT NULL,
    opened_at INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL,
    closed_at INTEGER,
    -- Where `pid` means something: `<boot id>/<pid namespace>` of the host that recorded it
    -- (layout revision 4; NULL when unknown or recorded by an earlier build).
    pid_scope TEXT
) STRICT;
CREATE INDEX sessions_by_participant ON sessions(participant_id);
-- The open sessions, in the order every listing of them wants (layout revision 3).
CREATE INDEX sessions_open ON sessions(participant_id, opened_at, session_id) WHERE closed_at IS NULL;

CREATE TABLE intents (
    session_id TEXT PRIMARY KEY REFERENCES sessions(session_id),
    summary TEXT NOT NULL,
    mode TEXT NOT NULL,
    state TEXT NOT NULL,
    resource_hints TEXT NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;

CREATE TABLE claims (
    claim_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(session_id),
    generation INTEGER NOT NULL,
    participant_id TEXT NOT NULL,
    resource TEXT NOT NULL,
    mode TEXT NOT NULL,
    enforcement TEXT NOT NULL,
    reason TEXT,
    acquired_at INTEGER NOT NULL,
    renewed_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    lease_seconds INTEGER NOT NULL
) STRICT;
CREATE INDEX claims_by_session ON claims(session_id);
CREATE INDEX claims_by_resource ON claims(resource);
CREATE INDEX claims_by_expiry ON claims(expires_at);

CREATE TABLE messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    message_id TEXT NOT NULL UNIQUE,
    thread_id TEXT NOT NULL,
    client_message_id TEXT NOT NULL,
    from_participant_id TEXT NOT NULL,
    from_session_id TEXT NOT NULL,
    to_participant_ids TEXT NOT NULL,
    kind TEXT NOT NULL,
    obligation TEXT NOT NULL,
    subject TEXT NOT NULL,
    body TEXT NOT NULL,
    in_reply_to TEXT,
    artifacts TEXT NOT NULL,
    handoff TEXT,
    decision_change TEXT,
    content_hash TEXT NOT NULL,
    sent_at INTEGER NOT NULL,
    event_seq INTEGER NOT NULL,
    UNIQUE (from_participant_id, client_message_id)
) STRICT;
-- Layout revision 5: no messages_by_thread (no query reads messages by thread).
CREATE INDEX messages_by_kind ON messages(kind, seq);

CREATE TABLE receipts (
    message_seq INTEGER NOT NULL REFERENCES messages(seq),
    participant_id TEXT NOT NULL,
    state TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    extensions TEXT NOT NULL DEFAULT '{}',
    -- Copies of immutable message facts, so attention is an index range scan.
    obligation TEXT NOT NULL,
    addressed INTEGER NOT NULL,
    PRIMARY KEY (message_seq, participant_id)
) STRICT, WITHOUT ROWID;
-- Layout revision 2 (store/src/layout.rs): WITHOUT ROWID, and no receipts_waiting.
CREATE INDEX receipts_unresolved ON receipts(participant_id, message_seq) WHERE state != 'acknowledged';
CREATE INDEX receipts_owed ON receipts(obligation, message_seq) WHERE state != 'acknowledged' AND obligation != 'none';
-- Layout revision 1: the queued receipts, for next-turn's range read.
CREATE INDEX receipts_queued ON receipts(participant_id, message_seq) WHERE state = 'queued';

CREATE TABLE decision_links (
    from_seq INTEGER NOT NULL REFERENCES messages(seq),
    to_seq INTEGER NOT NULL REFERENCES messages(seq),
    action TEXT NOT NULL,
    PRIMARY KEY (from_seq, to_seq)
) STRICT;
CREATE INDEX decision_links_to ON decision_links(to_seq);

CREATE TABLE events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    type TEXT NOT NULL,
    at INTEGER NOT NULL,
    session_id TEXT,
    participant_id TEXT,
    data TEXT NOT NULL
) STRICT;

-- Ephemeral delivery bindings: one per session and adapter, tied to one generation. Never
-- part of events or the durable snapshot; dropped when the session's generation changes.
CREATE TABLE delivery_bindings (
    session_id TEXT NOT NULL REFERENCES sessions(session_id),
    generation INTEGER NOT NULL,
    adapter_id TEXT NOT NULL,
    client_version TEXT NOT NULL,
    modes TEXT NOT NULL,
    live_policy TEXT NOT NULL,
    endpoint_ref TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    lease_until INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (session_id, adapter_id)
) STRICT;

/// The MPN tables, the same for SQLite and PostgreSQL. Column widths are the documented size
/// limits (docs/protocol/MPN.md §1), enforced at the edge with code 49 before anything is stored.
enum MPNSchema {
    /// Migrations in order; each is a list of statements. Never edit a shipped one: append.
    static let migrations: [(name: String, statements: [String])] = [
        (
            "v1-devices-subscriptions",
            [
                """
                CREATE TABLE mpn_devices (
                    device_id VARCHAR(36) PRIMARY KEY,
                    platform VARCHAR(16) NOT NULL,
                    application_id VARCHAR(128) NOT NULL,
                    device_token VARCHAR(256) NOT NULL,
                    status VARCHAR(16) NOT NULL,
                    status_timestamp BIGINT NOT NULL,
                    last_access BIGINT NOT NULL,
                    badge INTEGER NOT NULL DEFAULT 0,
                    created_at BIGINT NOT NULL,
                    UNIQUE (platform, application_id, device_token)
                )
                """,
                "CREATE INDEX mpn_devices_last_access ON mpn_devices (last_access)",
                """
                CREATE TABLE mpn_subscriptions (
                    subscription_id VARCHAR(36) PRIMARY KEY,
                    device_id VARCHAR(36) NOT NULL REFERENCES mpn_devices (device_id) ON DELETE CASCADE,
                    adapter_set VARCHAR(32) NOT NULL,
                    data_adapter VARCHAR(32) NOT NULL,
                    item_group VARCHAR(255) NOT NULL,
                    field_schema VARCHAR(255) NOT NULL,
                    items TEXT NOT NULL,
                    fields TEXT NOT NULL,
                    mode VARCHAR(16) NOT NULL,
                    notification_format TEXT NOT NULL,
                    trigger_expression VARCHAR(255),
                    buffer_size VARCHAR(16),
                    max_frequency VARCHAR(32),
                    status VARCHAR(16) NOT NULL,
                    status_timestamp BIGINT NOT NULL,
                    created_at BIGINT NOT NULL,
                    last_trigger_time BIGINT
                )
                """,
                "CREATE INDEX mpn_subscriptions_device_status ON mpn_subscriptions (device_id, status)",
                """
                CREATE INDEX mpn_subscriptions_coalescing ON mpn_subscriptions
                    (device_id, adapter_set, data_adapter, item_group, field_schema)
                """,
            ]
        ),
        // Cluster: the MPN Module instances alive, and which one runs each device.
        (
            "v2-module-ownership",
            [
                "CREATE TABLE mpn_modules (module_id VARCHAR(36) PRIMARY KEY, last_activity BIGINT NOT NULL)",
                "ALTER TABLE mpn_devices ADD COLUMN module_id VARCHAR(36)",
                "CREATE INDEX mpn_devices_module ON mpn_devices (module_id)",
            ]
        ),
        // The outbox: notifications owed, written with the state change that made them due
        // (MPNOutboxEntry). `claimed_by` is the instance sending it (cluster compare-and-set).
        (
            "v3-outbox",
            [
                """
                CREATE TABLE mpn_outbox (
                    entry_id VARCHAR(36) PRIMARY KEY,
                    subscription_id VARCHAR(36) NOT NULL,
                    device_id VARCHAR(36) NOT NULL REFERENCES mpn_devices (device_id) ON DELETE CASCADE,
                    payload TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    status VARCHAR(16) NOT NULL,
                    failure TEXT,
                    claimed_by VARCHAR(36)
                )
                """,
                "CREATE INDEX mpn_outbox_device ON mpn_outbox (device_id, status)",
            ]
        ),
    ]

    /// PostgreSQL only, applied after `migrations` (same journal): every change of a device's
    /// status or of its subscriptions is announced with `NOTIFY` on `changeChannel`, payload
    /// `<schema> <deviceId>`, so that the other servers on the database refresh the device's
    /// internal items (`PostgresMPNStore.watchChanges`). Row triggers catch every writer; a
    /// device whose only change is its access time, badge or owner is not announced.
    static let postgresMigrations: [(name: String, statements: [String])] = [
        (
            "pg-v1-change-notifications",
            [
                """
                CREATE OR REPLACE FUNCTION mpn_announce_change() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF TG_OP <> 'INSERT' THEN
                        PERFORM pg_notify('\(changeChannel)', TG_TABLE_SCHEMA || ' ' || OLD.device_id);
                    END IF;
                    IF TG_OP <> 'DELETE' THEN
                        PERFORM pg_notify('\(changeChannel)', TG_TABLE_SCHEMA || ' ' || NEW.device_id);
                    END IF;
                    RETURN NULL;
                END
                $$
                """,
                """
                CREATE TRIGGER mpn_devices_announce AFTER INSERT OR DELETE ON mpn_devices
                    FOR EACH ROW EXECUTE FUNCTION mpn_announce_change()
                """,
                """
                CREATE TRIGGER mpn_devices_status_announce AFTER UPDATE ON mpn_devices FOR EACH ROW
                    WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.status_timestamp IS DISTINCT FROM NEW.status_timestamp
                          OR OLD.device_id IS DISTINCT FROM NEW.device_id)
                    EXECUTE FUNCTION mpn_announce_change()
                """,
                """
                CREATE TRIGGER mpn_subscriptions_announce AFTER INSERT OR UPDATE OR DELETE ON mpn_subscriptions
                    FOR EACH ROW EXECUTE FUNCTION mpn_announce_change()
                """,
            ]
        )
    ]

    /// The `LISTEN`/`NOTIFY` channel of `postgresMigrations` (one per database; the payload
    /// names the schema).
    static let changeChannel = "mpn_changes"

    static let deviceColumns = """
        device_id, platform, application_id, device_token, status, status_timestamp, last_access, badge, created_at
        """
    static let outboxColumns = "entry_id, subscription_id, device_id, payload, created_at, status, failure"
    static let subscriptionColumns = """
        subscription_id, device_id, adapter_set, data_adapter, item_group, field_schema, items, fields, mode, \
        notification_format, trigger_expression, buffer_size, max_frequency, status, status_timestamp, created_at, \
        last_trigger_time
        """
}

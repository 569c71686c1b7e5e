import LightstreamerServer
import TLCP

extension MPNModule {
    /// `activate`: a new MPN subscription, or a modification of `PN_subscriptionId`, or (with
    /// `PN_coalescing=true`) of the device's subscription with the same adapter set, data
    /// adapter, group, schema and trigger. Returns the MPN subscription id.
    public func activate(_ p: MPNActivateParameters, context: MPNRequestContext) async throws(MPNError) -> String {
        try checkEnabled(context)
        guard p.mode == .merge || p.mode == .distinct else {
            throw MPNError(code: 24, message: "Mode \(p.mode.rawValue) not allowed for MPN subscriptions")
        }
        let device = try await requireDevice(p.deviceId, context)
        guard device.status == .active else { throw .deviceSuspended }
        let dataAdapter = p.dataAdapter ?? AdapterSet.defaultDataAdapterName
        let (items, fields) = try await resolve(group: p.group, schema: p.schema, dataAdapter: dataAdapter, context: context)
        let trigger = (p.trigger?.isEmpty ?? true) ? nil : p.trigger
        try configuration.limits.checkSubscription(
            adapterSet: context.adapterSet, dataAdapter: dataAdapter, group: p.group,
            schema: p.schema, items: items, fields: fields, format: p.notificationFormat,
            trigger: trigger)
        let (format, compiledTrigger) = try compile(format: p.notificationFormat, trigger: trigger, fields: fields, device: device)
        let normalizedTrigger = compiledTrigger?.normalizedText
        if let hooks = hooks(context) {
            let table = TableInfo(
                mode: p.mode, group: p.group, schema: p.schema, dataAdapter: dataAdapter, items: items,
                fields: fields, selector: nil)
            let info = MPNSubscriptionInfo(
                device: MPNDeviceInfo(
                    platform: device.platform, applicationId: device.applicationId,
                    deviceToken: device.deviceToken),
                notificationFormat: format.normalizedText, trigger: normalizedTrigger)
            try await MPNHookCall.run {
                try await hooks.notifyMpnSubscriptionActivation(
                    user: context.user, sessionId: context.sessionId, table: table,
                    subscription: info)
            }
        }
        var existing: MPNSubscriptionRecord?
        if let id = p.mpnSubscriptionId {
            guard let r = try await storeCall({ try await store.subscription(id: id) }), r.deviceId == device.id else {
                throw .unknownSubscription
            }
            existing = r
        } else if p.coalescing == true {
            existing = try await storeCall {
                try await store.coalescingCandidate(
                    deviceId: device.id, adapterSet: context.adapterSet, dataAdapter: dataAdapter,
                    group: p.group, schema: p.schema, trigger: normalizedTrigger)
            }
        }
        let now = nowMillis
        var record = MPNSubscriptionRecord(
            id: existing?.id ?? MPNIdentifier.make(), deviceId: device.id, adapterSet: context.adapterSet,
            dataAdapter: dataAdapter, group: p.group, items: items, schema: p.schema, fields: fields, mode: p.mode,
            notificationFormat: format.normalizedText, trigger: normalizedTrigger, bufferSize: p.bufferSize,
            maxFrequency: p.maxFrequency, status: .active, statusTimestamp: now, createdAt: existing?.createdAt ?? now)
        if let existing, existing.status == .active, existing.trigger == record.trigger {
            record.statusTimestamp = existing.statusTimestamp
        }
        let toStore = record
        if existing != nil {
            guard try await storeCall({ try await store.updateSubscription(toStore) }) else { throw .unknownSubscription }
        } else {
            // A new subscription: within the per-device limit (49, the code of a limit passed),
            // counted and inserted atomically.
            let limit = configuration.limits.subscriptionsPerDevice
            guard try await storeCall({ try await store.insertSubscription(toStore, maxPerDevice: limit) }) else {
                throw .tooManySubscriptions(max: limit)
            }
        }
        _ = try? await store.touchDevice(id: device.id, now: now)
        await install(record, format: format, trigger: compiledTrigger)
        return record.id
    }

    /// `pn_reconf`: new format and/or trigger (and frequency) for an existing subscription;
    /// 56 when mode, group, schema, data adapter or adapter set differ. Re-arms a TRIGGERED one.
    public func reconfigure(_ p: MPNReconfParameters, context: MPNRequestContext) async throws(MPNError) -> String {
        try checkEnabled(context)
        let device = try await requireDevice(p.deviceId, context)
        guard let old = try await storeCall({ try await store.subscription(id: p.mpnSubscriptionId) }), old.deviceId == device.id else {
            throw .unknownSubscription
        }
        if let m = p.mode, m != old.mode { throw .reconfMismatch }
        if let g = p.group, g != old.group { throw .reconfMismatch }
        if let s = p.schema, s != old.schema { throw .reconfMismatch }
        if let a = p.dataAdapter, a != old.dataAdapter { throw .reconfMismatch }
        guard old.adapterSet == context.adapterSet else { throw .reconfMismatch }
        let formatText = p.notificationFormat ?? old.notificationFormat
        var triggerText = old.trigger
        if let t = p.trigger { triggerText = t.isEmpty ? nil : t }
        try configuration.limits.checkSubscription(
            adapterSet: old.adapterSet, dataAdapter: old.dataAdapter, group: old.group,
            schema: old.schema, items: old.items, fields: old.fields, format: formatText,
            trigger: triggerText)
        let (format, trigger) = try compile(format: formatText, trigger: triggerText, fields: old.fields, device: device)
        var record = old
        record.notificationFormat = format.normalizedText
        record.trigger = trigger?.normalizedText
        if let f = p.maxFrequency { record.maxFrequency = f }
        record.status = .active
        record.statusTimestamp = nowMillis
        let toStore = record
        guard try await storeCall({ try await store.updateSubscription(toStore) }) else { throw .unknownSubscription }
        await install(record, format: format, trigger: trigger)
        return record.id
    }

    /// Items and fields through the adapter set's Metadata Adapter (21/23, 50 when empty, 17).
    func resolve(
        group: String, schema: String, dataAdapter: String,
        context: MPNRequestContext
    ) async throws(MPNError) -> (items: [String], fields: [String]) {
        guard let set = itemEngine.adapterSet(named: context.adapterSet) else {
            throw MPNError(code: 17, message: "Adapter Set \(context.adapterSet) not found")
        }
        guard set.dataAdapter(named: dataAdapter) != nil else { throw MPNError(code: 17, message: "Data Adapter \(dataAdapter) not found") }
        do {
            let items = try await set.metadata.items(
                user: context.user, sessionId: context.sessionId, group: group, dataAdapter: dataAdapter)
            let fields = try await set.metadata.fields(
                user: context.user, sessionId: context.sessionId, group: group,
                dataAdapter: dataAdapter, schema: schema)
            guard !items.isEmpty, !fields.isEmpty else { throw MPNError.noItemsOrFields }
            return (items, fields)
        } catch let e as MPNError {
            throw e
        } catch let e as MetadataError {
            switch e {
            case .itemsNotFound(let m): throw MPNError(code: 21, message: m)
            case .schemaNotFound(let m): throw MPNError(code: 23, message: m)
            case .subscription(let code, let m) where code <= 0: throw MPNError(code: code, message: m)
            default: throw MPNError(code: 66, message: "\(e)")
            }
        } catch {
            throw MPNError(code: 66, message: "\(error)")
        }
    }

    /// Compiles format and trigger, checking the app's trigger allow-list when configured.
    func compile(
        format: String, trigger: String?, fields: [String],
        device: MPNDeviceRecord
    ) throws(MPNError) -> (NotificationFormat, CompiledTrigger?) {
        let f = try NotificationFormat(format, fields: fields, platform: device.platform, limits: configuration.limits)
        guard let trigger else { return (f, nil) }
        let t = try CompiledTrigger(trigger, fields: fields)
        if let patterns = configuration.application(device.platform, device.applicationId)?.triggerAllowList {
            guard let list = try? TriggerAllowList(patterns: patterns), list.accepts(t.normalizedText) else {
                throw .triggerSyntax("trigger not allowed by the configured filter")
            }
        }
        return (f, t)
    }
}

/// Where the MPN part of the client (MPNDevice, MPNSubscription, MPNBuilder; another issue)
/// plugs in. Nothing here is MPN-specific; these are the seams it uses:
///
/// - `ClientCore.sendExternalControl(token:_:)` (or `sendExternalControls(_:)`, one batch)
///   queues a `ControlOperation` (register, activate, pn_reconf, deactivate, reset_badge). The
///   engine sends it on the session's control channel (batched with other controls) and reports
///   its REQOK/REQERR as `SessionEngine.Notification.externalReply(token:code:message:)`. Queued while no
///   session exists, it is the first request of the next one. An `activate` gets its
///   `LS_subId` from the subscription counter (`externalSubscriptionId`). A control made for a
///   session that is no longer current comes back at once, unsent. When a session ends,
///   its unanswered and unsent external requests come back as `externalDropped`, then
///   `sessionEnded` is notified.
/// - `ClientCore.extensionHook` receives, on the engine queue, every MPN notification
///   (`MPNREG`, `MPNOK`, `MPNDEL`, `MPNZERO`, `MPNCONF`, already counted for recovery),
///   `externalReply`, `externalDropped`, `externalSubscriptionId`, `sessionStarted(id:)` and
///   `sessionEnded`.
/// - `ClientCore.subscribeInternal(_:)` subscribes the internal `DEV-`/`SUBS-` items without
///   listing them in `LightstreamerClient.subscriptions`; two-level COMMAND (for `SUBS-`) is
///   already handled by the engine.
/// - Callbacks must go through `CallbackQueue.queue`, like every other delegate call.
enum MPNExtensionPoints {}

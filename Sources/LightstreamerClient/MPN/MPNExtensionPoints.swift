/// Where the MPN part of the client (MPNDevice, MPNSubscription, MPNBuilder; another issue)
/// plugs in. Nothing here is MPN-specific; these are the seams it uses:
///
/// - `ClientCore.sendExternalControl(token:_:)` queues a `ControlOperation` (register, activate,
///   pn_reconf, deactivate, reset_badge). The engine sends it on the session's control channel
///   (batched with other controls), keeps it queued across session changes, and reports its
///   REQOK/REQERR as `AppNotification.externalReply(token:code:message:)`.
/// - `ClientCore.extensionHook` receives, on the engine queue, every MPN notification
///   (`MPNREG`, `MPNOK`, `MPNDEL`, `MPNZERO`, `MPNCONF`, already counted for recovery),
///   `externalReply`, and `sessionStarted(id:)` (to register devices again after a new session).
/// - `ClientCore.subscribeInternal(_:)` subscribes the internal `DEV-`/`SUBS-` items without
///   listing them in `LightstreamerClient.subscriptions`; two-level COMMAND (for `SUBS-`) is
///   already handled by the engine.
/// - Callbacks must go through `CallbackQueue.queue`, like every other delegate call.
enum MPNExtensionPoints {}

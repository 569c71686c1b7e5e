/// Carries a non-Sendable value (a delegate of the official API's non-`Sendable` protocols, with
/// the object it concerns) into a callback on the serial callback queue.
/// `@unchecked Sendable`: the value is only used on that one serial queue after the hop.
struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

import Dispatch

/// All delegate callbacks of all clients go through one serial queue, as in the official API.
enum CallbackQueue {
    static let queue = DispatchQueue(label: "com.lightstreamer", qos: .userInteractive)
}

import Foundation
import LightstreamerServer

extension MPNConfiguration {
    /// The MPN settings of a server configuration file: its top-level `mpn` section (absent:
    /// MPN disabled), adjusted by each adapter set's own `"mpn": {"enabled": true|false}`.
    public init(serverConfiguration c: ServerConfiguration) throws {
        self = try c.mpn.map { try MPNConfiguration.decode(json: $0.data) } ?? MPNConfiguration()
        var names = c.adapterSets.map(\.name)
        if c.demo { names.append(DemoAdapters.adapterSetName) }
        for set in c.adapterSets {
            guard case .bool(let on)? = set.mpn?["enabled"] else { continue }
            if on {
                if !enabled {
                    enabled = true
                    if c.mpn?["adapterSets"] == nil { adapterSets = [] }
                }
                if let list = adapterSets, !list.contains(set.name) { adapterSets = list + [set.name] }
            } else {
                adapterSets = (adapterSets ?? names).filter { $0 != set.name }
            }
        }
    }

    /// The embedded default of the demo server: MPN on for every adapter set, SQLite file,
    /// `log` providers (JSON lines) for any Apple or Google application.
    public static func demoDefault(sqlitePath: String = "mpn.sqlite") -> MPNConfiguration {
        var m = MPNConfiguration()
        m.enabled = true
        m.store = Store(sqlitePath: sqlitePath)
        return m
    }
}

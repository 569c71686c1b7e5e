/// The internal `MONITOR` adapter set, which feeds the dashboard (docs/ADMIN.md): items
/// `server` (MERGE), `sessions` and `mpn_apps` (COMMAND); fields in `MonitorSampler`.
public enum MonitorAdapters {
    /// The name of the internal adapter set that feeds the dashboard.
    public static let adapterSetName = "MONITOR"

    /// `sets` with the `MONITOR` set added (unless one of that name is there already).
    public static func adding(to sets: [AdapterSet]) -> [AdapterSet] {
        guard !sets.contains(where: { $0.name == adapterSetName }) else { return sets }
        return sets + [
            AdapterSet(
                name: adapterSetName, metadata: MonitorMetadataAdapter(),
                dataAdapters: [AdapterSet.defaultDataAdapterName: MonitorDataAdapter()])
        ]
    }
}

import Foundation
import LightstreamerServer
import TLCP
import Testing

@testable import MPNModule

/// The MPN Module behind the dashboard and the admin API (`MPNAdminBridge`, docs/ADMIN.md):
/// figures, per-application counts, suspending an application, deleting a device.
@Suite("MPN admin hook")
struct MPNAdminTests {
    let register = MPNRegisterParameters(platform: .apple, applicationId: "com.example.app", deviceToken: "0a01")

    @Test("figures count devices and notifications per application; a suspended application sends nothing")
    func suspendAndCount() async throws {
        let h = EngineHarness()
        defer { h.cleanUp() }
        let (mpn, store) = try await h.startModule()
        let hook = MPNAdminBridge(module: mpn)
        let dev = try await mpn.register(register, context: h.context).deviceId
        _ = try await mpn.activate(activation(device: dev, format: #"{"aps":{"alert":"$[2]"}}"#), context: h.context)
        h.quotes.push("item1", ["stock_name": "A", "last_price": "1"])
        await mpn.settle()
        #expect(h.provider.alerts() == ["1"])
        var figures = await hook.monitorFigures()
        #expect(figures.devices == 1 && figures.activeSubscriptions == 1)
        #expect(figures.applications == [.init(platform: "Apple", appId: "com.example.app", sent: 1, failed: 0, suspended: false)])

        #expect(try await hook.setApplicationSuspended(platform: "Apple", appId: "com.example.app", suspended: true))
        #expect(try await hook.setApplicationSuspended(platform: "Windows", appId: "x", suspended: true) == false)
        h.clock.advance(by: .seconds(2))
        h.quotes.push("item1", ["last_price": "2"])
        await mpn.settle()
        h.clock.advance(by: .seconds(2))
        await mpn.settle()
        #expect(h.provider.alerts() == ["1"], "nothing sent while suspended")
        figures = await hook.monitorFigures()
        #expect(figures.applications.first?.suspended == true)

        #expect(try await hook.setApplicationSuspended(platform: "Apple", appId: "com.example.app", suspended: false))
        h.clock.advance(by: .seconds(2))
        h.quotes.push("item1", ["last_price": "3"])
        await mpn.settle()
        #expect(h.provider.alerts() == ["1", "3"])
        figures = await hook.monitorFigures()
        #expect(figures.applications.first?.sent == 2 && figures.applications.first?.suspended == false)

        #expect(try await hook.deleteDevice(id: dev))
        #expect(try await hook.deleteDevice(id: dev) == false)
        #expect(try await store.device(id: dev) == nil)
        figures = await hook.monitorFigures()
        #expect(figures.devices == 0 && figures.activeSubscriptions == 0)
        h.clock.advance(by: .seconds(2))
        h.quotes.push("item1", ["last_price": "4"])
        await mpn.settle()
        #expect(h.provider.alerts() == ["1", "3"], "a deleted device gets nothing")
        await mpn.shutdown()
        await store.close()
    }

    @Test("a trigger fired while its application is suspended is sent on resume")
    func triggeredNotificationWaitsForResume() async throws {
        let h = EngineHarness()
        defer { h.cleanUp() }
        let (mpn, store) = try await h.startModule()
        let hook = MPNAdminBridge(module: mpn)
        let dev = try await mpn.register(register, context: h.context).deviceId
        #expect(try await hook.setApplicationSuspended(platform: "Apple", appId: "com.example.app", suspended: true))
        _ = try await mpn.activate(
            activation(
                device: dev, format: #"{"aps":{"alert":"T$[2]"}}"#,
                trigger: "Integer.parseInt($[2]) == 7"), context: h.context)
        h.quotes.push("item1", ["stock_name": "A", "last_price": "7"])
        await mpn.settle()
        #expect(h.provider.alerts().isEmpty, "held while suspended")
        #expect(try await store.outboxEntries(status: .pending).count == 1)
        #expect(try await hook.setApplicationSuspended(platform: "Apple", appId: "com.example.app", suspended: false))
        await mpn.settle()
        #expect(h.provider.alerts() == ["T7"])
        #expect(try await store.outboxEntries(status: .pending).isEmpty)
        let figures = await hook.monitorFigures()
        #expect(figures.applications.first?.sent == 1)
        await mpn.shutdown()
        await store.close()
    }
}

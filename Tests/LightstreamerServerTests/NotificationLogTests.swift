import Testing

@testable import LightstreamerServer

/// The recovery log: progressives stay addressable while held, pruning frees from the front
/// only what is delivered and out of the window, and the byte count follows what is held.
@Suite struct NotificationLogTests {
    @Test func entriesStayAddressableAcrossManyPrunes() {
        var log = NotificationLog()
        var delivered = 0
        for i in 1...5_000 {
            #expect(log.append("U,1,1,\(i)", isUpdate: true, now: Int64(i)) == i)
            delivered = i - 3 // the last three are not delivered yet
            log.prune(delivered: delivered, now: Int64(i), windowMillis: 100, maxCount: 1_000)
            // Delivered entries younger than the window are held, undelivered ones always.
            #expect(log.firstProgressive == max(1, i - 100))
            #expect(log.entry(i)?.line == "U,1,1,\(i)")
            #expect(log.entry(log.firstProgressive)?.line == "U,1,1,\(log.firstProgressive)")
        }
        #expect(log.entry(log.firstProgressive - 1) == nil)
        #expect(log.entry(5_001) == nil)
        #expect(log.count == 101)
        let expectedBytes = (4_900...5_000).reduce(0) { $0 + "U,1,1,\($1)".utf8.count }
        #expect(log.heldBytes == expectedBytes)
        #expect(log.holdsEverything(after: 4_899))
        #expect(!log.holdsEverything(after: 4_898))
    }

    @Test func countLimitAndDropDeliveredNeverDropUndelivered() {
        var log = NotificationLog()
        for i in 1...50 { _ = log.append("line\(i)", isUpdate: i % 2 == 0, now: 0) }
        log.prune(delivered: 40, now: 0, windowMillis: 1_000_000, maxCount: 20)
        #expect(log.firstProgressive == 31)
        #expect(log.count == 20)
        log.dropDelivered(45)
        #expect(log.firstProgressive == 46)
        #expect(log.entry(46)?.line == "line46")
        #expect(log.entry(46)?.isUpdate == true)
        log.dropDelivered(50)
        #expect(log.count == 0)
        #expect(log.heldBytes == 0)
        #expect(log.lastProgressive == 50)
        #expect(log.holdsEverything(after: 50))
    }
}

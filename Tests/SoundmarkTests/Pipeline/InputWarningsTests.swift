import Foundation
import XCTest
@testable import Soundmark

final class InputWarningsTests: XCTestCase {
    /// The first 100 warnings of an input are kept in order, the rest counted in one last line;
    /// inputs are kept apart, and a take forgets what it returned.
    func testKeepsTheFirstHundredThenCountsTheRest() {
        let warnings = InputWarnings()
        for n in 1...103 { warnings.record("a.wav", "a \(n)") }
        warnings.record("b.wav", "b 1")
        warnings.record("b.wav", "b 2")
        XCTAssertEqual(warnings.take("b.wav"), ["b 1", "b 2"])
        let a = warnings.take("a.wav")
        XCTAssertEqual(a.count, 101)
        XCTAssertEqual(a.first, "a 1")
        XCTAssertEqual(a[99], "a 100")
        XCTAssertEqual(a.last, "3 more warning(s) on stderr")
        XCTAssertEqual(warnings.take("a.wav"), [])
        XCTAssertEqual(warnings.take("never.wav"), [])
        // Exactly the cap: no trailing line.
        for n in 1...100 { warnings.record("c.wav", "c \(n)") }
        XCTAssertEqual(warnings.take("c.wav"), (1...100).map { "c \($0)" })
    }

    /// Threads recording at once lose nothing: 8 threads × 40 warnings for one input keep 100
    /// and count 220.
    func testRecordsFromManyThreads() {
        let warnings = InputWarnings()
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for n in 0..<40 { warnings.record("live", "thread \(thread) warning \(n)") }
        }
        let taken = warnings.take("live")
        XCTAssertEqual(taken.count, 101)
        XCTAssertEqual(Set(taken.dropLast()).count, 100)
        XCTAssertEqual(taken.last, "220 more warning(s) on stderr")
    }
}

import XCTest
@testable import Soundmark

/// Parsing and display of PostgreSQL catalog locations (no server needed).
final class PostgresLocationTests: XCTestCase {
    func testDisplayDropsThePasswordAndOptions() throws {
        let l = try PostgresLocation("postgresql://auditor:s3cr%40t@db.example:5433/music?sslmode=disable&password=other")
        XCTAssertEqual(l.host, "db.example")
        XCTAssertEqual(l.port, "5433")
        XCTAssertEqual(l.database, "music")
        XCTAssertEqual(l.user, "auditor")
        XCTAssertEqual(l.display, "postgresql://auditor@db.example:5433/music")
        XCTAssertEqual(try PostgresLocation("postgres:///cat?host=/run/pg&port=6000").display, "postgresql://[socket /run/pg]:6000/cat")
    }

    func testRecognisesPostgresURIs() {
        XCTAssertTrue(PostgresLocation.isPostgres("postgresql://h/db"))
        XCTAssertTrue(PostgresLocation.isPostgres("postgres://h/db"))
        XCTAssertFalse(PostgresLocation.isPostgres("music.db"))
        XCTAssertFalse(PostgresLocation.isPostgres("./postgresql:/x"))
    }

    func testUnparseableURIErrorHasNoPassword() {
        XCTAssertThrowsError(try PostgresLocation("postgresql://u:hunter2@h:notaport/db?bogus=1")) { error in
            let text = (error as? LocalizedError)?.errorDescription ?? "\(error)"
            XCTAssertFalse(text.contains("hunter2"), text)
            XCTAssertTrue(text.hasPrefix("postgresql://u@h:notaport/db"), text)
        }
    }

    func testMessagesBecomeOneLine() {
        XCTAssertEqual(oneLine("FATAL:  role \"x\" does not exist\nDETAIL:  more\n"), "FATAL:  role \"x\" does not exist; DETAIL:  more")
    }
}

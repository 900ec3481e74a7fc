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

    /// A tester's examples: libpq's own parse errors quote the URI or the bad token, which
    /// held the password.
    func testLibpqParseErrorsNeverEchoThePassword() {
        for uri in ["postgresql://sm:TOPSECRET@[::1/music", "postgresql://sm:TOP%SECRET@127.0.0.1:55432/music"] {
            XCTAssertThrowsError(try PostgresLocation(uri)) { error in
                let text = (error as? LocalizedError)?.errorDescription ?? "\(error)"
                XCTAssertFalse(text.contains("TOPSECRET") || text.contains("TOP%SECRET") || text.contains("SECRET"), text)
                XCTAssertFalse(text.contains("\n"), text)
            }
        }
        XCTAssertEqual(PostgresLocation.scrubbed("invalid percent-encoded token: \"TOP%SECRET\"", uri: "postgresql://sm:TOP%SECRET@h/db"),
                       "invalid percent-encoded token: \"…\"")
    }

    func testMessagesBecomeOneLine() {
        XCTAssertEqual(oneLine("FATAL:  role \"x\" does not exist\nDETAIL:  more\n"), "FATAL:  role \"x\" does not exist; DETAIL:  more")
    }
}

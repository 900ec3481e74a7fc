import XCTest
@testable import Soundmark

/// Telling a catalog file from a PostgreSQL catalog, and the store of an SQLite file (no server
/// needed; the PostgreSQL store is covered by PostgresCLITests against a real server).
final class CatalogStoreTests: XCTestCase {
    func testArgumentsNameAFileOrAServer() {
        XCTAssertEqual(CatalogLocation("postgresql://h/db"), .postgres(uri: "postgresql://h/db"))
        XCTAssertEqual(CatalogLocation("postgres://u:pw@h:5433/db?sslmode=disable"), .postgres(uri: "postgres://u:pw@h:5433/db?sslmode=disable"))
        XCTAssertEqual(CatalogLocation("music.db"), .sqlite(path: "music.db"))
        XCTAssertEqual(CatalogLocation("./postgresql:/x"), .sqlite(path: "./postgresql:/x"))
        XCTAssertEqual(CatalogLocation("POSTGRESQL://h/db"), .sqlite(path: "POSTGRESQL://h/db"))
        XCTAssertFalse(CatalogLocation("postgresql://h/db").isMissingFile)
    }

    func testSQLiteStoreOpensAndCreatesTheFileItself() throws {
        let path = try TestSupport.temporaryDirectory(self).appendingPathComponent("c.db").path
        let location = CatalogLocation(path)
        XCTAssertTrue(location.isMissingFile)
        let store = try CatalogStore(location, create: true)
        XCTAssertNil(store.server)
        XCTAssertEqual(store.filePath, path)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "opening the store reads nothing")
        XCTAssertThrowsError(try store.open(readOnly: true)) { error in
            guard case SoundmarkError.catalogUnreadable(let p, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(p, path)
            XCTAssertEqual(reason, "no such file")
        }
        let catalog = try store.open(create: true)
        XCTAssertEqual(catalog.path, path)
        XCTAssertEqual(try catalog.references().count, 0)
        XCTAssertFalse(location.isMissingFile)
        XCTAssertFalse(try store.refresh())
        XCTAssertEqual(try store.open(readOnly: true, fresh: false).path, path)
    }
}

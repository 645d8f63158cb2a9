import FlagpoleCore
import Foundation
import Testing

@testable import FlagpoleServer
@testable import FlagpoleStore

/// The features and configs pages' filters: what their GET forms send, read back, and which
/// items each keeps. dashboard.js applies the same rules to the items' `data-*` attributes.
@Suite("Catalog filters")
struct CatalogFilterTests {
    /// 2026-11-20 23:30 UTC: the 21st is the next day in UTC, whatever the machine's zone.
    static let lateOnThe20th = Date(timeIntervalSince1970: 1_795_217_400)
    static let checkout = FeatureFacts(
        Feature(name: "New Checkout", section: "Payments", testVariations: ["A", "B"]), tags: ["ios", "q3 launch"],
        ruleCount: 2,
        lastChange: FeatureChange(
            revision: 7, kind: .edit, actor: "alice", message: "biases", createdAt: lateOnThe20th + 3600))
    static let darkMode = FeatureFacts(
        Feature(name: "Dark mode", enabled: false), tags: [], ruleCount: 0,
        lastChange: FeatureChange(revision: 3, kind: .edit, actor: "bob", message: "off", createdAt: lateOnThe20th))
    static let premium = FeatureFacts(
        Feature(name: "Premium", enabled: true, unlocked: true), tags: ["ios"], ruleCount: 0)

    static func shown(by query: String) throws -> [String] {
        let filter = try FeatureFilter(query: query)
        return [checkout, darkMode, premium].filter(filter.matches).map(\.name)
    }

    @Test(
        "Each feature filter keeps what it names, and filters combine",
        arguments: [
            ("", ["New Checkout", "Dark mode", "Premium"]),
            ("q=check", ["New Checkout"]),
            ("q=CHECK", ["New Checkout"]),
            ("q=new+checkout", ["New Checkout"]),
            ("q=e", ["New Checkout", "Dark mode", "Premium"]),
            ("q=zz", []),
            ("tag=ios", ["New Checkout", "Premium"]),
            ("tag=q3%20launch", ["New Checkout"]),
            ("tag=q3+launch", ["New Checkout"]),
            ("tag=IOS", []),
            ("kind=ab-test", ["New Checkout"]),
            ("kind=unlock-flag", ["Premium"]),
            ("state=disabled", ["Dark mode"]),
            ("state=enabled", ["New Checkout", "Premium"]),
            ("section=Payments", ["New Checkout"]),
            ("section=No+section", ["Dark mode", "Premium"]),
            ("rules=with", ["New Checkout"]),
            ("rules=without", ["Dark mode", "Premium"]),
            ("tag=ios&state=enabled&rules=without", ["Premium"]),
            ("q=&tag=&kind=&state=&section=&rules=", ["New Checkout", "Dark mode", "Premium"]),
            ("kind=spaceship&state=maybe", ["New Checkout", "Dark mode", "Premium"]),
            ("by=alice", ["New Checkout"]),
            ("by=carol", []),
            ("since=2026-11-20", ["New Checkout", "Dark mode"]),
            ("since=2026-11-21", ["New Checkout"]),
            ("since=2026-11-22", []),
            ("since=yesterday", ["New Checkout", "Dark mode", "Premium"]),
        ])
    func featureFilters(query: String, expected: [String]) throws {
        #expect(try Self.shown(by: query) == expected, "\(query)")
    }

    @Test("The form's query is read back, and written back for links without the defaults")
    func featureQueryRoundTrip() throws {
        let filter = try FeatureFilter(
            query:
                "q=new+%C3%A9&tag=a%26b&kind=mvt-test&state=enabled&section=S&rules=with&by=al+ice&since=2026-01-02"
                + "&sort=name&view=table&notice=x")
        #expect(filter.name.text == "new é")
        #expect(filter.tag == "a&b")
        #expect(filter.kind == .mvtTest && filter.state == .enabled && filter.rules == .with)
        #expect(filter.section == "S" && filter.sort == .name && filter.view == .table)
        #expect(filter.actor == "al ice" && filter.since == "2026-01-02")
        #expect(filter.isFiltering)
        #expect(try FeatureFilter(query: String(filter.queryString.dropFirst())) == filter)
        #expect(FeatureFilter().queryString == "")
        let plain = try FeatureFilter(query: "sort=sections&view=cards")
        #expect(!plain.isFiltering && plain.queryString == "?view=cards")
    }

    @Test("Nothing found says why: the tag alone, or the search")
    func emptyMessages() throws {
        #expect(try FeatureFilter(query: "tag=beta&sort=name").emptyMessage == "No feature is tagged beta.")
        #expect(try FeatureFilter(query: "tag=beta&q=x").emptyMessage == "No feature matches this search.")
        #expect(try ConfigFilter(query: "tag=beta").emptyMessage == "No config is tagged beta.")
        #expect(try ConfigFilter(query: "type=int").emptyMessage == "No config matches this search.")
    }

    @Test("A query that is not URL-encoded is a bad form, not a server error")
    func malformedQuery() {
        #expect(throws: DashboardError.self) { try FeatureFilter(query: "q=%ZZ") }
        #expect(throws: DashboardError.self) { try ConfigFilter(query: "q=%ZZ") }
    }

    @Test("The layout links keep the filters and mark the chosen layout only")
    func layoutLinks() throws {
        let auto = CatalogViewLink.links(to: "/t/e", filter: try FeatureFilter(query: "q=dark"))
        #expect(auto.map(\.url) == ["/t/e?q=dark&view=cards", "/t/e?q=dark&view=table"])
        #expect(auto.allSatisfy { !$0.isCurrent })
        let table = CatalogViewLink.links(to: "/t/e", filter: try FeatureFilter(query: "view=table"))
        #expect(table.map(\.isCurrent) == [false, true])
    }

    @Test(
        "Each config filter keeps what it names",
        arguments: [
            ("", ["Welcome Title", "items", "theme"]),
            ("q=TITLE", ["Welcome Title"]),
            ("tag=watch", ["items"]),
            ("type=json", ["theme"]),
            ("follows=yes", ["Welcome Title"]),
            ("follows=no", ["items", "theme"]),
            ("follows=no&q=i", ["items"]),
            ("type=nonsense", ["Welcome Title", "items", "theme"]),
        ])
    func configFilters(query: String, expected: [String]) throws {
        let configs = [
            Config(
                name: "Welcome Title", type: .string, defaultValue: .string("Hi"), tags: ["ios"], follows: "Onboarding"),
            Config(name: "items", type: .int, defaultValue: .int(15), tags: ["watch"]),
            Config(name: "theme", type: .json, defaultValue: .json(JSONObject())),
        ]
        let filter = try ConfigFilter(query: query)
        #expect(configs.filter(filter.matches).map(\.name) == expected, "\(query)")
    }

    @Test("Sorted by name, the features are one list; by sections, grouped in the document's order")
    func sections() {
        let rows = [Self.premium, Self.checkout, Self.darkMode].map { facts in
            FeatureRow(
                card: FeatureCard(Feature(name: facts.name), url: "/", warnings: []), facts: facts,
                isHidden: facts.name == "New Checkout")
        }
        let grouped = OverviewPage.sections(rows, sortedBy: .sections)
        #expect(grouped.map(\.name) == ["No section", "Payments"])
        #expect(grouped.map(\.isHidden) == [false, true])
        let byName = OverviewPage.sections(rows, sortedBy: .name)
        #expect(byName.count == 1 && byName[0].features.map(\.facts.name) == ["Dark mode", "New Checkout", "Premium"])
        let byChange = OverviewPage.sections(rows, sortedBy: .change)
        #expect(byChange[0].features.map(\.facts.name) == ["New Checkout", "Dark mode", "Premium"])
        #expect(byChange[0].features.map(\.changedOn) == ["2026-11-21", "2026-11-20", nil])
        let last = byChange[0].features[0].lastChange
        #expect(last?.text == "revision 7 by alice" && last?.time.text == "2026-11-21 00:30 UTC")
    }
}

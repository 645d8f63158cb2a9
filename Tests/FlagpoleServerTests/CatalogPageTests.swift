import FlagpoleCore
import FlagpoleStore
import Testing

@testable import FlagpoleServer

/// The features and configs pages with a search: what is hidden, what the form shows, the count
/// and the layouts, through the real router.
@Suite("Dashboard catalog search")
struct CatalogPageTests {
    static let base = DashboardTests.base

    /// The item (card or row) of `name` in `page`, from its opening tag.
    static func items(named name: String, in page: String) -> [Substring] {
        page.matches(of: #/<(li|tr) [^>]*data-catalog-item[^>]*>/#).map(\.output.0).filter {
            $0.contains(#"data-name="\#(name)""#)
        }
    }

    @Test("The overview hides what the search leaves out, shows the form as sent and counts what is left")
    func overviewSearch() async throws {
        let server = try await TestServer()
        let rules = try TargetingDecoder.decodeRules(
            Array(#"{"rules": [{"id": "everyone-b", "serve": {"variation": "Group B"}}]}"#.utf8)
        ).rules
        _ = try await server.store.catalog.setRules(
            rules, ofFeature: TestServer.abTest, in: TestServer.acme, options: EditOptions(actor: "test"))
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .reader))

            let all = try await browser.get(Self.base).text
            #expect(all.contains("6 of 6 features"))
            #expect(all.contains(#"<ul class="cards">"#) && !all.contains(#"<table class="features">"#))
            #expect(all.contains(#"<div class="catalog layout-auto">"#))
            let items = all.matches(of: #/<(li|tr) [^>]*data-catalog-item[^>]*>/#)
            #expect(items.count == 6 && items.allSatisfy { !$0.output.0.contains(" hidden") })

            let found = try await browser.get("\(Self.base)?q=example+a%2Fb&rules=with&view=table").text
            #expect(found.contains(#"role="status" aria-live="polite">1 of 6 features</p>"#))
            #expect(found.contains(#"name="q" value="example a/b""#))
            #expect(found.contains(#"<option value="with" selected>"#))
            #expect(found.contains(#"<input type="hidden" name="view" value="table">"#))
            #expect(!found.contains(#"<ul class="cards">"#) && found.contains(#"<table class="features">"#))
            let match = Self.items(named: TestServer.abTest, in: found)
            #expect(match.count == 1 && !match[0].contains(" hidden") && match[0].contains(#"data-rules="with""#))
            let other = Self.items(named: "Example MVT Test", in: found)
            #expect(other.count == 1 && other[0].contains(" hidden"))
            #expect(
                found.contains(
                    #"<a class="button view-table" href="\#(Self.base)?q=example%20a/b&amp;rules=with&amp;view=table" aria-current="page">"#
                ))

            let recent = try await browser.get("\(Self.base)?sort=change&view=table").text
            #expect(recent.contains("All features, last changed first") && recent.contains("Last change</th>"))
            #expect(recent.contains(#"<option value="change" selected>"#))

            let none = try await browser.get("\(Self.base)?state=disabled&kind=mvt-test").text
            #expect(none.contains("0 of 6 features") && none.contains(#"<p id="catalog-empty">No feature matches"#))
            #expect(try await browser.get("\(Self.base)?q=%ZZ").status == .badRequest)
        }
    }

    @Test("The configs page filters by name, type and whether a config follows a feature")
    func configsSearch() async throws {
        let server = try await TestServer()
        try await DashboardTests.addConfigs(to: server)
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .reader))
            let page = try await browser.get("\(DashboardTests.configs)?follows=no&q=E").text
            #expect(page.contains("2 of 3 configs"))
            #expect(page.contains(#"<option value="no" selected>"#))
            #expect(Self.items(named: "theme", in: page).allSatisfy { !$0.contains(" hidden") })
            #expect(Self.items(named: "welcome / title é", in: page).allSatisfy { $0.contains(" hidden") })
            #expect(page.contains(#"role="region" aria-label="Configs, as a table""#))
        }
    }
}

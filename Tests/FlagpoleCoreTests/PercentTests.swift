import FlagpoleCore
import Testing

/// Shares of users as messages show them.
@Suite("Percent")
struct PercentTests {
    @Test(
        "Shares are rounded to two decimals, integral ones without a fraction",
        arguments: [
            (50.0, "50 %"), (100.0 / 3, "33.33 %"), (200.0 / 3, "66.67 %"), (0, "0 %"), (12.5, "12.5 %"),
            (99.999, "100 %"),
        ])
    func format(value: Double, text: String) {
        #expect(Percent.format(value) == text)
    }

    @Test("The number alone takes any number of decimals")
    func number() {
        #expect(Percent.number(99.89999999999999, digits: 6) == "99.9")
        #expect(Percent.number(2.0 / 3, digits: 0) == "1")
        #expect(Percent.number(1.23456, digits: 3) == "1.235")
    }
}

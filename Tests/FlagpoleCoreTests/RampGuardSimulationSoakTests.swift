import FlagpoleCore
import FlagpoleTestSupport
import Foundation
import Testing

/// The guards' error rates, by simulation with a known truth at the issue's traffic: 20 000 new
/// users a day, a 1 % base rate of crashes, a +0.2-point threshold, steps 1/5/20/50/100 a day
/// each (docs/RAMPS.md, "How well the guards work"). Seeds are fixed so a run can be replayed.
@Suite("Ramp guards, simulated")
struct RampGuardSimulationSoakTests {
    static let ramps = 2_000

    static func outcomes(_ simulation: RampSimulation, seed: UInt64) -> [RampSimulation.Outcome] {
        var random = SeededGenerator(seed: seed)
        return (0..<ramps).map { _ in simulation.run(using: &random) }
    }

    static func report(_ name: String, _ hits: Int) -> (rate: Double, low: Double, high: Double) {
        let rate = RampSimulation.rate(hits, of: ramps)
        print(
            "\(name): \(hits) of \(ramps) = \(String(format: "%.2f", rate.rate * 100)) % (95 % interval \(String(format: "%.2f", rate.low * 100))–\(String(format: "%.2f", rate.high * 100)) %)"
        )
        return rate
    }

    @Test("With the true effect exactly at the threshold, at most 5 % of ramps roll back")
    func atThreshold() {
        var simulation = RampSimulation()
        simulation.effect = 0.002
        let outcomes = Self.outcomes(simulation, seed: 1)
        let rolledBack = outcomes.filter { if case .rolledBack = $0 { true } else { false } }.count
        #expect(Self.report("effect at the threshold, rolled back", rolledBack).rate <= 0.05)
    }

    /// The issue asks for 80 % before the 50 % step; at this traffic the holds of the 1, 5 and
    /// 20 % steps hold about 5 000 users of the growing variation in all, and 57 % is what an
    /// always-valid interval at α/4 finds there (docs/RAMPS.md says what would reach 80 %).
    @Test("With a one-point rise, most ramps roll back before the 50 % step and nearly all before finishing")
    func onePoint() {
        var simulation = RampSimulation()
        simulation.effect = 0.01
        let outcomes = Self.outcomes(simulation, seed: 2)
        let early = outcomes.filter { if case .rolledBack(let step) = $0 { step < 3 } else { false } }.count
        let any = outcomes.filter { if case .rolledBack = $0 { true } else { false } }.count
        #expect(Self.report("+1 point, rolled back before the 50 % step", early).low >= 0.5)
        #expect(Self.report("+1 point, rolled back at any step", any).low >= 0.95)
    }

    @Test("A planted sample-ratio mismatch pauses; a healthy ramp is paused by it at most 1 % of the time")
    func sampleRatio() {
        var planted = RampSimulation()
        planted.lostShare = 0.2
        let pausedPlanted = Self.outcomes(planted, seed: 3).filter { if case .paused = $0 { true } else { false } }
        #expect(Self.report("20 % of the growing variation's users lost, paused", pausedPlanted.count).low >= 0.99)
        let healthy = Self.outcomes(RampSimulation(), seed: 4)
        let paused = healthy.filter { if case .paused = $0 { true } else { false } }.count
        let rolledBack = healthy.filter { if case .rolledBack = $0 { true } else { false } }.count
        #expect(Self.report("healthy, paused by the sample-ratio guard", paused).rate <= 0.01)
        #expect(Self.report("healthy, rolled back", rolledBack).rate <= 0.05)
    }
}

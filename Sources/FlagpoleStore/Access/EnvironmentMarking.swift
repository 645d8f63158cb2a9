/// How an environment is marked for the people who change it, so that nobody takes production
/// for staging: a colour, and whether a change here needs a reason. Unlike `DeliverySettings`, it
/// changes nothing that apps are served.
public struct EnvironmentMarking: Hashable, Sendable {
    /// The colour the dashboard shows the environment in; `nil`: none.
    public var colour: EnvironmentColour?
    /// Changes here need a reason (production, typically).
    public var requiresReason: Bool

    /// A marking; the defaults are no colour and no reason needed.
    public init(colour: EnvironmentColour? = nil, requiresReason: Bool = false) {
        self.colour = colour
        self.requiresReason = requiresReason
    }
}

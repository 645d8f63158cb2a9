import FlagpoleCore

extension Transaction {
    /// The environment's current document, read from its tables.
    func currentDocument(in scope: EnvironmentScope) throws -> FeaturesDocument {
        try currentDocument(in: scope, features: features.storedFeatures(in: scope))
    }

    /// The environment's current document, of `features` read in the same transaction.
    func currentDocument(in scope: EnvironmentScope, features: [StoredFeature]) throws -> FeaturesDocument {
        FeaturesDocument(
            features: features.filter { !$0.isArchived }.map(\.feature), extras: try environments.extras(in: scope),
            featuresPosition: scope.featuresPosition)
    }
}

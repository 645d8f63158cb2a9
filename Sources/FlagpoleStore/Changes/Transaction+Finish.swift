import FlagpoleCore
import Foundation

extension Transaction {
    /// What happens as a write commits, in its transaction, just before the commit: the one
    /// answer to "what does a write tell, and whom?".
    ///
    /// - Each environment it changed takes the next number of its change sequence, with the users
    ///   it changed (unless a step it took already names them: `stepsTaken`) (every server reads it: the poll on SQLite, after a `NOTIFY` on PostgreSQL,
    ///   which the step's trigger sends and which goes out with the commit).
    /// - Each event it recorded is queued once for each of its environment's webhooks that hears
    ///   it (sent after the commit by `serve` or `flagpole tick`).
    ///
    /// After the commit, `FeatureStore.write` tells this process's observers of the environments
    /// whose delivery changed (`changedEnvironments`). A write that throws, or a dry run that
    /// writes nothing, tells nobody anything: its transaction rolls back with all of this.
    func finish() throws {
        let time = Date()
        for change in changes where !stepsTaken.contains(where: { $0.covers(change) }) {
            try environments.advanceChangeSequence(change, at: time)
        }
        var webhooksByPath: [EnvironmentPath: [WebhookRow]] = [:]
        for event in events {
            if webhooksByPath[event.path] == nil {
                webhooksByPath[event.path] = try webhooks.webhooks(
                    in: try environments.scope(of: event.path), activeOnly: true)
            }
            for webhook in webhooksByPath[event.path]! where webhook.events.contains(event.kind) {
                try webhooks.insertDelivery(
                    id: UUID().uuidString.lowercased(), webhookID: webhook.id, event: event.kind.rawValue,
                    body: event.storedBody, now: event.at)
            }
        }
    }
}

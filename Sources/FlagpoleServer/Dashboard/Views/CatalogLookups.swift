import Mustache

// The features page renders every feature twice (a card and a row) with a dozen lookups each;
// Mustache answers a lookup by reflecting the whole value (`Mirror`) unless the value names its
// fields itself. These name them, keeping the page's time small at hundreds of features. A `nil`
// field is missing, as Mirror makes it: the lookup goes on to the enclosing values.

extension OverviewPage: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "chrome": chrome
        case "path": path
        case "url": url
        case "revision": revision
        case "importURL": importURL
        case "canEdit": canEdit
        case "csrf": csrf
        case "documentWarnings": documentWarnings
        case "tag": tag
        case "tags": tags
        case "hasTags": hasTags
        case "total": total
        case "hasFeatures": hasFeatures
        case "sections": sections
        case "search": search
        case "count": count
        case "emptyMessage": emptyMessage
        case "layout": layout
        case "showsCards": showsCards
        case "showsTable": showsTable
        case "viewLinks": viewLinks
        case "connections": connections
        default: nil
        }
    }
}

extension OverviewPage.Section: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "index": index
        case "name": self.name
        case "features": features
        case "isHidden": isHidden
        default: nil
        }
    }
}

extension FeatureRow: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "card": card
        case "facts": facts
        case "tagsJSON": tagsJSON
        case "split": split
        case "isHidden": isHidden
        case "kind": kind
        case "state": state
        case "rules": rules
        case "actor": actor
        case "changedOn": changedOn
        case "lastChange": lastChange
        default: nil
        }
    }
}

extension FeatureFacts: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "name": self.name
        case "section": section
        case "ruleCount": ruleCount
        default: nil
        }
    }
}

extension FeatureCard: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "name": self.name
        case "url": url
        case "kind": kind
        case "isEnabled": isEnabled
        case "description": description
        case "section": section
        case "bar": bar
        case "labels": labels
        case "hasLabels": hasLabels
        case "tags": tags
        case "hasTags": hasTags
        case "warnings": warnings
        default: nil
        }
    }
}

extension TagLink: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "name": self.name
        case "url": url
        case "isCurrent": isCurrent
        default: nil
        }
    }
}

extension BiasBar: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "label": label
        case "segments": segments
        default: nil
        }
    }
}

extension BiasBar.Segment: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "name": self.name
        case "x": x
        case "width": width
        case "percent": percent
        case "color": color
        default: nil
        }
    }
}

extension DiagnosticList: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "diagnostics": diagnostics
        case "hasDiagnostics": hasDiagnostics
        default: nil
        }
    }
}

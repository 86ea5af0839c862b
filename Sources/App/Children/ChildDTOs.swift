import Foundation
import Vapor

/// A child as the parent's app sees it. A child is a display name, an optional birth year and an
/// avatar key — nothing else is kept about who they are.
struct ChildDTO: Content {
    let id: Int
    let name: String
    @ExplicitNull var birthYear: Int?
    @ExplicitNull var avatar: String?
    let libraryCount: Int

}

/// What removing a child removed, row counts by kind (the receipt of `DELETE /children/:id`).
struct RemovalReceiptDTO: Content {
    let childId: Int
    let libraryEntries: Int
    let plays: Int
    let controls: Int
    let auditEntries: Int
    /// Book requests removed, and child devices signed out (child mode).
    let requests: Int
    var devicesSignedOut: Int
}

/// The avatars a child may have (keys the apps draw; the server stores only the key).
enum ChildAvatars {
    static let keys = ["bear", "bunny", "cat", "dino", "dog", "elephant", "fox", "lion", "owl", "panda", "penguin", "robot", "rocket", "star", "turtle", "unicorn"]
}

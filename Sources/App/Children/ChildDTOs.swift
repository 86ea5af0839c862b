import Foundation
import Vapor

/// A child as the parent's app sees it. A child is a display name, an optional birth year and an
/// avatar key — nothing else is kept about who they are.
struct ChildDTO: Content {
    let id: Int
    let name: String
    let birthYear: Int?
    let avatar: String?
    let libraryCount: Int

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id); try c.encode(name, forKey: .name)
        try c.encode(birthYear, forKey: .birthYear); try c.encode(avatar, forKey: .avatar)
        try c.encode(libraryCount, forKey: .libraryCount)
    }
}

/// What removing a child removed, row counts by kind (the receipt of `DELETE /children/:id`).
struct RemovalReceiptDTO: Content {
    let childId: Int
    let libraryEntries: Int
    let plays: Int
    let controls: Int
    let auditEntries: Int
}

/// The avatars a child may have (keys the apps draw; the server stores only the key).
enum ChildAvatars {
    static let keys = ["bear", "bunny", "cat", "dino", "dog", "elephant", "fox", "lion", "owl", "panda", "penguin", "robot", "rocket", "star", "turtle", "unicorn"]
}

/// The product plan's streaks over the distinct days a child played something (days as numbers,
/// one apart per calendar day in the family's time zone).
///
/// Days chain while each is at most `gap` days after the one before. The longest streak is the
/// longest chain, counted in play days; the current streak is the chain ending at the latest play
/// day, and only while that day is at most `gap` days before today.
public enum Streaks {
    public static func of(days: [Int], today: Int, gap: Int = 7) -> (current: Int, longest: Int) {
        let days = Array(Set(days)).sorted()
        guard var previous = days.first else { return (0, 0) }
        var chain = 1, longest = 1
        for day in days.dropFirst() {
            chain = day - previous <= gap ? chain + 1 : 1
            longest = max(longest, chain)
            previous = day
        }
        let current = today - previous <= gap ? chain : 0
        return (current, longest)
    }
}

/// The duration badge on a cover (the plan's §5.1): `5:30` under ten minutes, `12 min` from ten
/// minutes (rounded to the nearest minute); nothing when the duration is unknown.
public enum DurationFormat {
    public static func badge(seconds: Int?) -> String? {
        guard let seconds, seconds > 0 else { return nil }
        if seconds < 600 {
            let remainder = seconds % 60
            return "\(seconds / 60):\(remainder < 10 ? "0" : "")\(remainder)"
        }
        return "\((seconds + 30) / 60) min"
    }
}

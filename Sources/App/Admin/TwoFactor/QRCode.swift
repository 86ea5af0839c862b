import Foundation

/// A QR code as SVG, drawn by `qrencode` (Debian's package, installed by scripts/deps.sh) out of
/// process with a time limit, as covers are by libvips.
enum QRCode {
    static func svg(_ text: String) async throws -> String {
        let run = try await ChildProcess.run(["qrencode", "--type=SVG", "--level=M", "--margin=2", "--size=6", "--output=-", text], seconds: 10)
        guard run.status == 0 else { throw QRError(message: run.error) }
        return run.output
    }

    struct QRError: Error, CustomStringConvertible {
        let message: String
        var description: String { "qrencode failed: \(message)" }
    }
}

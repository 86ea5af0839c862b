import Crypto
import Foundation

/// Makes a cover's renditions with libvips' command-line tools (Debian's `libvips-tools`; what
/// imgproxy and sharp build on), out of the app's process (`ChildProcess`: one launcher, a time
/// limit each): a hostile file can crash or bloat only a short-lived `vips`, never the server, and
/// the app holds just the upload and the results.
///
/// Checks, in order: at most 10 MB; JPEG, PNG or WebP by its first bytes; the same format by
/// libvips' own loader (a polyglot that sniffs as one and loads as another is refused); at most
/// 10,000 pixels a side and 40 megapixels, read from the header before anything is decoded (a
/// decompression bomb); then decoded whole, any warning an error (a truncated file).
enum CoverProcessor {
    static let maximumBytes = 10 * 1024 * 1024
    static let maximumSide = 10_000
    static let maximumPixels = 40_000_000
    /// Rendition widths; none wider than the original.
    static let widths = [160, 320, 640, 1280]

    struct Rendition: Sendable, Equatable {
        let width: Int
        let height: Int
        let contentType: String
        let bytes: Data
        /// The first 32 hex digits of the bytes' SHA-256: the file's name and ETag.
        var hash: String { SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined().prefix(32).description }
        var fileExtension: String { contentType == "image/webp" ? "webp" : "jpg" }
    }

    struct Result: Sendable {
        let width: Int
        let height: Int
        let dominantColor: String
        let renditions: [Rendition]
    }

    /// Why an upload is refused, as the form shows it.
    struct Refusal: Error, Equatable { let message: String }

    /// The checks that cost nothing (present, size, first bytes): made before an upload waits for
    /// a worker or spends its budget. The format by its first bytes.
    @discardableResult
    static func check(_ data: Data) throws -> Format {
        guard !data.isEmpty else { throw Refusal(message: "Choose an image file.") }
        guard data.count <= maximumBytes else { throw Refusal(message: "The image is larger than 10 MB.") }
        guard let format = sniff(data) else { throw Refusal(message: "This is not a JPEG, PNG or WebP image.") }
        return format
    }

    /// The renditions; run under the instance's `CoverGate` (a worker each), never unbounded.
    static func process(_ data: Data) async throws -> Result {
        let format = try check(data)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cover-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("upload.\(format.extension)").path
        try data.write(to: URL(fileURLWithPath: input))

        let loader = try await header(input, "vips-loader")
        guard loader.hasPrefix(format.loader) else {
            throw Refusal(message: "The file's content does not match its format (\(format.name)).")
        }
        guard let width = Int(try await header(input, "width")), let height = Int(try await header(input, "height")),
              width > 0, height > 0 else { throw Refusal(message: "The image has no size.") }
        guard width <= maximumSide, height <= maximumSide, width * height <= maximumPixels else {
            throw Refusal(message: "The image is \(width) × \(height) pixels; at most 10,000 a side and 40 megapixels.")
        }
        guard try await vips(["avg", "\(input)[fail_on=warning]"]).status == 0 else {
            throw Refusal(message: "The image is damaged or cut short.")
        }
        let displayed = try await displayedSize(input, width: width, height: height)
        // Orientation from EXIF applied (thumbnail does it), then every rendition encoded from a
        // stripped lossless PNG: libvips 8.14's WebP writer keeps the upload's EXIF even with
        // `strip` (a camera's GPS position, say), so nothing of the original's metadata reaches it.
        // The widest first from the upload, each narrower one from the one before (already upright
        // and small: a 10 MB photo is decoded once here, not once per width).
        var renditions: [Rendition] = []
        var source = input
        for target in widths.reversed() where target <= max(displayed.width, widths[0]) {
            let plain = folder.appendingPathComponent("\(target).png").path
            // A width only: the height follows (thumbnail fits a box, as tall as wide unless told).
            let scaled = try await vips(["thumbnail", source, plain + "[strip,compression=1]", String(target), "--height", "100000", "--size", "down"])
            source = plain
            guard scaled.status == 0 else { throw Refusal(message: "The image could not be converted: \(scaled.error.prefix(200))") }
            for (suffix, type, options) in [("webp", "image/webp", "[Q=80,strip]"), ("jpg", "image/jpeg", "[Q=82,strip,optimize_coding,interlace]")] {
                let output = folder.appendingPathComponent("\(target).\(suffix)").path
                let run = try await vips(["copy", plain, output + options])
                guard run.status == 0 else { throw Refusal(message: "The image could not be converted: \(run.error.prefix(200))") }
                renditions.append(Rendition(width: Int(try await header(output, "width")) ?? target,
                                            height: Int(try await header(output, "height")) ?? 0,
                                            contentType: type, bytes: try Data(contentsOf: URL(fileURLWithPath: output))))
            }
        }
        renditions.sort { ($0.width, $0.contentType) < ($1.width, $1.contentType) }
        return Result(width: displayed.width, height: displayed.height, dominantColor: try await dominantColor(input, folder: folder),
                      renditions: renditions)
    }

    /// Width and height as shown: swapped when EXIF says the picture is turned a quarter.
    private static func displayedSize(_ path: String, width: Int, height: Int) async throws -> (width: Int, height: Int) {
        let orientation = Int((try? await header(path, "orientation")) ?? "") ?? 1
        return (5...8).contains(orientation) ? (height, width) : (width, height)
    }

    /// The picture shrunk to one pixel: its average colour, `#rrggbb`.
    private static func dominantColor(_ input: String, folder: URL) async throws -> String {
        let pixel = folder.appendingPathComponent("pixel.v").path
        guard try await vips(["thumbnail", input, pixel, "1", "--height", "1", "--size", "force"]).status == 0 else { return "#808080" }
        let srgb = folder.appendingPathComponent("pixel-srgb.v").path
        guard try await vips(["colourspace", pixel, srgb, "srgb"]).status == 0 else { return "#808080" }
        let values = try await vips(["getpoint", srgb, "0", "0"]).output.split(separator: " ").compactMap { Double($0) }
        let rgb = values.count >= 3 ? Array(values.prefix(3)) : Array(repeating: values.first ?? 128, count: 3)
        return "#" + rgb.map { String(format: "%02x", max(0, min(255, Int($0.rounded())))) }.joined()
    }

    struct Format { let name: String; let `extension`: String; let loader: String }

    /// The format by the file's first bytes.
    static func sniff(_ data: Data) -> Format? {
        let bytes = [UInt8](data.prefix(12))
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return Format(name: "JPEG", extension: "jpg", loader: "jpegload") }
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return Format(name: "PNG", extension: "png", loader: "pngload") }
        if bytes.count == 12, bytes[0..<4] == [0x52, 0x49, 0x46, 0x46], bytes[8..<12] == [0x57, 0x45, 0x42, 0x50] {
            return Format(name: "WebP", extension: "webp", loader: "webpload")
        }
        return nil
    }

    private static func header(_ path: String, _ field: String) async throws -> String {
        let run = try await ChildProcess.run(["vipsheader", "-f", field, path])
        guard run.status == 0 else { throw Refusal(message: "This is not an image libvips can read.") }
        return run.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func vips(_ arguments: [String]) async throws -> ChildProcess.Run {
        try await ChildProcess.run(["vips"] + arguments)
    }
}

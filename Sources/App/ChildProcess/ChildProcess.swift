import Foundation
import NIOConcurrencyHelpers
#if canImport(Glibc)
import Glibc
#endif

/// The one way the app runs another program (libvips' `vips` and `vipsheader` for covers,
/// `qrencode` for the second-factor QR code): with a hard time limit, its output in files (no pipe
/// to fill), one thread for libvips.
///
/// Not Foundation's `Process`: its `run()` crashed the whole server (SIGSEGV inside `Process.run`,
/// issue 43) when several uploads launched long-running children at once. Here launches go
/// through one lock around `posix_spawnp` (they cannot race each other); the child gets `/dev/null`
/// as input, none of the server's descriptors (sockets, the database's), default signal handling
/// and a process group of its own; a thread of its own waits for it, so no pool thread blocks.
/// Past `seconds` the whole group is killed (SIGKILL) and the run is reported as timed out.
enum ChildProcess {
    struct Run: Sendable {
        /// The exit status; 128 + the signal's number when a signal ended it.
        let status: Int32
        let output: String
        let error: String
        /// Killed for running past its time limit.
        let timedOut: Bool
    }

    struct LaunchFailed: Error, CustomStringConvertible {
        let program: String
        let code: Int32
        var description: String { "could not start \(program): \(String(cString: strerror(code)))" }
    }

    /// Serialises every launch of the process (`posix_spawnp` and its file actions).
    private static let launcher = NIOLock()

    /// Runs `arguments` (the program, found on `PATH`, then its arguments) and waits for it; killed
    /// after `seconds`.
    static func run(_ arguments: [String], seconds: Int = 30) async throws -> Run {
        precondition(!arguments.isEmpty)
        let folder = FileManager.default.temporaryDirectory.path
        let out = "\(folder)/child-\(UUID().uuidString).out", err = "\(folder)/child-\(UUID().uuidString).err"
        defer { unlink(out); unlink(err) }
        let child = Child(pid: try spawn(arguments, output: out, error: err))
        let timer = Task {
            try await Task.sleep(for: .seconds(seconds))
            child.kill()
        }
        let status = await child.exit()
        timer.cancel()
        return Run(status: status, output: (try? String(contentsOfFile: out, encoding: .utf8)) ?? "",
                   error: (try? String(contentsOfFile: err, encoding: .utf8)) ?? "", timedOut: child.killed)
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+; declared only under `_GNU_SOURCE`,
    /// which Swift's Glibc module does not define). Without it, only close-on-exec descriptors close.
    private static let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32).self)
    }()

    private static func spawn(_ arguments: [String], output: String, error: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, error, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        _ = closeFrom?(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t(), everySignal = sigset_t()
        sigemptyset(&noSignals)
        sigfillset(&everySignal)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &everySignal)   // the server ignores SIGPIPE; its children must not
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var environment = ProcessInfo.processInfo.environment
        environment["VIPS_CONCURRENCY"] = "1"
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let code = launcher.withLock { posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp) }
        guard code == 0 else { throw LaunchFailed(program: arguments[0], code: code) }
        return pid
    }

    /// A started child: waited for on a thread of its own, killed at most once and only before it
    /// is reaped (so never another process that reused its id).
    private final class Child: Sendable {
        let pid: pid_t
        private struct State { var exited = false; var killed = false }
        private let state = NIOLockedValueBox(State())

        init(pid: pid_t) { self.pid = pid }

        var killed: Bool { state.withLockedValue { $0.killed } }

        func kill() {
            state.withLockedValue { state in
                guard !state.exited else { return }
                state.killed = true
                _ = Glibc.kill(-pid, SIGKILL)
            }
        }

        /// Waits (on a new thread) until the child ends; its status, 128 + signal when signalled.
        func exit() async -> Int32 {
            await withCheckedContinuation { continuation in
                let thread = Thread { [self] in continuation.resume(returning: self.reap()) }
                thread.name = "child \(pid)"
                thread.start()
            }
        }

        private func reap() -> Int32 {
            // Wait for the exit without reaping, mark it, then reap: `kill` cannot hit a reused id.
            var info = siginfo_t()
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
            state.withLockedValue { $0.exited = true }
            var status: Int32 = 0
            var reaped = waitpid(pid, &status, 0)
            while reaped == -1 && errno == EINTR { reaped = waitpid(pid, &status, 0) }
            guard reaped == pid else { return 255 }   // not ours to wait for: never a success
            let signal = status & 0x7F
            return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
        }
    }
}

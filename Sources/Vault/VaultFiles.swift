import Foundation
import Signing
import WebAuthn

/// The vault's files on disk: made private (files 0600, directories 0700, whatever the umask) and put in place
/// whole, so a process never sees another's half-made file and never removes one it did not make.
///
/// A new file is written under a temporary name beside its final one, then `link(2)`ed into place: the link fails
/// with EEXIST when another process got there first, and the loser uses the winner's file. Only the temporary
/// name is ever unlinked.
enum VaultFiles {
    /// The directory part of `path` ("" for a bare name); by hand: Foundation's deletingLastPathComponent traps on
    /// some one-character paths ("-").
    static func directory(of path: String) -> String {
        path.utf8.lastIndex(of: UInt8(ascii: "/")).map { String(path[..<$0]) } ?? ""
    }

    /// Makes `directory` and any missing parents, each one made here mode 0700; existing ones are left as they are.
    static func makeDirectories(_ directory: String) throws(VaultError) {
        guard !directory.isEmpty, !isDirectory(directory) else { return }
        var prefix = directory.hasPrefix("/") ? "/" : ""
        for component in directory.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += (prefix.isEmpty || prefix.hasSuffix("/") ? "" : "/") + component
            if isDirectory(prefix) { continue }
            if mkdir(prefix, 0o700) == 0 {
                // mkdir's mode passes through the umask; the directory is ours, so its mode is set outright.
                guard chmod(prefix, 0o700) == 0 else { throw failure("Cannot set the mode of the directory \(prefix)") }
            } else if errno != EEXIST {
                throw failure("Cannot create the directory \(prefix)")
            }
        }
    }

    /// A new empty file, mode 0600, under a name no other process uses, in the directory `path` will be in.
    static func makeTemporary(beside path: String) throws(VaultError) -> (path: String, descriptor: Int32) {
        while true {
            let temporary = path + ".new-" + Hex.encode(SecureRandom.bytes(8))
            let fd = open(temporary, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd < 0 {
                if errno == EEXIST { continue }
                throw failure("Cannot create a file beside \(path)")
            }
            guard fchmod(fd, 0o600) == 0 else {
                let error = failure("Cannot set the mode of \(temporary)")
                close(fd)
                unlink(temporary)
                throw error
            }
            return (temporary, fd)
        }
    }

    /// Puts the finished file `temporary` (made by `makeTemporary`) in place at `path` and removes its temporary
    /// name. False when a file was already at `path`: it is left as it is, and the caller uses it.
    static func publish(_ temporary: String, as path: String) throws(VaultError) -> Bool {
        defer { unlink(temporary) }
        let fd = open(temporary, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure("Cannot reopen \(temporary)") }
        let synced = fsync(fd) == 0
        close(fd)
        guard synced else { throw failure("Cannot write \(temporary) to disk") }
        if link(temporary, path) != 0 {
            if errno == EEXIST { return false }
            throw failure("Cannot put the new file in place at \(path)")
        }
        syncDirectory(of: path)
        return true
    }

    /// Writes the directory entry of a file just linked to disk; a failure costs only durability across an OS
    /// crash, as the vault's `synchronous=NORMAL` does.
    private static func syncDirectory(of path: String) {
        let directory = directory(of: path)
        let fd = open(directory.isEmpty ? (path.hasPrefix("/") ? "/" : ".") : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    private static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    /// A storage error naming `what` and the system's reason (read from `errno`, so build it first).
    private static func failure(_ what: String) -> VaultError {
        VaultError(.storage, "\(what): \(String(cString: strerror(errno))).")
    }
}

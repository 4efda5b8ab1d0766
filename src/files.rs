//! The one way eddy opens and writes files, so that no file a user hands it (a FIFO where a
//! checkpoint should be, a symbolic link planted where an output goes, a size field that
//! overflows) can hang it, make it write somewhere else, or make it read without bound.
//!
//! Reading: [`read_bounded`] opens without blocking (a FIFO's open would wait for a writer
//! for ever), checks on the open file that it is a regular file (a symbolic link is
//! followed to what it names, and that must be a regular file), and reads at most a stated
//! number of bytes. Writing: [`write_atomically`] creates its temporary file exclusively
//! (never through a link, never onto a FIFO), writes it whole and renames it over a regular
//! file or nothing; [`check_replaceable`] refuses an existing output that is a link, a FIFO,
//! a device or a folder before any work. [`AppendFile`] appends to an existing regular file
//! without following a link.
//!
//! Sizes and counts read from a file go through [`checked_product`] and friends, so no
//! multiply or add of untrusted numbers can wrap.
//!
//! This module sits below everything that reads or writes (scene, output, the CLI).

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// Suffix of files being written; a rename drops it once the file is complete.
pub const TEMP_SUFFIX: &str = ".tmp";

/// `path` with [`TEMP_SUFFIX`] appended to its file name (same folder, so the final rename
/// never crosses file systems).
pub fn temp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(TEMP_SUFFIX);
    path.with_file_name(name)
}

/// What a file type is, in words, for a message that refuses it.
fn describe(ft: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if ft.is_socket() {
            return "a socket";
        }
        if ft.is_block_device() || ft.is_char_device() {
            return "a device";
        }
    }
    if ft.is_dir() {
        "a folder"
    } else if ft.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

fn not_regular(ft: &std::fs::FileType) -> io::Error {
    let kind = if ft.is_dir() {
        io::ErrorKind::IsADirectory
    } else {
        io::ErrorKind::InvalidInput
    };
    io::Error::new(kind, format!("is {}, not a regular file", describe(ft)))
}

/// What stands at `path` when it is not a regular file, not following a link ("a
/// symbolic link", "a FIFO (named pipe)", "a folder", ...); None for a regular file or
/// nothing.
pub fn irregular(path: &Path) -> Option<&'static str> {
    let m = std::fs::symlink_metadata(path).ok()?;
    (!m.is_file()).then(|| describe(&m.file_type()))
}

/// Opens `path` for reading if it is (or a symbolic link names) a regular file; returns it
/// with its size. A FIFO, a device, a socket or a folder is refused without blocking and
/// before a byte is read.
pub fn open_regular(path: &Path) -> io::Result<(File, u64)> {
    let mut o = OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Opening a FIFO for reading waits for a writer unless O_NONBLOCK; on a regular
        // file the flag changes nothing.
        o.custom_flags(libc::O_NONBLOCK);
    }
    let f = o.open(path)?;
    let m = f.metadata()?;
    if !m.is_file() {
        return Err(not_regular(&m.file_type()));
    }
    Ok((f, m.len()))
}

/// The error for a file over its bound; `what` names what the file should be.
fn too_large(bytes: u64, max: u64, what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("is {bytes} bytes, more than the {max} bytes {what} can hold"),
    )
}

/// The whole of the regular file at `path`, refused when it holds more than `max` bytes
/// (`what` names the kind of file in that message: "a checkpoint").
pub fn read_bounded(path: &Path, max: u64, what: &str) -> io::Result<Vec<u8>> {
    let (f, len) = open_regular(path)?;
    if len > max {
        return Err(too_large(len, max, what));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    // A file that grows while it is read is still cut at the bound.
    f.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(too_large(bytes.len() as u64, max, what));
    }
    Ok(bytes)
}

/// [`read_bounded`] as UTF-8 text.
pub fn read_text_bounded(path: &Path, max: u64, what: &str) -> io::Result<String> {
    let bytes = read_bounded(path, max, what)?;
    String::from_utf8(bytes).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "is not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

/// Refuses a `path` that exists and is not a regular file: a symbolic link (eddy would
/// replace the link, or write where it points), a folder, a FIFO, a device or a socket
/// (renaming over one would replace it with a regular file; as root, /dev/null itself).
pub fn check_replaceable(path: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "is a symbolic link: eddy writes its outputs only over its own regular files, \
             never through a link (remove the link, or choose another path)",
        )),
        Ok(m) if m.is_dir() => Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "is a folder, not a file",
        )),
        Ok(m) if !m.is_file() => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "exists and is {}, not a regular file: eddy replaces only regular files",
                describe(&m.file_type())
            ),
        )),
        _ => Ok(()),
    }
}

/// Creates `path` exclusively (`O_EXCL`: never through a link, never onto an existing file).
/// A leftover at that name (a temporary file of a killed run, or a link or FIFO planted
/// there) is unlinked first: only the name goes, never what a link points at.
pub fn create_exclusive(path: &Path) -> io::Result<File> {
    let open = || OpenOptions::new().write(true).create_new(true).open(path);
    match open() {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            let m = std::fs::symlink_metadata(path)?;
            if m.is_dir() {
                return Err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    format!("{} is a folder", path.display()),
                ));
            }
            std::fs::remove_file(path)?;
            open()
        }
        r => r,
    }
}

/// Writes `path` through `write` under a temporary name, then renames it into place: a
/// reader, or a run killed mid-write, sees the old file or the complete new one, never a
/// partial one. The temporary file is created exclusively and removed when `write` fails;
/// `path` must be a regular file or absent ([`check_replaceable`]).
pub fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> io::Result<()> {
    check_replaceable(path)?;
    let tmp = temp_path(path);
    let result = create_exclusive(&tmp).and_then(|f| {
        let mut w = BufWriter::new(f);
        write(&mut w)?;
        w.flush()
    });
    match result.and_then(|()| std::fs::rename(&tmp, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// An existing regular file opened to append to, never through a symbolic link and never
/// a FIFO or device.
pub fn open_append(path: &Path) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let f = o.open(path).map_err(|e| {
        // O_NOFOLLOW on a link fails with ELOOP, a FIFO without a reader with ENXIO: say
        // what stands there instead.
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => io::Error::new(
                io::ErrorKind::InvalidInput,
                "is a symbolic link: eddy appends only to its own regular files",
            ),
            Ok(m) if !m.is_file() => not_regular(&m.file_type()),
            _ => e,
        }
    })?;
    let m = f.metadata()?;
    if !m.is_file() {
        return Err(not_regular(&m.file_type()));
    }
    Ok(f)
}

/// Makes sure a file can be created at `path`: its folder exists and accepts files, and
/// `path` itself is not a folder, a link or a special file. Leaves nothing behind.
pub fn ensure_writable_file(path: &Path) -> io::Result<()> {
    check_replaceable(path)?;
    let tmp = temp_path(path);
    create_exclusive(&tmp)?;
    std::fs::remove_file(&tmp)
}

/// The product of `dims` as a `u64`, or `None` when it overflows.
pub fn checked_product(dims: &[u64]) -> Option<u64> {
    dims.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d))
}

/// The sum of `sizes`, or `None` when it overflows.
pub fn checked_sum(sizes: impl IntoIterator<Item = u64>) -> Option<u64> {
    sizes
        .into_iter()
        .try_fold(0u64, |acc, n| acc.checked_add(n))
}

/// `text` safe to print on a terminal and bounded in length: control characters (a
/// terminal escape) and the bidirectional overrides (which reorder what a reader sees) are
/// written as `\u{..}` escapes, and past `max` characters the rest is cut, with how much
/// was left out said. For strings taken from files and arguments.
pub fn printable(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (n, c) in text.chars().enumerate() {
        if n == max {
            let rest = text.chars().count() - max;
            out += &format!("... ({rest} more characters)");
            break;
        }
        if is_unsafe_char(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// Characters a terminal must not be handed as they are: control characters (line breaks
/// and tabs aside) and the Unicode bidirectional controls.
pub fn is_unsafe_char(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{200E}' | '\u{200F}' | '\u{061C}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("eddy-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[cfg(unix)]
    fn mkfifo(p: &Path) {
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    }

    #[test]
    fn reads_are_bounded_and_only_of_regular_files() {
        let dir = scratch("read");
        let f = dir.join("a.txt");
        std::fs::write(&f, b"hello").unwrap();
        assert_eq!(read_bounded(&f, 5, "a test file").unwrap(), b"hello");
        let e = read_bounded(&f, 4, "a test file").unwrap_err().to_string();
        assert!(
            e.contains("5 bytes") && e.contains("4 bytes a test file"),
            "{e}"
        );
        assert!(read_bounded(&dir, 100, "x")
            .unwrap_err()
            .to_string()
            .contains("a folder"));
        #[cfg(unix)]
        {
            // A FIFO with no writer: refused at once instead of waiting for ever, itself or
            // through a link.
            let fifo = dir.join("pipe");
            mkfifo(&fifo);
            let e = read_bounded(&fifo, 100, "x").unwrap_err().to_string();
            assert!(e.contains("FIFO"), "{e}");
            std::os::unix::fs::symlink(&fifo, dir.join("link")).unwrap();
            assert!(read_bounded(&dir.join("link"), 100, "x").is_err());
            // A link to a regular file reads what it names.
            std::os::unix::fs::symlink(&f, dir.join("ok")).unwrap();
            assert_eq!(read_bounded(&dir.join("ok"), 5, "x").unwrap(), b"hello");
            assert!(read_bounded(Path::new("/dev/zero"), 100, "x")
                .unwrap_err()
                .to_string()
                .contains("device"));
        }
        assert!(read_text_bounded(&f, 5, "x").unwrap() == "hello");
        std::fs::write(&f, [0xff, 0xfe]).unwrap();
        assert!(read_text_bounded(&f, 5, "x").is_err());
    }

    #[cfg(unix)]
    #[test]
    fn writes_never_go_through_a_planted_link() {
        let dir = scratch("write");
        let victim = dir.join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        // The temporary name planted as a link: the link goes, the victim stays.
        let out = dir.join("race.csv");
        std::os::unix::fs::symlink(&victim, temp_path(&out)).unwrap();
        write_atomically(&out, |w| w.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"new");
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert!(std::fs::symlink_metadata(temp_path(&out)).is_err());
        // The output itself a link: refused before anything is written.
        let linked = dir.join("stats.csv");
        std::os::unix::fs::symlink(&victim, &linked).unwrap();
        let e = write_atomically(&linked, |w| w.write_all(b"x")).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert!(open_append(&linked)
            .unwrap_err()
            .to_string()
            .contains("symbolic link"));
        assert!(ensure_writable_file(&linked).is_err());
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        // A FIFO as an output: refused, not blocked on.
        let fifo = dir.join("fields.pvd");
        mkfifo(&fifo);
        assert!(write_atomically(&fifo, |w| w.write_all(b"x"))
            .unwrap_err()
            .to_string()
            .contains("FIFO"));
        assert!(open_append(&fifo).unwrap_err().to_string().contains("FIFO"));
        // A failed write leaves the old file and no temporary.
        let err = write_atomically(&out, |w| {
            w.write_all(b"half")?;
            Err(io::Error::other("interrupted"))
        });
        assert!(err.is_err());
        assert_eq!(std::fs::read(&out).unwrap(), b"new");
        assert!(!temp_path(&out).exists());
    }

    #[test]
    fn sizes_from_files_never_wrap() {
        assert_eq!(checked_product(&[2, 3, 4]), Some(24));
        assert_eq!(checked_product(&[u32::MAX as u64; 3]), None);
        assert_eq!(checked_product(&[1 << 32, 1 << 32]), None);
        assert_eq!(checked_sum([u64::MAX, 1]), None);
        assert_eq!(checked_sum([1, 2]), Some(3));
    }

    #[test]
    fn printable_text_is_escaped_and_bounded() {
        assert_eq!(printable("a\u{1b}[2Jb", 100), "a\\u{1b}[2Jb");
        assert_eq!(printable("x\u{202E}y", 100), "x\\u{202e}y");
        assert_eq!(printable("line\nnext", 100), "line\nnext");
        assert_eq!(printable("abcdef", 3), "abc... (3 more characters)");
    }
}

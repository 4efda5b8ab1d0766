//! Keeps the window system out of headless runs, and quiet where it is used.
//!
//! wgpu enables every window-system extension the Vulkan loader offers, and Mesa's
//! device-select layer then connects to the Wayland and X displays while it lists the
//! adapters, to find the one driving the screen. Without an `XDG_RUNTIME_DIR` (ssh,
//! containers, CI) libwayland prints `error: XDG_RUNTIME_DIR is invalid or not set in the
//! environment.` twice on stderr, with the same `error:` prefix as eddy's own errors, though
//! nothing is wrong.

use std::path::PathBuf;

/// Called once at start-up, before any thread exists (it sets environment variables).
///
/// Headless commands skip the device-select layer (`NODEVICE_SELECT=1`): eddy picks its
/// adapter itself (`WGPU_ADAPTER_NAME`), so the layer's display lookup buys nothing there.
/// A user who steers the layer (`MESA_VK_DEVICE_SELECT`, `DRI_PRIME`) keeps it. Every
/// command without a runtime dir gets a private, empty one, so a lookup that still
/// happens (the viewer's) fails quietly; nothing is ever written there.
pub fn quiet_window_system(headless: bool) {
    let set = |k: &str| std::env::var_os(k).is_some();
    if headless && !set("NODEVICE_SELECT") && !set("MESA_VK_DEVICE_SELECT") && !set("DRI_PRIME") {
        std::env::set_var("NODEVICE_SELECT", "1");
    }
    if !set("XDG_RUNTIME_DIR") {
        if let Ok(dir) = private_runtime_dir() {
            std::env::set_var("XDG_RUNTIME_DIR", dir);
        }
    }
}

/// Creates (or reuses) `$TMPDIR/eddy-runtime-UID`, mode 0700, and returns it when it is a
/// real folder owned by this user that no one else can enter; an error otherwise (a folder
/// someone else made at that name is never used).
#[cfg(target_os = "linux")]
pub fn private_runtime_dir() -> std::io::Result<PathBuf> {
    use std::io::{Error, ErrorKind};
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    // /proc/self belongs to the process's effective user.
    let uid = std::fs::metadata("/proc/self")?.uid();
    let dir = std::env::temp_dir().join(format!("eddy-runtime-{uid}"));
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::symlink_metadata(&dir)?;
    if !meta.is_dir() || meta.uid() != uid || meta.permissions().mode() & 0o077 != 0 {
        return Err(Error::new(
            ErrorKind::PermissionDenied,
            format!("{} is not a private folder of this user", dir.display()),
        ));
    }
    Ok(dir)
}

/// Other systems have no XDG runtime dir to miss.
#[cfg(not(target_os = "linux"))]
pub fn private_runtime_dir() -> std::io::Result<PathBuf> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "XDG_RUNTIME_DIR is only used on Linux",
    ))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_folder_is_private_and_reused() {
        let a = private_runtime_dir().unwrap();
        let b = private_runtime_dir().unwrap();
        assert_eq!(a, b);
        let mode = std::fs::metadata(&a).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "{mode:o}");
    }
}

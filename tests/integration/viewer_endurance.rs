//! The viewer left open: a scripted session on an X server of its own (Xvfb, keys sent with
//! xdotool) that runs, pauses, steps, switches through every debug view, freezes a solve in
//! the solver lab and races it, saves and loads the state, collapses and reopens the panels
//! and resizes the window, then sits paused. Paused, it must redraw nothing (CPU under 2% of a core) and
//! its resident memory must not grow (under 5 MB a minute); running, the same bound on
//! memory, except on Mesa 22's lavapipe, whose every redraw of the particles keeps memory
//! inside the driver (measured: ~250 KB a redraw, all of it allocated in
//! libvulkan_lvp.so's threads; flat on Mesa 25.0's lavapipe), which is then reported.
//! `scripts/viewer-soak.sh MINUTES` is the long version for manual soaks.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// An X server of the test's own, killed on drop.
struct Xvfb {
    child: Child,
    display: String,
}

impl Xvfb {
    fn start() -> Self {
        for n in 90..140 {
            if std::path::Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
                || std::path::Path::new(&format!("/tmp/.X{n}-lock")).exists()
            {
                continue;
            }
            let display = format!(":{n}");
            let mut child = Command::new("Xvfb")
                .args([&display, "-screen", "0", "1280x800x24", "-nolisten", "tcp"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("no Xvfb: install it (apt-get install xvfb) or run scripts/test.sh");
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(10) {
                if std::path::Path::new(&format!("/tmp/.X11-unix/X{n}")).exists() {
                    return Self { child, display };
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            // This display did not come up (taken meanwhile?): try the next.
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("no free X display in :90 to :139");
    }

    /// Runs xdotool on this display (for at most two minutes: a viewer starting while the
    /// rest of the suite loads both cores can take a while to show its window); its output.
    fn xdotool(&self, args: &[&str]) -> String {
        let out = Command::new("timeout")
            .arg("120")
            .arg("xdotool")
            .args(args)
            .env("DISPLAY", &self.display)
            .stderr(Stdio::null())
            .output()
            .expect("no xdotool: install it (apt-get install xdotool) or run scripts/test.sh");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Resident memory (kB) and CPU time (clock ticks, user + system) of process `pid`.
fn usage(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let rss = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command's closing parenthesis; utime and stime are the 14th and 15th.
    let rest: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let ticks = rest[11].parse::<u64>().unwrap() + rest[12].parse::<u64>().unwrap();
    (rss, ticks)
}

/// Memory growth (MB a minute) and CPU (share of a core) of `pid` over `secs` seconds.
fn measure(pid: u32, secs: u64) -> (f64, f64) {
    let (rss0, t0) = usage(pid);
    let start = Instant::now();
    std::thread::sleep(Duration::from_secs(secs));
    let (rss1, t1) = usage(pid);
    let elapsed = start.elapsed().as_secs_f64();
    let mb_per_min = (rss1 as f64 - rss0 as f64) / 1024.0 / elapsed * 60.0;
    // Linux reports CPU time in USER_HZ (100) ticks.
    (mb_per_min, (t1 - t0) as f64 / 100.0 / elapsed)
}

/// Whether the adapter is lavapipe from Mesa 22 or older (see the module's text).
fn old_lavapipe() -> bool {
    let d = crate::common::gpu().describe();
    d.contains("llvmpipe")
        && d.split("Mesa ")
            .nth(1)
            .and_then(|v| v.split('.').next())
            .and_then(|m| m.parse::<u32>().ok())
            .is_some_and(|major| major <= 22)
}

/// Presses of `v` that go through every debug view of the dam break and back to the bare
/// 3D view: the bare view, the grid fields and its multigrid levels' vectors.
const VIEWS: usize = 1
    + eddy::sim::liquid::views::Field::ALL.len()
    + 4 * eddy::sim::liquid::views::MgVector::ALL.len();

#[test]
fn the_viewer_paused_redraws_nothing_and_holds_its_memory() {
    let x = Xvfb::start();
    // The state file (F5, F9) goes to a folder of the test's own.
    let dir = scratch!("session");
    let mut viewer = Command::new(env!("CARGO_BIN_EXE_eddy"))
        .args(["view", "dam_break", "--size", "960x600"])
        .current_dir(&dir)
        .env("DISPLAY", &x.display)
        .env("EDDY_VIEWER_SETTINGS", "off")
        .env_remove("WAYLAND_DISPLAY")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot start the viewer");
    let pid = viewer.id();
    let window = x.xdotool(&["search", "--sync", "--name", "^eddy$"]);
    let window = window.lines().next().unwrap_or("").to_string();
    assert!(!window.is_empty(), "the viewer opened no window");
    let key = |k: &str| {
        x.xdotool(&["windowfocus", "--sync", &window]);
        x.xdotool(&["key", k]);
    };

    // Running: warm up (the first seconds compile pipelines and grow the simulation's
    // buffers: 360 MB and flat from 20 s on, on Mesa 25's lavapipe), then the running bound
    // (reported on Mesa 22's lavapipe).
    std::thread::sleep(Duration::from_secs(20));
    let (running_mb, running_cpu) = measure(pid, 15);
    // Pause, step, switch through every debug view (v: the next one; the grid fields,
    // then the multigrid levels, then the bare view again), freeze the last solve in the
    // solver lab and race its preconditioners (l, l), close the lab (L), save and load
    // the state (F5, F9), fold and unfold the panels, resize, then sit.
    key("space");
    std::thread::sleep(Duration::from_secs(1));
    for k in ["n", "n"] {
        key(k);
        std::thread::sleep(Duration::from_millis(300));
    }
    for _ in 0..VIEWS {
        key("v");
        std::thread::sleep(Duration::from_millis(150));
    }
    key("l");
    std::thread::sleep(Duration::from_secs(2));
    key("l");
    std::thread::sleep(Duration::from_secs(8));
    key("shift+l");
    std::thread::sleep(Duration::from_millis(500));
    key("F5");
    std::thread::sleep(Duration::from_secs(1));
    key("F9");
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        dir.join("eddy_state.eddy").exists(),
        "F5 saved no state in {}",
        dir.display()
    );
    for k in ["F1", "F2"] {
        key(k);
        std::thread::sleep(Duration::from_millis(300));
    }
    x.xdotool(&["windowsize", &window, "800", "600"]);
    std::thread::sleep(Duration::from_millis(500));
    key("F1");
    key("F2");
    std::thread::sleep(Duration::from_secs(3));
    let (paused_mb, paused_cpu) = measure(pid, 15);
    eprintln!(
        "viewer: running {running_mb:.1} MB/min at {:.0}% of a core; paused {paused_mb:.2} \
         MB/min at {:.2}% of a core",
        running_cpu * 100.0,
        paused_cpu * 100.0
    );
    // Still alive, and it closes cleanly on Escape.
    assert!(viewer.try_wait().unwrap().is_none(), "the viewer died");
    key("Escape");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = viewer.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(20) {
            let _ = viewer.kill();
            panic!("the viewer did not close on Escape");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(viewer.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(status.success(), "the viewer failed: {err}");
    assert!(
        paused_cpu < 0.02,
        "paused, the viewer used {:.1}% of a core",
        paused_cpu * 100.0
    );
    assert!(
        paused_mb < 5.0,
        "paused, the viewer grew {paused_mb:.2} MB a minute"
    );
    if old_lavapipe() {
        eprintln!(
            "viewer: running growth not checked on {} (Mesa 22's lavapipe keeps memory at \
             every redraw of the particles)",
            crate::common::gpu().describe()
        );
    } else {
        assert!(
            running_mb < 5.0,
            "running, the viewer grew {running_mb:.1} MB a minute"
        );
    }
}

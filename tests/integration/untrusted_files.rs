//! Files someone else hands eddy: checkpoints renamed, copied from another run, or holding
//! values no run writes; system folders with sizes that overflow or values that are not
//! finite; FIFOs and symbolic links planted where eddy reads and writes. Each is refused with
//! one line, in bounded time, through the binary where a user meets it, and leaves the
//! folder as it was; nothing is ever written through a link. A seeded loop then mutates a
//! real checkpoint and a real system folder at random: no panic, no hang.

use eddy::output::checkpoint;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs eddy, killing it (and failing the test) if it has not ended within `limit`: a
/// reader that blocks on a FIFO must show up as a failure, not as a suite that never ends.
fn eddy_within(args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_eddy"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot start eddy");
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "eddy {args:?} hung for {limit:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn eddy(args: &[&str]) -> Output {
    eddy_within(args, Duration::from_secs(300))
}

fn ok(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "eddy failed: {err}");
    err
}

/// Every entry of `d`: a regular file with its bytes, anything else (a link, a FIFO) by its
/// name and kind only (reading a FIFO would block).
fn snapshot(d: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().to_string();
            let ft = e.file_type().unwrap();
            let bytes = if ft.is_file() {
                std::fs::read(e.path()).unwrap()
            } else {
                format!("{ft:?}").into_bytes()
            };
            (name, bytes)
        })
        .collect();
    v.sort();
    v
}

/// `args` fail with one line holding every needle, at once (a FIFO is never waited on),
/// and `d` is left as it was.
fn refused(args: &[&str], d: &Path, needles: &[&str]) {
    let before = snapshot(d);
    let out = eddy_within(args, Duration::from_secs(120));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    // One line of error (a refusal after the adapter opened follows its `adapter:` line).
    let errors: Vec<&str> = err
        .lines()
        .filter(|l| !l.starts_with("adapter: "))
        .collect();
    assert_eq!(errors.len(), 1, "one line: {err}");
    for n in needles {
        assert!(errors[0].contains(n), "{args:?}: {n:?} missing in {err}");
    }
    assert!(snapshot(d) == before, "{args:?} changed the folder");
}

#[cfg(unix)]
fn mkfifo(p: &Path) {
    let ok = Command::new("mkfifo").arg(p).status().unwrap().success();
    assert!(ok, "mkfifo {}", p.display());
}

/// A checkpoint file with `edit` applied to its state, written with a valid checksum (the
/// damage a checksum cannot see: a file written so, or by a broken run).
fn resealed(bytes: &[u8], edit: impl FnOnce(&mut eddy::sim::runner::state::SimState)) -> Vec<u8> {
    let mut c = checkpoint::decode(bytes, Path::new("c.eddy")).unwrap();
    edit(&mut c.state);
    checkpoint::encode(&c.scene, &c.state)
}

/// Sets the f32 at `index` of section `name`.
fn set_f32(s: &mut eddy::sim::runner::state::SimState, name: &str, index: usize, v: f32) {
    let sec = s.sections.iter_mut().find(|x| x.name == name).unwrap();
    sec.bytes[4 * index..4 * index + 4].copy_from_slice(&v.to_le_bytes());
}

#[cfg(unix)]
#[test]
fn resume_refuses_what_is_not_this_folders_checkpoint_and_destroys_nothing() {
    let d = scratch!("resume");
    let ds = d.to_str().unwrap();
    let run = |out: &str, scene: &str, extra: &[&str]| {
        let mut a = vec![
            "run",
            scene,
            "--resolution",
            "12",
            "--frames",
            "6",
            "--out",
            out,
        ];
        a.extend(extra);
        ok(&eddy(&a));
    };
    run(
        ds,
        "dam_break",
        &[
            "--checkpoint-every",
            "3",
            "--dump-fields",
            "3",
            "--fields",
            "pressure",
        ],
    );
    let resume = ["run", "--resume", ds, "--frames", "9"];
    let c3 = std::fs::read(d.join("checkpoint_00003.eddy")).unwrap();
    let c6 = std::fs::read(d.join("checkpoint_00006.eddy")).unwrap();

    // A checkpoint renamed: its header's frame is not its name's. Resuming from it would
    // have removed the checkpoints and dumps past frame 3, the one it named included.
    std::fs::write(d.join("checkpoint_00007.eddy"), &c3).unwrap();
    refused(
        &resume,
        &d,
        &["checkpoint_00007.eddy", "frame 3", "frame 7", "renamed"],
    );
    std::fs::remove_file(d.join("checkpoint_00007.eddy")).unwrap();

    // Another run's checkpoint copied in: its scene is whole and its checksum good, but it
    // is not the run this folder's stats.csv holds.
    let other = scratch!("resume-other");
    run(
        other.to_str().unwrap(),
        "double_dam_break",
        &["--checkpoint-every", "6"],
    );
    std::fs::copy(
        other.join("checkpoint_00006.eddy"),
        d.join("checkpoint_00006.eddy"),
    )
    .unwrap();
    refused(&resume, &d, &["not of the run in this folder", "particles"]);

    // Values no run writes, under a valid checksum: a NaN and a far-away particle, a NaN
    // velocity on the grid, a clock past the end of time or before its start.
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (
            resealed(&c6, |s| set_f32(s, "particles.pos", 5, f32::NAN)),
            "not finite or outside the domain",
        ),
        (
            resealed(&c6, |s| set_f32(s, "particles.pos", 9, 1e30)),
            "outside the domain",
        ),
        (
            resealed(&c6, |s| set_f32(s, "fields.vel", 3, f32::INFINITY)),
            "not finite",
        ),
        (
            resealed(&c6, |s| s.time = 1e308),
            "is not the end of its frame",
        ),
        (
            resealed(&c6, |s| s.time = -5.0),
            "is not the end of its frame",
        ),
    ];
    for (bytes, needle) in cases {
        std::fs::write(d.join("checkpoint_00006.eddy"), &bytes).unwrap();
        refused(&resume, &d, &[needle]);
    }
    // A section table that sums past 2^64 (checksum recomputed): damage, not a panic.
    std::fs::write(d.join("checkpoint_00006.eddy"), overflowing_sections(&c6)).unwrap();
    refused(&resume, &d, &["truncated"]);
    std::fs::write(d.join("checkpoint_00006.eddy"), &c6).unwrap();

    // A FIFO as the newest checkpoint, itself or through a link, and as stats.csv: refused
    // at once, never waited on.
    let fifo = d.join("checkpoint_00009.eddy");
    mkfifo(&fifo);
    refused(&resume, &d, &["FIFO"]);
    std::fs::remove_file(&fifo).unwrap();
    let elsewhere = scratch!("resume-fifo").join("pipe");
    mkfifo(&elsewhere);
    std::os::unix::fs::symlink(&elsewhere, &fifo).unwrap();
    refused(&resume, &d, &["checkpoint_00009.eddy", "symbolic link"]);
    std::fs::remove_file(&fifo).unwrap();
    std::fs::rename(d.join("stats.csv"), d.join("stats.keep")).unwrap();
    mkfifo(&d.join("stats.csv"));
    refused(&resume, &d, &["stats.csv", "FIFO"]);
    std::fs::remove_file(d.join("stats.csv")).unwrap();
    std::fs::rename(d.join("stats.keep"), d.join("stats.csv")).unwrap();

    // The collection file lost: the resumed run lists the earlier frames' caches again.
    std::fs::remove_file(d.join("fields.pvd")).unwrap();
    let mut with_caches = resume.to_vec();
    with_caches.extend(["--dump-fields", "3", "--fields", "pressure"]);
    let err = ok(&eddy(&with_caches));
    assert!(
        err.contains("listed 3 cache files of the earlier frames"),
        "{err}"
    );
    let pvd = std::fs::read_to_string(d.join("fields.pvd")).unwrap();
    for f in [0, 3, 6, 9] {
        assert!(
            pvd.contains(&format!("fields_{f:05}.vti")),
            "frame {f}: {pvd}"
        );
    }
    assert!(d.join("checkpoint_00006.eddy").exists());
}

/// `good` with its header's section lengths changed so that they sum past 2^64 (to the
/// right total modulo 2^64), the CRC recomputed.
fn overflowing_sections(good: &[u8]) -> Vec<u8> {
    let header_len = u64::from_le_bytes(good[12..20].try_into().unwrap()) as usize;
    let mut header: serde_json::Value = serde_json::from_slice(&good[20..20 + header_len]).unwrap();
    let sections = header["sections"].as_array_mut().unwrap();
    let first = sections[0][1].as_u64().unwrap();
    // first + 2^63 twice: the same sum modulo 2^64.
    sections[0][1] = serde_json::json!(first.wrapping_add(1 << 63));
    sections.push(serde_json::json!(["pad", 1u64 << 63]));
    let json = serde_json::to_vec(&header).unwrap();
    let mut out = good[..12].to_vec();
    out.extend_from_slice(&(json.len() as u64).to_le_bytes());
    out.extend_from_slice(&json);
    out.extend_from_slice(&good[20 + header_len..good.len() - 4]);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

#[cfg(unix)]
#[test]
fn outputs_are_never_written_through_a_planted_link() {
    let d = scratch!("links");
    let victim = d.join("victim.txt");
    std::fs::write(&victim, b"precious").unwrap();
    // --overwrite with stats.csv a link: refused before any work (it used to say it kept
    // the entry, then write the stats into the link's target).
    let out = d.join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::os::unix::fs::symlink(&victim, out.join("stats.csv")).unwrap();
    let o = out.to_str().unwrap();
    refused(
        &[
            "run",
            "dam_break",
            "--resolution",
            "8",
            "--frames",
            "1",
            "--out",
            o,
            "--overwrite",
        ],
        &out,
        &["stats.csv", "symbolic link"],
    );
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");

    // A system exported, then raced with its CSV's temporary name planted as a link.
    let sys = d.join("sys");
    let s = sys.to_str().unwrap();
    ok(&eddy(&[
        "run",
        "dam_break",
        "--resolution",
        "8",
        "--frames",
        "1",
        "--out",
        d.join("run").to_str().unwrap(),
        "--export-system",
        s,
    ]));
    let csv = d.join("race.csv");
    std::os::unix::fs::symlink(&victim, d.join("race.csv.tmp")).unwrap();
    let c = csv.to_str().unwrap();
    ok(&eddy(&[
        "bench",
        "--system",
        s,
        "--preconditioners",
        "ip",
        "--csv",
        c,
    ]));
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    assert!(std::fs::read_to_string(&csv)
        .unwrap()
        .starts_with("preconditioner,"));
    // The CSV itself a link: refused.
    std::fs::remove_file(&csv).unwrap();
    std::os::unix::fs::symlink(&victim, &csv).unwrap();
    let e = eddy(&[
        "bench",
        "--system",
        s,
        "--preconditioners",
        "ip",
        "--csv",
        c,
    ]);
    assert!(!e.status.success());
    assert!(String::from_utf8_lossy(&e.stderr).contains("symbolic link"));
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");

    // A system folder whose system.json is a FIFO, whose dims multiply past 2^64, or whose
    // b holds an infinity (checksums set anew): one line each, no panic, no hang.
    let bad = d.join("bad");
    let copy = || {
        let _ = std::fs::remove_dir_all(&bad);
        std::fs::create_dir_all(&bad).unwrap();
        for e in std::fs::read_dir(&sys).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), bad.join(e.file_name())).unwrap();
        }
    };
    let json = |edit: &dyn Fn(&mut serde_json::Value)| {
        let p = bad.join("system.json");
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        edit(&mut v);
        v["crc32"] = eddy::output::frozen::json_crc(&v).into();
        std::fs::write(&p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    };
    let b = bad.to_str().unwrap();
    let bench = ["bench", "--system", b, "--preconditioners", "ip"];
    copy();
    std::fs::remove_file(bad.join("system.json")).unwrap();
    mkfifo(&bad.join("system.json"));
    refused(&bench, &bad, &["system.json", "FIFO"]);
    copy();
    json(&|v| v["dims"] = serde_json::json!([1u64 << 31, 1u64 << 31, 4]));
    refused(&bench, &bad, &["not a valid grid"]);
    copy();
    let mut raw = std::fs::read(bad.join("b.f32")).unwrap();
    let fluid = raw
        .chunks_exact(4)
        .position(|c| f32::from_le_bytes(c.try_into().unwrap()) != 0.0)
        .unwrap();
    raw[4 * fluid..4 * fluid + 4].copy_from_slice(&f32::INFINITY.to_le_bytes());
    std::fs::write(bad.join("b.f32"), &raw).unwrap();
    let crc = crc32fast::hash(&raw);
    json(&|v| {
        for f in v["files"].as_array_mut().unwrap() {
            if f["name"] == "b.f32" {
                f["crc32"] = crc.into();
            }
        }
    });
    refused(&bench, &bad, &["b holds a value that is not finite"]);
    copy();
    json(&|v| v["settings"]["tolerance"] = serde_json::json!(-1.0));
    refused(&bench, &bad, &["tolerance"]);
    copy();
    json(&|v| v["origin"] = serde_json::json!("\u{1b}[2J\u{202e}cleared"));
    let out = eddy(&bench);
    ok(&out);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        stdout.contains("\\u{1b}[2J\\u{202e}cleared") && !stdout.contains('\u{1b}'),
        "{stdout}"
    );
}

/// A small xorshift generator: the loop below is the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One random damage of `bytes`: bits flipped, a byte set, a cut, a run inserted or
/// repeated, a little-endian word set to an extreme.
fn mutate(rng: &mut Rng, bytes: &mut Vec<u8>) {
    match rng.below(6) {
        0 => {
            for _ in 0..1 + rng.below(8) {
                let i = rng.below(bytes.len());
                bytes[i] ^= 1 << rng.below(8);
            }
        }
        1 => {
            let i = rng.below(bytes.len());
            bytes[i] = [0, 0xff, b'"', b'9', b'-', b'e'][rng.below(6)];
        }
        2 => bytes.truncate(rng.below(bytes.len())),
        3 => {
            let i = rng.below(bytes.len());
            let n = 1 + rng.below(64);
            let run: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
            bytes.splice(i..i, run);
        }
        4 => {
            let i = rng.below(bytes.len());
            let j = (i + 1 + rng.below(32)).min(bytes.len());
            let part = bytes[i..j].to_vec();
            bytes.splice(i..i, part);
        }
        _ => {
            let i = rng.below(bytes.len().saturating_sub(8));
            let w = [
                u64::MAX,
                1 << 63,
                0,
                0x7ff0_0000_0000_0000,
                0x7fc0_0000_7fc0_0000,
            ][rng.below(5)];
            let end = (i + 8).min(bytes.len());
            bytes[i..end].copy_from_slice(&w.to_le_bytes()[..end - i]);
        }
    }
}

#[test]
fn randomly_damaged_checkpoints_and_systems_never_panic_or_hang() {
    let d = scratch!("fuzz");
    let run = d.join("run");
    let sys = d.join("sys");
    ok(&eddy(&[
        "run",
        "floating_bodies",
        "--resolution",
        "8",
        "--frames",
        "2",
        "--out",
        run.to_str().unwrap(),
        "--checkpoint-every",
        "2",
        "--export-system",
        sys.to_str().unwrap(),
    ]));
    let good = std::fs::read(run.join("checkpoint_00002.eddy")).unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let budget = Duration::from_secs(20);
    let start = Instant::now();
    let mut cases = 0;
    let name = Path::new("checkpoint_00002.eddy");
    while start.elapsed() < budget && cases < 3000 {
        let mut b = good.clone();
        for _ in 0..1 + rng.below(3) {
            mutate(&mut rng, &mut b);
        }
        // Half of them with the checksum made good, so the damage reaches the parser.
        if rng.below(2) == 0 && b.len() > 4 {
            let n = b.len() - 4;
            let crc = crc32fast::hash(&b[..n]);
            b[n..].copy_from_slice(&crc.to_le_bytes());
        }
        let r = std::panic::catch_unwind(|| checkpoint::decode(&b, name).map(|_| ()));
        assert!(r.is_ok(), "case {cases}: decode panicked");
        cases += 1;
    }
    assert!(cases >= 100, "only {cases} checkpoint cases in {budget:?}");

    // The system folder: system.json's text damaged (its checksum set anew for half), and
    // the raw arrays cut or grown.
    let json = std::fs::read(sys.join("system.json")).unwrap();
    let target = d.join("sys-bad");
    let start = Instant::now();
    let mut sys_cases = 0;
    while start.elapsed() < budget && sys_cases < 400 {
        let _ = std::fs::remove_dir_all(&target);
        std::fs::create_dir_all(&target).unwrap();
        for e in std::fs::read_dir(&sys).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), target.join(e.file_name())).unwrap();
        }
        let mut j = json.clone();
        mutate(&mut rng, &mut j);
        if rng.below(2) == 0 {
            if let Ok(mut v) = serde_json::from_slice::<serde_json::Value>(&j) {
                if v.is_object() {
                    v["crc32"] = eddy::output::frozen::json_crc(&v).into();
                    j = serde_json::to_vec(&v).unwrap();
                }
            }
        }
        std::fs::write(target.join("system.json"), &j).unwrap();
        if rng.below(4) == 0 {
            let raw = ["A.f32x4", "b.f32", "cell_type.u32", "cover.u32"][rng.below(4)];
            let mut r = std::fs::read(target.join(raw)).unwrap_or_default();
            if !r.is_empty() {
                mutate(&mut rng, &mut r);
                std::fs::write(target.join(raw), &r).unwrap();
            }
        }
        let r = std::panic::catch_unwind(|| eddy::output::frozen::load_frozen_system(&target));
        match r {
            Ok(Ok(s)) => assert!(s.check().is_ok()),
            Ok(Err(e)) => assert!(!e.contains('\n'), "case {sys_cases}: {e}"),
            Err(_) => panic!("case {sys_cases}: load_frozen_system panicked"),
        }
        sys_cases += 1;
    }
    assert!(
        sys_cases >= 50,
        "only {sys_cases} system cases in {budget:?}"
    );
    eprintln!("{cases} damaged checkpoints, {sys_cases} damaged system folders: no panic");
}
